"""Claude Code session logs (`~/.claude/projects/<project>/<sessionId>.jsonl`).

One JSON object a line. Messages (`type` "user"/"assistant", Anthropic content blocks in
`message.content`) carry `uuid` and `parentUuid`; a rewind ("redo from here") starts a second
child under an earlier parent, so the log is a tree, and the branch the model saw is the one
that ends at the last message written. A compaction writes a `{"type": "system", "subtype":
"compact_boundary"}` entry with `parentUuid: null` and `logicalParentUuid` pointing at the last
message before it, then a user entry with `isCompactSummary: true` (the summary the model sees).
`compactMetadata.preservedSegment` / `preservedMessages.uuids` name messages kept verbatim
across the boundary: they are part of the context after it (and of the one before).
Older logs have no boundary entry: the summary entry itself has `parentUuid: null`.

Assistant turns are often logged one content block per entry, all with the same `message.id`:
consecutive entries with one id become one Message. `thinking` blocks are dropped (formats.py),
tool_use becomes "[tool call name(args)]" text, tool_result a role "tool" message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ctxaudit.engine.formats import ContextFormatError, parse_context
from ctxaudit.engine.transcripts.jsonutil import load_jsonl
from ctxaudit.engine.transcripts.sniff import jsonl_head
from ctxaudit.engine.transcripts.types import Compaction, Reader, Transcript, TranscriptError
from ctxaudit.engine.types import Context, Message

FORMAT = "claude-jsonl"
_ENTRY_TYPES = frozenset({"user", "assistant", "system", "summary"})
SUMMARY_PREFIX = "This session is being continued from a previous conversation"


@dataclass(slots=True)
class _Entry:
    line: int
    data: dict[str, Any]

    @property
    def uuid(self) -> str | None:
        u = self.data.get("uuid")
        return u if isinstance(u, str) else None

    @property
    def parent(self) -> str | None:
        p = self.data.get("parentUuid")
        return p if isinstance(p, str) else None

    @property
    def is_message(self) -> bool:
        return self.data.get("type") in ("user", "assistant") and isinstance(self.data.get("message"), dict)

    @property
    def is_boundary(self) -> bool:
        return self.data.get("type") == "system" and self.data.get("subtype") == "compact_boundary"

    @property
    def is_summary(self) -> bool:
        if not self.is_message or self.data.get("type") != "user":
            return False
        if self.data.get("isCompactSummary") is True:
            return True
        return _entry_text(self).lstrip().startswith(SUMMARY_PREFIX)


@dataclass(slots=True)
class _Segment:
    """The messages after one compaction (or from the start), oldest first."""

    start: _Entry | None  # the compact_boundary entry (or an orphan summary); None: session start
    entries: list[_Entry] = field(default_factory=list)
    fallback: bool = False  # part of the chain was rebuilt from file order (links missing)


def _entry_text(e: _Entry) -> str:
    content = e.data["message"].get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def _preserved(boundary: _Entry) -> tuple[list[str], set[str]]:
    """(preservedMessages.uuids in order, every uuid named as preserved incl. segment head/tail)."""
    meta = boundary.data.get("compactMetadata") or {}
    if not isinstance(meta, dict):
        return [], set()
    ordered: list[str] = []
    pm = meta.get("preservedMessages")
    if isinstance(pm, dict) and isinstance(pm.get("uuids"), list):
        ordered = [u for u in pm["uuids"] if isinstance(u, str)]
    named = set(ordered)
    seg = meta.get("preservedSegment")
    if isinstance(seg, dict):
        named |= {u for u in (seg.get("headUuid"), seg.get("tailUuid")) if isinstance(u, str)}
    return ordered, named


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else None


def _load(text: str, name: str) -> list[_Entry]:
    entries = []
    for n, data in load_jsonl(text, name):
        if (
            data.get("type") in ("user", "assistant")
            and "message" in data
            and not isinstance(data["message"], dict)
        ):
            raise TranscriptError(name, n, "message must be an object")
        entries.append(_Entry(n, data))
    return entries


class _Log:
    def __init__(self, entries: list[_Entry]) -> None:
        self.entries = entries
        self.by_uuid: dict[str, _Entry] = {}
        for e in entries:
            if e.uuid:
                self.by_uuid[e.uuid] = e  # a uuid written twice: the later entry wins

    def leaf(self) -> _Entry | None:
        for e in reversed(self.entries):
            if e.is_message and e.uuid and not e.data.get("isSidechain"):
                return e
        return None

    def previous_in_file(self, line: int, exclude: set[str]) -> str | None:
        """The last main-chain message written before `line` (used where links are missing)."""
        for e in reversed(self.entries):
            if (
                e.line < line
                and e.is_message
                and e.uuid
                and e.uuid not in exclude
                and not e.data.get("isSidechain")
            ):
                return e.uuid
        return None

    def walk(self) -> list[_Segment]:
        """The branch the model saw, split at compactions, oldest segment first."""
        leaf = self.leaf()
        if leaf is None:
            return [_Segment(start=None)]
        segments: list[_Segment] = []
        current = _Segment(start=None)
        later: set[str] = set()  # uuids already placed in later segments
        visited: set[str] = set()
        override: dict[str, str] = {}
        preserved: set[str] = set()
        cur: str | None = leaf.uuid
        while cur is not None:
            e = self.by_uuid.get(cur)
            if e is None or cur in visited:
                break
            visited.add(cur)
            orphan_summary = e.is_summary and e.parent is None
            if e.is_boundary or orphan_summary:
                if orphan_summary:
                    current.entries.append(e)
                current.start = e
                current.entries.reverse()
                segments.append(current)
                current = _Segment(start=None)
                later |= visited
                visited = set()
                p, preserved = _preserved(e) if e.is_boundary else ([], set())
                # The preserved messages' own order stands for their (possibly relinked) parents.
                override = {p[i]: p[i - 1] for i in range(1, len(p))}
                logical = e.data.get("logicalParentUuid") if e.is_boundary else None
                if isinstance(logical, str) and logical in self.by_uuid:
                    cur = logical
                else:
                    current.fallback = True
                    cur = self.previous_in_file(e.line, exclude=later - preserved)
                continue
            current.entries.append(e)
            parent = override.get(cur, e.parent)
            if parent is not None and parent in later and parent not in preserved:
                # A preserved message relinked under the summary: its old parent is not
                # recorded, so continue from what was written before it in the file.
                current.fallback = True
                parent = self.previous_in_file(e.line, exclude=later | visited)
            cur = parent
        current.entries.reverse()
        segments.append(current)
        segments.reverse()
        return segments


def _messages(entries: list[_Entry], name: str, *, kinds: dict[str, str] | None = None) -> list[Message]:
    """Entries → Messages; consecutive assistant entries of one API message become one."""
    kinds = kinds or {}
    groups: list[tuple[_Entry, list[Any]]] = []
    last_id: str | None = None
    for e in entries:
        if not e.is_message:
            continue
        msg = e.data["message"]
        content = msg.get("content", "")
        blocks = (
            content
            if isinstance(content, list)
            else [{"type": "text", "text": content}]
            if isinstance(content, str)
            else content
        )
        mid = msg.get("id") if e.data.get("type") == "assistant" else None
        if mid and mid == last_id and groups and isinstance(blocks, list):
            groups[-1][1].extend(blocks)
            continue
        last_id = mid if isinstance(mid, str) else None
        groups.append((e, list(blocks) if isinstance(blocks, list) else blocks))
    out: list[Message] = []
    for e, blocks in groups:
        role = e.data["message"].get("role") or e.data.get("type")
        try:
            ctx = parse_context(
                {"messages": [{"role": role, "content": blocks}]}, format="anthropic", field="message"
            )
        except ContextFormatError as exc:
            raise TranscriptError(name, e.line, str(exc)) from exc
        kind = kinds.get(e.uuid or "") or ("compact_summary" if e.is_summary else None)
        for m in ctx.messages:
            out.append(
                Message(
                    role=m.role, content=m.content, name=m.name, kind=kind if m.role != "tool" else m.kind
                )
            )
    return out


def _split_segment(
    seg: _Segment, preserved_uuids: list[str], log: _Log
) -> tuple[list[_Entry], list[_Entry], list[_Entry]]:
    """(summary entries, preserved entries, the rest) of a segment that starts at a compaction."""
    summary = [e for e in seg.entries if e.is_summary][:1]
    preserved = [log.by_uuid[u] for u in preserved_uuids if u in log.by_uuid and log.by_uuid[u].is_message]
    skip = {id(e) for e in summary} | set(preserved_uuids)
    rest = [e for e in seg.entries if id(e) not in skip and e.uuid not in skip]
    return summary, preserved, rest


def _preserved_chain(boundary: _Entry, before: list[_Entry]) -> list[str]:
    """The preserved uuids in order: preservedMessages.uuids, else head..tail of the before chain."""
    meta = boundary.data.get("compactMetadata") or {}
    pm = meta.get("preservedMessages") if isinstance(meta, dict) else None
    if isinstance(pm, dict) and isinstance(pm.get("uuids"), list):
        return [u for u in pm["uuids"] if isinstance(u, str)]
    seg = meta.get("preservedSegment") if isinstance(meta, dict) else None
    if isinstance(seg, dict):
        uuids = [e.uuid for e in before if e.uuid]
        head, tail = seg.get("headUuid"), seg.get("tailUuid")
        if head in uuids and tail in uuids and uuids.index(head) <= uuids.index(tail):
            return [u for u in uuids[uuids.index(head) : uuids.index(tail) + 1] if u]
    return []


def _model(entries: list[_Entry]) -> str | None:
    for e in reversed(entries):
        if e.data.get("type") == "assistant":
            model = e.data["message"].get("model")
            if isinstance(model, str) and model and not model.startswith("<"):
                return model
    return None


def parse(text: str, *, name: str) -> Transcript:
    """Parse one Claude Code session log.

    text: the file's content; name: its path (for errors; its stem is the fallback session id).
    Returns a Transcript with one Compaction per compaction on the branch the model saw (a
    compaction on an abandoned branch is not in it). Raises TranscriptError with the 1-based
    line of a line that is not a JSON object or holds unreadable content blocks.
    """
    entries = _load(text, name)
    log = _Log(entries)
    session_id = next(
        (
            e.data["sessionId"]
            for e in entries
            if isinstance(e.data.get("sessionId"), str) and e.data["sessionId"]
        ),
        None,
    )
    segments = log.walk()

    # The context after each compaction: summary, then preserved messages, then the rest.
    contexts: list[list[Message]] = []
    afters: list[list[Message]] = []
    for i, seg in enumerate(segments):
        if seg.start is None:
            contexts.append(_messages(seg.entries, name))
            afters.append([])
            continue
        boundary = seg.start
        pres_uuids = _preserved_chain(boundary, segments[i - 1].entries) if boundary.is_boundary else []
        summary, preserved, rest = _split_segment(seg, pres_uuids, log)
        after = _messages(
            summary, name, kinds={e.uuid or "": "compact_summary" for e in summary}
        ) + _messages(preserved, name, kinds=dict.fromkeys(pres_uuids, "preserved"))
        afters.append(after)
        contexts.append(after + _messages(rest, name))

    compactions = []
    for i in range(1, len(segments)):
        seg, prev = segments[i], segments[i - 1]
        start = seg.start
        assert start is not None
        raw_meta = start.data.get("compactMetadata")
        meta_in: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        metadata: dict[str, Any] = {"source_format": FORMAT, "source_line": start.line}
        if start.uuid:
            metadata["boundary_uuid"] = start.uuid
        for key in ("trigger", "preTokens"):
            if key in meta_in:
                metadata[key] = meta_in[key]
        if not [m for m in afters[i] if m.kind == "compact_summary"]:
            metadata["summary_missing"] = True
        if seg.fallback or prev.fallback:
            metadata["rebuilt_from_file_order"] = True
        compactions.append(
            Compaction(
                index=i - 1,
                before=Context(messages=tuple(contexts[i - 1])),
                after=Context(messages=tuple(afters[i])),
                line=start.line,
                occurred_at=_parse_time(start.data.get("timestamp")),
                model=_model(prev.entries),
                metadata=metadata,
            )
        )
    return Transcript(format=FORMAT, session_id=session_id or Path(name).stem, compactions=tuple(compactions))


def sniff(name: str, text: str) -> bool:
    """Claude Code entries: JSON lines typed user/assistant/system/summary, without the
    `payload` envelope of Codex rollouts."""
    head = jsonl_head(text)
    return any(e.get("type") in _ENTRY_TYPES and "payload" not in e for e in head)


# Claude Code reads CLAUDE.md into every context it builds, so after a compaction too
# (https://docs.anthropic.com/en/docs/claude-code/memory).
READER = Reader(
    name=FORMAT,
    label="Claude Code session logs (~/.claude/projects/*/<session>.jsonl)",
    extensions=(".jsonl",),
    sniff=sniff,
    parse=parse,
    reloads=("CLAUDE.md", "CLAUDE.local.md"),
)
