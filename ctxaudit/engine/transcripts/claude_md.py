"""Claude Code sessions exported to Markdown by claude-chat-manager ("book" export).

The exporter writes each user message as `---`, a blank line, `👤 **USER:**`, then `> ` and the
message text (continuation lines carry no `>`), and each assistant message as plain text after
it; tool calls and results are left out, and there is no system prompt. So a turn is a user
message followed by the assistant's text, and the user's text ends at the first blank line
(unless a code fence or an IDE tag such as `<ide_selection>` is still open, or the next
paragraph reads as pasted terminal output). That split is a heuristic: the export does not mark
where a user's multi-paragraph message ends.

A compaction shows as a user turn whose text begins "This session is being continued from a
previous conversation…" and ends with the line "Please continue the conversation from where we
left it off…"; the text after that line, in the same turn, is the assistant resuming work.
`👤 **USER:**` inside fenced code (the exporter's own source, quoted in the chat) is not a turn.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from ctxaudit.engine.transcripts.types import Compaction, Reader, Transcript, TranscriptError
from ctxaudit.engine.types import Context, Message

FORMAT = "claude-md"
USER_MARKER = "👤 **USER:**"
SUMMARY_PREFIX = "This session is being continued from a previous conversation"
SUMMARY_END = "Please continue the conversation from where we left it off"

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_GENERATED = re.compile(r"^\*\*Generated:\s*(\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d)?)\*\*\s*$")
# Tags Claude Code wraps around context it adds to a user prompt; the prompt follows the tag.
# A paragraph that reads as pasted terminal output continues the user's text past a blank line.
_PASTED = re.compile(
    r"^(\s+\S|\s*\d+\)\s|\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\(venv\)|\$ |>>> |Traceback |  File \"|Enter choice|Choose an option)"
)
_OPEN_TAG = re.compile(
    r"<(ide_selection|ide_opened_file|system-reminder|command-[a-z-]+|local-command-stdout)>"
)


def _turn_starts(lines: list[str], name: str) -> list[int]:
    """0-based indexes of the user-marker lines that start a turn (outside fenced code)."""
    starts: list[int] = []
    fence: str | None = None
    fence_line = 0
    swallowed = False
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence, fence_line, swallowed = mark[0] * 3, i, False
            elif mark.startswith(fence):
                fence = None
            continue
        if line.rstrip() == USER_MARKER:
            if fence is None:
                starts.append(i)
            else:
                swallowed = True
    if fence is not None and swallowed:
        raise TranscriptError(
            name, fence_line + 1, "code fence opened here is never closed, and user turns follow inside it"
        )
    return starts


def _strip_quote(line: str) -> str:
    if line.startswith("> "):
        return line[2:]
    if line.rstrip() == ">":
        return ""
    return line


def _split_turn(body: list[str]) -> tuple[str, str]:
    """A turn's lines (after the marker) → (user text, assistant text)."""
    # The separator the exporter writes before the next turn is not the assistant's.
    while body and body[-1].strip() in ("", "---"):
        body = body[:-1]
    if not body:
        return "", ""
    first = _strip_quote(body[0])
    if first.lstrip().startswith(SUMMARY_PREFIX):
        for j, line in enumerate(body):
            if _strip_quote(line).lstrip().startswith(SUMMARY_END):
                return "\n".join(_strip_quote(x) for x in body[: j + 1]).strip(), "\n".join(
                    body[j + 1 :]
                ).strip()
        return "\n".join(_strip_quote(x) for x in body).strip(), ""
    user: list[str] = []
    fence: str | None = None
    open_tags: set[str] = set()
    j = 0
    while j < len(body):
        line = _strip_quote(body[j]) if j == 0 or body[j].startswith("> ") else body[j]
        if not line.strip() and fence is None and not open_tags:
            # A blank line ends the user's text, unless an IDE tag just closed: the prompt follows it.
            prev = user[-1].rstrip() if user else ""
            nxt = next((x for x in body[j + 1 :] if x.strip()), "")
            tag_closed = re.search(r"</(ide_selection|ide_opened_file|system-reminder)>$", prev)
            if not (tag_closed or _PASTED.match(nxt)):
                break
        m = _FENCE.match(line)
        if m:
            fence = None if fence and m.group(1).startswith(fence) else (fence or m.group(1)[0] * 3)
        for tag in _OPEN_TAG.findall(line):
            open_tags.add(tag)
        for tag in list(open_tags):
            if f"</{tag}>" in line:
                open_tags.discard(tag)
        user.append(line)
        j += 1
    return "\n".join(user).strip(), "\n".join(body[j:]).strip()


def parse(text: str, *, name: str) -> Transcript:
    """Parse one claude-chat-manager Markdown export.

    text: the file's content; name: its path (errors name it; its stem is the session id, as the
    export carries none). Returns a Transcript with one Compaction per summary turn, in file
    order: before = the messages since the previous compaction (its summary first), after = the
    summary alone (this export keeps no preserved messages). `Transcript.occurred_at` is the
    export's "Generated:" time (read as UTC; the exporter writes local time), the compactions
    have none. Raises TranscriptError when the file holds no user turn or an unclosed code
    fence hides turns.
    """
    lines = text.splitlines()
    starts = _turn_starts(lines, name)
    if not starts:
        raise TranscriptError(name, None, f"no {USER_MARKER!r} turn found: not a claude-chat-manager export")
    generated = None
    for line in lines[: starts[0]]:
        m = _GENERATED.match(line.strip())
        if m:
            generated = datetime.fromisoformat(m.group(1).replace(" ", "T")).replace(tzinfo=UTC)
    context: list[Message] = []
    compactions: list[Compaction] = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        user, assistant = _split_turn(lines[start + 1 : end])
        if user.startswith(SUMMARY_PREFIX):
            summary = Message(role="user", content=user, kind="compact_summary")
            compactions.append(
                Compaction(
                    index=len(compactions),
                    before=Context(messages=tuple(context)),
                    after=Context(messages=(summary,)),
                    line=start + 1,
                    metadata={"source_format": FORMAT, "source_line": start + 1},
                )
            )
            context = [summary]
        elif user:
            context.append(Message(role="user", content=user))
        if assistant:
            context.append(Message(role="assistant", content=assistant))
    return Transcript(
        format=FORMAT, session_id=Path(name).stem, compactions=tuple(compactions), occurred_at=generated
    )


def sniff(name: str, text: str) -> bool:
    """A claude-chat-manager export holds its user marker (a README.md does not)."""
    return USER_MARKER in text


READER = Reader(
    name=FORMAT,
    label="Claude Code sessions exported to Markdown by claude-chat-manager (.md)",
    extensions=(".md", ".markdown"),
    sniff=sniff,
    parse=parse,
    reloads=("CLAUDE.md", "CLAUDE.local.md"),
)
