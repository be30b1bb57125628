"""Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`).

Built from openai/codex (source read, not copied):
- codex-rs/protocol/src/protocol.rs @ edb4efee49ae9f130636fab25f2e398a931dd987: `RolloutLine`
  (`timestamp` + a flattened `RolloutItem`, tagged `type`/`payload`: `session_meta`,
  `response_item`, `compacted`, `turn_context`, `event_msg`); `CompactedItem {message,
  replacement_history}`; `SessionMeta.instructions`; `TurnContextItem.model / user_instructions
  / developer_instructions`; the `<user_instructions>` / `<environment_context>` tags.
- codex-rs/protocol/src/models.rs @ 152e7caecdc1050f186f3ec768ec5fb2cfa04923: `ResponseItem`
  (`message` with `input_text`/`output_text` parts, `function_call`, `function_call_output`,
  `custom_tool_call(_output)`, `local_shell_call`, `reasoning`), and the later `compaction`
  item (`encrypted_content` only, alias `compaction_summary`) of remote compaction.
- codex-rs/core/src/compact.rs @ e06dd0e5d5694c24968bf49b62466cdedae04aaa and
  codex-rs/core/templates/compact/summary_prefix.md @ 928a707f6a5ed63d89f1575f794aa7135be2f5c9:
  the replacement history is the kept user messages, then the summary as a *user* message that
  starts with SUMMARY_PREFIX, and the initial context (AGENTS.md, environment) is re-injected
  before the last user message or by the next turn.
- AGENTS.md reaches the model as a user message "# AGENTS.md instructions for DIR" wrapping
  `<INSTRUCTIONS>…</INSTRUCTIONS>` (older builds: `<user_instructions>…</user_instructions>`).

After a manual or pre-turn compaction the replacement history does not hold the initial context
(AGENTS.md, environment): Codex injects it again at the start of the next turn, logged as the
records right after `compacted`; those messages are part of the context after (metadata
`reinjected_next_turn`: how many).

The context before a compaction is the history since the session start (or since the previous
compaction's replacement history); the summary turn's own assistant answer, which Codex logs
just before the `compacted` record, is not part of it. A compaction whose replacement holds
only `encrypted_content` is kept as an `encrypted_compaction` message: the engine counts it as
unauditable.
"""

from __future__ import annotations

import re
from typing import Any

from ctxaudit.engine.transcripts.jsonutil import call_text, load_jsonl, parse_time, string, text_of
from ctxaudit.engine.transcripts.sniff import jsonl_head
from ctxaudit.engine.transcripts.types import Compaction, Instruction, Reader, Transcript
from ctxaudit.engine.types import Context, Message

FORMAT = "codex"
SUMMARY_PREFIX = "You are resuming an in-progress task after context compaction."
_ROLLOUT_TYPES = frozenset({"session_meta", "response_item", "compacted", "turn_context", "event_msg"})
_AGENTS = re.compile(r"^# AGENTS\.md instructions for (?P<dir>[^\n]*)\n+(?P<body>.*)$", re.S)
_INSTRUCTIONS = re.compile(r"<INSTRUCTIONS>\n?(?P<body>.*?)\n?</INSTRUCTIONS>", re.S)
_USER_INSTRUCTIONS = re.compile(r"^<user_instructions>\n?(?P<body>.*?)\n?</user_instructions>\s*$", re.S)
_CONTEXT_TAGS = ("<environment_context>", "<turn_aborted>", "<permissions", "<model_switch>")
ENCRYPTED = "[encrypted compaction: content not auditable]"


def _instruction_of(text: str) -> Instruction | None:
    m = _AGENTS.match(text.strip())
    if m:
        inner = _INSTRUCTIONS.search(m.group("body"))
        body = inner.group("body") if inner else m.group("body")
        folder = m.group("dir").strip().rstrip("/")
        return Instruction(source=f"{folder}/AGENTS.md" if folder else "AGENTS.md", text=body.strip())
    m = _USER_INSTRUCTIONS.match(text.strip())
    if m:
        return Instruction(source="AGENTS.md", text=m.group("body").strip())
    return None


def _is_summary(text: str, summary: str | None) -> bool:
    t = text.lstrip()
    return t.startswith(SUMMARY_PREFIX) or bool(summary and summary.strip() and t.strip() == summary.strip())


def _messages(item: dict[str, Any], *, summary: str | None = None, kept: bool = False) -> list[Message]:
    """One ResponseItem → Messages. `summary`: the compacted record's message (marks the summary
    in a replacement history); `kept`: the item is in a replacement history (real user messages
    there are preserved)."""
    kind = item.get("type")
    if kind == "message":
        given = string(item.get("role"))
        role = given if given in ("user", "assistant", "developer", "system") else "user"
        out: list[Message] = []
        for part in item.get("content") or []:
            text = text_of(part)
            if not text.strip():
                continue
            if role == "user" and _is_summary(text, summary):
                out.append(Message(role="user", content=text, kind="compact_summary"))
            elif role == "user" and _instruction_of(text):
                out.append(Message(role="user", content=text, kind="instructions"))
            elif role == "user" and text.lstrip().startswith(_CONTEXT_TAGS):
                out.append(Message(role="user", content=text, kind="environment"))
            else:
                out.append(
                    Message(role=role, content=text, kind="preserved" if kept and role == "user" else None)
                )
        return out
    if kind in ("function_call", "custom_tool_call"):
        args = item.get("arguments", item.get("input", ""))
        return [Message(role="assistant", content=call_text(item.get("name"), args))]
    if kind == "local_shell_call":
        action = item.get("action") or {}
        return [Message(role="assistant", content=call_text("local_shell", action.get("command", action)))]
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        if isinstance(output, dict):
            output = output.get("content", "")
        text = output if isinstance(output, str) else text_of(output)
        return [Message(role="tool", content=text, name=item.get("call_id"))] if text else []
    if kind in ("compaction", "compaction_summary"):
        return [Message(role="system", content=ENCRYPTED, kind="encrypted_compaction")]
    return []  # reasoning (often encrypted), ghost snapshots, web searches: not context text


def _drop_summary_turn(history: list[Message], summary: str) -> list[Message]:
    """The compaction turn's answer (the summary, logged as an assistant message before the
    `compacted` record) was generated from the context, not seen in it."""
    body = summary.split("\n", 1)[1].strip() if summary.startswith(SUMMARY_PREFIX) and "\n" in summary else ""
    while history and history[-1].role == "assistant" and body and history[-1].content.strip() == body:
        history = history[:-1]
    return history


def sniff(name: str, text: str) -> bool:
    """Rollout lines: `{"timestamp", "type": <RolloutItem tag>, "payload": {...}}`."""
    return any(
        e.get("type") in _ROLLOUT_TYPES and isinstance(e.get("payload"), dict) for e in jsonl_head(text)
    )


def parse(text: str, *, name: str) -> Transcript:
    """Parse one Codex rollout file.

    Returns a Transcript with one Compaction per `compacted` record (before: the history the
    model held; after: the replacement history, the summary `compact_summary`, kept user
    messages `preserved`, AGENTS.md messages `instructions`; without a replacement history, the
    summary alone) and the instruction files seen (AGENTS.md, user and developer instructions).
    Raises TranscriptError naming a line that is not a JSON object.
    """
    session_id: str | None = None
    model: str | None = None
    history: list[Message] = []
    instructions: dict[str, Instruction] = {}
    compactions: list[Compaction] = []
    notes: list[str] = []

    def found(ins: Instruction | None) -> None:
        if ins and ins.text and ins.source not in instructions:
            instructions[ins.source] = ins

    # The compaction last read, while the records after it may still be the initial context
    # Codex injects again at the start of the next turn (after a manual or pre-turn compaction
    # the replacement history does not hold it: compact.rs InitialContextInjection::DoNotInject).
    pending: dict[str, Any] | None = None

    def settle() -> None:
        nonlocal pending
        if pending is not None:
            compactions.append(Compaction(**pending, after=Context(messages=tuple(pending_after))))
            pending = None

    pending_after: list[Message] = []
    for line, rec in load_jsonl(text, name):
        kind, payload = rec.get("type"), rec.get("payload")
        if not isinstance(payload, dict):
            continue
        if pending is not None and kind == "response_item":
            items = _messages(payload)
            # the initial context: developer messages (permissions, developer instructions),
            # AGENTS.md, the environment
            if items and all(
                m.kind in ("instructions", "environment") or m.role == "developer" for m in items
            ):
                held = {m.content for m in pending_after}
                new = [m for m in items if m.content not in held]
                pending_after.extend(new)
                pending["metadata"]["reinjected_next_turn"] = pending["metadata"].get(
                    "reinjected_next_turn", 0
                ) + len(new)
            elif items:
                settle()
        if kind == "session_meta":
            session_id = session_id or (payload.get("id") if isinstance(payload.get("id"), str) else None)
            if isinstance(payload.get("instructions"), str):
                found(
                    _instruction_of(payload["instructions"])
                    or Instruction("AGENTS.md", payload["instructions"].strip())
                )
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                model = payload["model"]
            if isinstance(payload.get("user_instructions"), str):
                found(Instruction("AGENTS.md", payload["user_instructions"].strip()))
            if isinstance(payload.get("developer_instructions"), str):
                found(Instruction("developer_instructions", payload["developer_instructions"].strip()))
        elif kind == "response_item":
            for m in _messages(payload):
                if m.kind == "instructions":
                    found(_instruction_of(m.content))
                history.append(m)
        elif kind == "compacted":
            settle()
            summary = string(payload.get("message"))
            replacement = payload.get("replacement_history")
            metadata: dict[str, Any] = {"source_format": FORMAT, "source_line": line}
            if isinstance(replacement, list):
                after = [
                    m
                    for item in replacement
                    if isinstance(item, dict)
                    for m in _messages(item, summary=summary, kept=True)
                ]
            else:
                # Older builds logged no replacement: on resume they rebuild it as the compaction
                # did (compact.rs build_compacted_history): the initial context, the real user
                # messages, then the summary. Their 20k-token cap on user messages is not applied.
                context = [m for m in history if m.kind in ("instructions", "environment")]
                users = [
                    Message(role="user", content=m.content, kind="preserved")
                    for m in history
                    if m.role == "user" and m.kind in (None, "preserved")
                ]
                tail = (
                    [Message(role="user", content=summary, kind="compact_summary")] if summary.strip() else []
                )
                after = context + users + tail
                metadata["replacement_history_missing"] = True
            if any(m.kind == "encrypted_compaction" for m in after):
                metadata["remote_compaction"] = True
            if not any(m.kind in ("compact_summary", "encrypted_compaction") for m in after):
                metadata["summary_missing"] = True
            pending = {
                "index": len(compactions),
                "before": Context(messages=tuple(_drop_summary_turn(history, summary))),
                "line": line,
                "occurred_at": parse_time(rec.get("timestamp")),
                "model": model,
                "metadata": metadata,
            }
            pending_after = list(after)
            history = list(after)
    settle()
    encrypted = sum(1 for c in compactions if c.metadata.get("remote_compaction"))
    if encrypted:
        notes.append(f"{encrypted} remote compaction(s) hold only encrypted_content: unauditable")
    return Transcript(
        format=FORMAT,
        session_id=session_id,
        compactions=tuple(compactions),
        instructions=tuple(instructions.values()),
        notes=tuple(notes),
    )


READER = Reader(
    name=FORMAT,
    label="Codex CLI rollout files (~/.codex/sessions/**/rollout-*.jsonl)",
    extensions=(".jsonl",),
    sniff=sniff,
    parse=parse,
    # Codex re-injects its initial context (AGENTS.md included) after a compaction
    # (codex-rs/core/src/compact.rs, InitialContextInjection).
    reloads=("AGENTS.md",),
)
