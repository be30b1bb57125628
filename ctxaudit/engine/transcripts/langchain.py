"""LangChain / LangGraph message dumps: `messages_to_dict` lists, `dumpd` objects, graph state
values (`{"messages": [...]}`), thread states / checkpoints (`{"values": {"messages"}}`,
`{"channel_values": {"messages"}}`), and a state history (a list or JSONL of those).

Built from (read, not copied):
- langchain-ai/langchain libs/langchain_v1/langchain/agents/middleware/summarization.py @
  d13823043d84754f9136137ab71ef5569d792102: `SummarizationMiddleware.before_model` replaces the
  state's messages (`RemoveMessage(REMOVE_ALL_MESSAGES)`) with the summary message, a
  `HumanMessage` "Here is a summary of the conversation to date:\\n\\n<summary>", followed by
  the preserved messages (same ids as before); later releases tag that message
  `additional_kwargs={"lc_source": "summarization"}` (the library's code index shows the tag in
  the middleware and in code that reads it).
- langchain-core `messages_to_dict` (`{"type": "human"|"ai"|"system"|"tool", "data": {...}}`) and
  `dumpd` (`{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"], "kwargs": {...}}`),
  as ctxaudit's own "langchain" context format already reads them (engine/formats.py).

A compaction is a summary message (tagged, or with that prefix) that a state did not hold
before: before = the messages of the previous state (or, in one linear dump, the messages since
the previous summary), after = the summary and the messages kept with it. The summary is
`compact_summary`, so its own standard prefix is not read as a rule or a claim.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxaudit.engine.formats import ContextFormatError, parse_context
from ctxaudit.engine.transcripts.jsonutil import load_json, load_jsonl, obj, parse_time
from ctxaudit.engine.transcripts.sniff import jsonl_head, whole_json
from ctxaudit.engine.transcripts.types import Compaction, Reader, Transcript, TranscriptError
from ctxaudit.engine.types import Context, Message

FORMAT = "langchain"
SUMMARY_PREFIX = "Here is a summary of the conversation to date:"
_TYPES = frozenset(
    {"human", "ai", "system", "tool", "function", "chat", "AIMessageChunk", "HumanMessageChunk"}
)


def _is_message(m: Any) -> bool:
    if not isinstance(m, dict):
        return False
    if m.get("lc") == 1 and isinstance(m.get("kwargs"), dict):
        return str((m.get("id") or [""])[-1]).endswith(("Message", "MessageChunk"))
    return m.get("type") in _TYPES and ("data" in m or "content" in m)


def _messages_of(state: Any) -> list[Any] | None:
    """The message list a dump or state holds, or None when it holds none."""
    if isinstance(state, list) and state and all(_is_message(m) for m in state):
        return state
    if isinstance(state, dict):
        for key in ("values", "channel_values"):
            if isinstance(state.get(key), dict):
                return _messages_of(state[key])
        messages = state.get("messages")
        if isinstance(messages, list) and all(_is_message(m) for m in messages):
            return messages
    return None


def _states(data: Any) -> list[tuple[Any, list[Any]]] | None:
    """(state, its messages) in time order, or None when `data` is not a dump."""
    single = _messages_of(data)
    if single is not None:
        return [(data, single)]
    if isinstance(data, list) and data and all(_messages_of(s) is not None for s in data):
        states = [(s, _messages_of(s) or []) for s in data]

        # get_state_history lists newest first: order by step, else by time, when they say.
        def key(s: Any) -> tuple[int, str]:
            meta = obj(obj(s).get("metadata"))
            step = meta.get("step") if isinstance(meta.get("step"), int) else None
            return (
                step if step is not None else 0,
                str(s.get("created_at", "")) if isinstance(s, dict) else "",
            )

        if any(isinstance(s, dict) and ("created_at" in s or "metadata" in s) for s, _ in states):
            states.sort(key=lambda sm: key(sm[0]))
        return states
    return None


def sniff(name: str, text: str) -> bool:
    """A JSON message dump or state (history), or JSONL of states."""
    data = whole_json(text)
    if data is not None:
        return _states(data) is not None
    head = jsonl_head(text, 3)
    return bool(head) and all(_messages_of(s) is not None for s in head)


def _model_of(raw: list[Any]) -> str | None:
    """The model of the last AI message that names one (`response_metadata.model_name`, as
    langchain-openai writes it, or `.model`, as langchain-anthropic does), or None."""
    for m in reversed(raw):
        if not isinstance(m, dict):
            continue
        data = _raw_data(m)
        meta = obj(data.get("response_metadata"))
        for key in ("model_name", "model"):
            if isinstance(meta.get(key), str) and meta[key]:
                return str(meta[key])
    return None


def _raw_data(m: dict[str, Any]) -> dict[str, Any]:
    if m.get("lc") == 1:
        return m.get("kwargs") or {}
    return m["data"] if isinstance(m.get("data"), dict) else m


def _convert(raw: list[Any], name: str, where: int) -> list[tuple[str | None, Message]]:
    """(message id, Message) for each message; the summary gets kind "compact_summary"."""
    out: list[tuple[str | None, Message]] = []
    for m in raw:
        data = _raw_data(m)
        try:
            ctx = parse_context([m], format="langchain", field="messages")
        except ContextFormatError as exc:
            raise TranscriptError(name, where, str(exc)) from exc
        extra = obj(data.get("additional_kwargs"))
        mid = data.get("id") if isinstance(data.get("id"), str) else None
        for msg in ctx.messages:
            is_summary = msg.role == "user" and (
                extra.get("lc_source") == "summarization" or msg.content.lstrip().startswith(SUMMARY_PREFIX)
            )
            out.append(
                (
                    mid,
                    Message(
                        role=msg.role,
                        content=msg.content,
                        name=msg.name,
                        kind="compact_summary" if is_summary else msg.kind,
                    ),
                )
            )
    return out


def _summary_key(mid: str | None, m: Message) -> str:
    return mid or m.content


def parse(text: str, *, name: str) -> Transcript:
    """Parse a LangChain / LangGraph dump.

    Returns one Compaction per new summary message (see the module docstring); a summary whose
    before-context is not in the file (one state saved after summarizing) is reported in
    `notes`, not invented. Raises TranscriptError when the file is not a message dump.
    """
    data = whole_json(text)
    if data is None:
        if text.lstrip().startswith(("{", "[")) and len(jsonl_head(text, 2)) < 2:
            data = load_json(text, name)  # one document with a syntax error: say where
        else:
            data = [rec for _, rec in load_jsonl(text, name)]
    states = _states(data)
    if states is None:
        raise TranscriptError(
            name,
            None,
            "no LangChain messages found (expected messages_to_dict output or a state with messages)",
        )
    compactions: list[Compaction] = []
    unanchored = 0
    seen_summaries: set[str] = set()
    previous: list[tuple[str | None, Message]] | None = None
    previous_raw: list[Any] = []
    for pos, (_state, raw) in enumerate(states, start=1):
        current = _convert(raw, name, pos)
        # A linear dump (one state) can hold several summaries with the messages before them.
        start = 0
        for i, (mid, m) in enumerate(current):
            if m.kind != "compact_summary" or _summary_key(mid, m) in seen_summaries:
                continue
            seen_summaries.add(_summary_key(mid, m))
            head: list[Message] = []
            if previous is not None:
                # A state history: the state before this one is what the model held.
                before, rest = previous, current[i + 1 :]
                head = [h for _, h in current[:i] if h.role in ("system", "developer")]
            elif i > start:
                before, rest = current[start:i], current[i + 1 :]
            else:
                unanchored += 1
                start = i
                continue
            before_ids = {b for b, _ in before if b}
            kept = []
            for rid, r in rest:
                if rid is None or rid not in before_ids or r.kind == "compact_summary":
                    break
                kept.append(Message(role=r.role, content=r.content, name=r.name, kind="preserved"))
            compactions.append(
                Compaction(
                    index=len(compactions),
                    before=Context(messages=tuple(b for _, b in before)),
                    after=Context(messages=(*head, m, *kept)),
                    line=pos,
                    occurred_at=parse_time(obj(_state).get("created_at")),
                    model=_model_of(previous_raw if previous is not None else raw),
                    metadata={"source_format": FORMAT, "source_line": pos, "preserved_messages": len(kept)},
                )
            )
            start = i
        previous, previous_raw = current, raw
    notes = []
    if unanchored:
        notes.append(
            f"{unanchored} summary message(s) without the messages before them in this file "
            "(a state saved after summarizing): not auditable from this file alone"
        )
    session = None
    first = states[0][0]
    if isinstance(first, dict):
        cfg = obj(first.get("config"))
        conf = obj(cfg.get("configurable"))
        # config.configurable (a checkpoint tuple), checkpoint (the SDK's ThreadState), metadata, top level
        for where in (conf, obj(first.get("checkpoint")), obj(first.get("metadata")), first):
            if session is None and isinstance(where.get("thread_id"), str) and where["thread_id"]:
                session = where["thread_id"]
    return Transcript(
        format=FORMAT,
        session_id=session or Path(name).stem,
        compactions=tuple(compactions),
        notes=tuple(notes),
    )


READER = Reader(
    name=FORMAT,
    label="LangChain / LangGraph message dumps (messages_to_dict, checkpoint state values)",
    extensions=(".json", ".jsonl"),
    sniff=sniff,
    parse=parse,
)
