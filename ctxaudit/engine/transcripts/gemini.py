"""Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, older `.json`) and
saved chats (`checkpoint-<tag>.json`).

Built from google-gemini/gemini-cli @ 5411f113cafae26161b4969b0237b8e1e024e2c2 (read, not copied):
- packages/core/src/services/chatRecordingTypes.ts: the session file is JSONL: a metadata line
  (`sessionId`, `projectHash`, `startTime`, …), one `MessageRecord` a line (`id`, `timestamp`,
  `type` user | gemini | info | error | warning, `content` as Gemini `Part`s, `toolCalls`,
  `model`), `{"$rewindTo": id}` and `{"$set": {...}}` records.
- packages/core/src/services/chatRecordingService.ts: `updateMessagesFromHistory` writes the
  model's new history as `{"$set": {"messages": [...]}}`, a synthetic summary turn included;
  `rewindTo` drops the messages from an id on.
- packages/core/src/context/chatCompressionService.ts: compression replaces the history with a
  user turn holding the `<state_snapshot>` summary, the model's "Got it. Thanks for the
  additional context!" and the recent turns kept.
- packages/core/src/core/logger.ts: `checkpoint-<tag>.json` is `{"history": Content[]}` (older:
  a bare `Content[]`), each `{role: user | model, parts}`.
- packages/core/src/utils/memoryDiscovery.ts: GEMINI.md files reach the model as
  "--- Context from: <path> ---" … "--- End of Context from: <path> ---" blocks;
  packages/core/src/utils/environmentContext.ts: the session-context turn holding them keeps its
  id across a compression (it stays `instructions` in the context after, not `preserved`).

A compaction is a `$set` of messages that brings in a `<state_snapshot>` turn the session did
not hold: before = the messages held until then, after = the new list (snapshot
`compact_summary`, turns kept `preserved`). A saved chat or a `.json` record holds one state
only: a snapshot there has no before-context in the file, and the reader says so.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ctxaudit.engine.transcripts.jsonutil import call_text, load_json, load_jsonl, parse_time
from ctxaudit.engine.transcripts.sniff import jsonl_head, whole_json
from ctxaudit.engine.transcripts.types import Compaction, Instruction, Reader, Transcript
from ctxaudit.engine.types import Context, Message

FORMAT = "gemini"
SNAPSHOT = "<state_snapshot>"
_CONTEXT_FROM = re.compile(
    r"--- Context from: (?P<path>.+?) ---\n(?P<body>.*?)\n--- End of Context from: (?P=path) ---", re.S
)


def _is_content(c: Any) -> bool:
    return isinstance(c, dict) and c.get("role") in ("user", "model") and isinstance(c.get("parts"), list)


def _checkpoint(data: Any) -> list[Any] | None:
    history = data.get("history") if isinstance(data, dict) else data
    if isinstance(history, list) and history and all(_is_content(c) for c in history):
        return history
    return None


def sniff(name: str, text: str) -> bool:
    """A session's metadata/`$set` records or `gemini` messages, or a saved chat's Content[]."""
    data = whole_json(text)
    if isinstance(data, dict) and "projectHash" in data and isinstance(data.get("messages"), list):
        return True
    if data is not None:
        return _checkpoint(data) is not None
    return any(
        "projectHash" in e or "$set" in e or "$rewindTo" in e or e.get("type") == "gemini"
        for e in jsonl_head(text)
    )


def _parts_text(parts: Any) -> list[tuple[str, str]]:
    """Gemini parts → [(role hint, text)]: text parts "text", function calls "call",
    function responses "result"."""
    if isinstance(parts, str):
        return [("text", parts)]
    if isinstance(parts, dict):
        parts = [parts]
    out: list[tuple[str, str]] = []
    for p in parts if isinstance(parts, list) else []:
        if isinstance(p, str):
            out.append(("text", p))
        elif isinstance(p, dict):
            if isinstance(p.get("text"), str) and not p.get("thought"):
                out.append(("text", p["text"]))
            elif isinstance(p.get("functionCall"), dict):
                fc = p["functionCall"]
                out.append(("call", call_text(fc.get("name"), fc.get("args", {}))))
            elif isinstance(p.get("functionResponse"), dict):
                fr = p["functionResponse"]
                out.append(
                    (
                        "result",
                        call_text(fr.get("name"), fr.get("response", {})).replace(
                            "[tool call ", "[tool result ", 1
                        ),
                    )
                )
    return out


def _to_messages(role: str, parts: Any) -> list[Message]:
    out: list[Message] = []
    texts = [t for hint, t in _parts_text(parts) if hint == "text" and t.strip()]
    calls = [t for hint, t in _parts_text(parts) if hint == "call"]
    results = [t for hint, t in _parts_text(parts) if hint == "result"]
    if texts or calls:
        body = "\n".join([*texts, *calls])
        kind = None
        if role == "user" and SNAPSHOT in body:
            kind = "compact_summary"
        elif role == "user" and _CONTEXT_FROM.search(body):
            kind = "instructions"
        out.append(Message(role=role, content=body, kind=kind))
    out.extend(Message(role="tool", content=r) for r in results)
    return out


def _record_messages(rec: dict[str, Any]) -> list[Message]:
    """A MessageRecord → Messages (info/error/warning records are shown to the user only)."""
    kind = rec.get("type")
    if kind == "user":
        return _to_messages("user", rec.get("content"))
    if kind == "gemini":
        out = _to_messages("assistant", rec.get("content"))
        for tc in rec.get("toolCalls") or []:
            if isinstance(tc, dict):
                out.append(Message(role="assistant", content=call_text(tc.get("name"), tc.get("args", {}))))
                if tc.get("result") is not None:
                    out.extend(
                        m if m.role == "tool" else Message(role="tool", content=m.content)
                        for m in _to_messages("user", tc["result"])
                    )
        return out
    return []


def _instructions(messages: list[Message]) -> list[Instruction]:
    out: dict[str, Instruction] = {}
    for m in messages:
        for hit in _CONTEXT_FROM.finditer(m.content):
            out.setdefault(hit.group("path"), Instruction(hit.group("path"), hit.group("body").strip()))
    return list(out.values())


def _flat(records: list[dict[str, Any]]) -> list[Message]:
    return [m for r in records for m in _record_messages(r)]


def parse(text: str, *, name: str) -> Transcript:
    """Parse a Gemini CLI session (JSONL or JSON) or a saved chat checkpoint.

    Returns one Compaction per `$set` that brings in a new `<state_snapshot>` turn, and the
    GEMINI.md files seen as instructions. Raises TranscriptError naming a bad line.
    """
    data = whole_json(text)
    if data is None and text.lstrip().startswith("["):
        data = load_json(text, name)
    notes: list[str] = []
    if data is not None:
        history = _checkpoint(data)
        if history is not None:
            msgs = [
                m
                for c in history
                for m in _to_messages("user" if c["role"] == "user" else "assistant", c.get("parts"))
            ]
        else:
            msgs = (
                _flat([r for r in data.get("messages") or [] if isinstance(r, dict)])
                if isinstance(data, dict)
                else []
            )
        if any(m.kind == "compact_summary" for m in msgs):
            notes.append(
                "a <state_snapshot> summary without the history before it (one saved state): not auditable from this file alone"
            )
        sid = (
            data.get("sessionId")
            if isinstance(data, dict) and isinstance(data.get("sessionId"), str)
            else None
        )
        return Transcript(
            format=FORMAT,
            session_id=sid or Path(name).stem,
            compactions=(),
            instructions=tuple(_instructions(msgs)),
            notes=tuple(notes),
        )

    session_id: str | None = None
    records: list[dict[str, Any]] = []
    compactions: list[Compaction] = []
    seen: list[Message] = []
    for line, rec in load_jsonl(text, name):
        if "$rewindTo" in rec:
            ids = [r.get("id") for r in records]
            records = records[: ids.index(rec["$rewindTo"])] if rec["$rewindTo"] in ids else []
            continue
        if "$set" in rec:
            update = rec["$set"] if isinstance(rec["$set"], dict) else {}
            session_id = session_id or (
                update.get("sessionId") if isinstance(update.get("sessionId"), str) else None
            )
            if not isinstance(update.get("messages"), list):
                continue
            new = [r for r in update["messages"] if isinstance(r, dict)]
            old_ids = {r.get("id") for r in records}
            fresh = [
                r
                for r in new
                if r.get("id") not in old_ids
                and any(m.kind == "compact_summary" for m in _record_messages(r))
            ]
            if fresh:
                after: list[Message] = []
                for r in new:
                    for m in _record_messages(r):
                        # the session-context turn keeps its id (utils/environmentContext.ts): it
                        # is GEMINI.md put back, not a turn the compression kept
                        kept = r.get("id") in old_ids and m.kind not in ("compact_summary", "instructions")
                        after.append(
                            Message(
                                role=m.role,
                                content=m.content,
                                name=m.name,
                                kind="preserved" if kept else m.kind,
                            )
                        )
                compactions.append(
                    Compaction(
                        index=len(compactions),
                        before=Context(messages=tuple(_flat(records))),
                        after=Context(messages=tuple(after)),
                        line=line,
                        occurred_at=parse_time(update.get("lastUpdated")),
                        model=next(
                            (r["model"] for r in reversed(records) if isinstance(r.get("model"), str)), None
                        ),
                        metadata={"source_format": FORMAT, "source_line": line},
                    )
                )
            records = new
            seen.extend(_flat(new))
            continue
        if "projectHash" in rec and "type" not in rec:
            session_id = session_id or (
                rec.get("sessionId") if isinstance(rec.get("sessionId"), str) else None
            )
            continue
        if isinstance(rec.get("id"), str):
            # A record written again under its id replaces it in place (the loader keys by id).
            ids = [r.get("id") for r in records]
            if rec["id"] in ids:
                records[ids.index(rec["id"])] = rec
            else:
                records.append(rec)
            seen.extend(_record_messages(rec))
    return Transcript(
        format=FORMAT,
        session_id=session_id or Path(name).stem,
        compactions=tuple(compactions),
        instructions=tuple(_instructions(seen)),
    )


READER = Reader(
    name=FORMAT,
    label="Gemini CLI sessions (~/.gemini/tmp/*/chats/session-*.jsonl) and saved chats (checkpoint-*.json)",
    extensions=(".jsonl", ".json"),
    sniff=sniff,
    parse=parse,
)
