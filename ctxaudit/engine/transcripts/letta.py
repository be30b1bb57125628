"""Letta agent files (`.af`): an exported agent with its memory blocks and recent messages.

Built from (read, not copied):
- letta-ai/letta letta/schemas/agent_file.py @ 4184ae2667cb3c425069a1eb6747eea9b47c0cce:
  `AgentFileSchema {agents, groups, blocks, files, sources, tools, mcp_servers, metadata}`;
  `AgentSchema` (a `CreateAgent`: `system`, `block_ids`, `llm_config`, …) with
  `in_context_message_ids` and `messages` (`MessageSchema`: `id`, `role`, `content` parts,
  `tool_calls`, `tool_call_id`, `created_at`); `BlockSchema` (`label`, `value`, `description`).
- letta-ai/agent-file memgpt_agent/memgpt_agent_with_convo.af @ bf321c12ffec21104bceaed0ab9924f50d5596e7:
  a real export in that shape.
- letta-ai/letta letta/system.py (`package_user_message`, `package_system_message`,
  `package_summarize_message`; found through the library's code index, which records no commit):
  user-role messages carry JSON `{"type": "user_message" | "system_alert", "message", "time"}`;
  when messages are evicted, a `system_alert` in the *user* role says "Note: prior messages
  (N of M total messages) have been hidden from view due to conversation memory constraints.
  The following is a summary of the previous K messages: …".
- letta-ai/letta-code src/backend/local/compaction.ts @ 4b028fab07c69edaac2ddb4f7b9a43573ff20d81
  (`packageLocalSummaryMessage`, as letta/system.py writes it from 0.16.5): the sliding-window
  text "Note: N messages from the beginning of the conversation have been hidden from view due to
  memory constraints." and the "all" text "Note: prior messages have been hidden from view due to
  conversation memory constraints."; a summary may be stored with role "summary".

Each such summary is one compaction: before = the system prompt and the messages in context
when it was written, after = the system prompt, the summary and the messages kept (the N oldest
were evicted; without N, the ones still in `in_context_message_ids`). The system prompt and the
agent's memory blocks are the instruction files (rules).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ctxaudit.engine.transcripts.jsonutil import call_text, load_json, obj, parse_time, string, text_of
from ctxaudit.engine.transcripts.sniff import whole_json
from ctxaudit.engine.transcripts.types import Compaction, Instruction, Reader, Transcript, TranscriptError
from ctxaudit.engine.types import Context, Message

FORMAT = "letta"
# The three texts of a summary (older "prior messages (N of M total messages) … conversation memory
# constraints"; sliding window "N messages from the beginning of the conversation … memory
# constraints"; "all" mode "prior messages have been hidden … conversation memory constraints").
HIDDEN_MARK = re.compile(r"have been hidden from view due to (?:conversation )?memory constraints")
_HIDDEN_COUNT = re.compile(
    r"prior messages \((\d+) of \d+ total messages\)|Note: (\d+) messages from the beginning of the conversation"
)


def _agent_of(data: Any) -> dict[str, Any] | None:
    if isinstance(data, dict) and isinstance(data.get("agents"), list) and data["agents"]:
        first = data["agents"][0]
        return first if isinstance(first, dict) else None
    if isinstance(data, dict) and isinstance(data.get("messages"), list) and "system" in data:
        return data  # older single-agent export: the agent at the top level
    return None


def sniff(name: str, text: str) -> bool:
    """An agent file: `agents[0]` (or the top level) with `messages` and in-context ids/indices."""
    agent = _agent_of(whole_json(text))
    return (
        agent is not None
        and isinstance(agent.get("messages"), list)
        and ("in_context_message_ids" in agent or "in_context_message_indices" in agent)
    )


def _unpack(text: str) -> tuple[str, str | None]:
    """Letta's packaged user-role JSON → (text the model reads as the message, packaged type)."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text, None
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        # user/system messages are typed; tool returns carry a status instead (package_function_response).
        packed = data.get("type") if isinstance(data.get("type"), str) else None
        if packed or isinstance(data.get("status"), str):
            return data["message"], packed
    return text, None


def _message(raw: dict[str, Any]) -> Message | None:
    role = raw.get("role")
    text = text_of(raw.get("content")) or (string(raw.get("text")))
    if role == "summary":
        # a summary stored in its own role (a compaction asked for through the API); the model
        # reads it as the user-role alert it packs
        return Message(role="user", content=_unpack(text)[0], kind="compact_summary")
    if role == "user":
        body, packed = _unpack(text)
        if packed == "system_alert":
            kind = "compact_summary" if HIDDEN_MARK.search(body) else "system_alert"
            return Message(role="user", content=body, kind=kind)
        if packed == "heartbeat":
            return Message(role="user", content=body, kind="system_alert")
        return Message(role="user", content=body)
    if role == "assistant":
        calls = [
            call_text((c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments", ""))
            for c in raw.get("tool_calls") or []
            if isinstance(c, dict)
        ]
        content = "\n".join(p for p in [text, *calls] if p)
        return Message(role="assistant", content=content) if content else None
    if role == "tool":
        body, _ = _unpack(text)
        return Message(
            role="tool", content=body, name=raw.get("name") if isinstance(raw.get("name"), str) else None
        )
    if role == "system":
        return Message(role="system", content=text)
    return None


def parse(text: str, *, name: str) -> Transcript:
    """Parse one Letta agent file (its first agent).

    Returns one Compaction per evicted-message summary, in message order, and the system prompt
    and memory blocks as instructions. Raises TranscriptError when the file is not JSON or holds
    no agent.
    """
    data = load_json(text, name)
    agent = _agent_of(data)
    if agent is None:
        raise TranscriptError(name, None, "no agent in this agent file (expected agents[0] with messages)")
    raw_messages = [m for m in agent.get("messages") or [] if isinstance(m, dict)]
    in_context: set[str] = set()
    if isinstance(agent.get("in_context_message_ids"), list):
        in_context = {i for i in agent["in_context_message_ids"] if isinstance(i, str)}
    elif isinstance(agent.get("in_context_message_indices"), list):
        in_context = {
            str(raw_messages[i].get("id", i))
            for i in agent["in_context_message_indices"]
            if isinstance(i, int) and 0 <= i < len(raw_messages)
        }

    system_text = string(agent.get("system"))
    system: Message | None = None
    window: list[tuple[str, Message]] = []  # (message id, message): the context after the system prompt
    compactions: list[Compaction] = []
    for pos, raw in enumerate(raw_messages, start=1):
        m = _message(raw)
        if m is None:
            continue
        mid = str(raw.get("id", pos))
        if m.role == "system":
            system = m  # the compiled system prompt (memory blocks included) the model saw
            continue
        if m.kind != "compact_summary":
            window.append((mid, m))
            continue
        head = [system] if system else ([Message(role="system", content=system_text)] if system_text else [])
        count = _HIDDEN_COUNT.search(m.content)
        evicted = int(count.group(1) or count.group(2)) if count else None
        kept = window[evicted:] if evicted is not None else [(i, k) for i, k in window if i in in_context]
        metadata: dict[str, Any] = {
            "source_format": FORMAT,
            "source_line": pos,
            "evicted_messages": len(window) - len(kept),
        }
        compactions.append(
            Compaction(
                index=len(compactions),
                before=Context(messages=tuple(head + [k for _, k in window])),
                after=Context(
                    messages=tuple(
                        head
                        + [m]
                        + [
                            Message(role=k.role, content=k.content, name=k.name, kind=k.kind or "preserved")
                            for _, k in kept
                        ]
                    )
                ),
                line=pos,
                occurred_at=parse_time(raw.get("created_at")),
                model=raw.get("model") if isinstance(raw.get("model"), str) else None,
                metadata=metadata,
            )
        )
        window = [(mid, m), *kept]

    instructions: list[Instruction] = []
    if system_text.strip():
        instructions.append(Instruction("system prompt", system_text.strip()))
    wanted = [b for b in agent.get("block_ids") or [] if isinstance(b, str)]
    top = obj(data).get("blocks")
    blocks: list[Any] = top if isinstance(top, list) else list(agent.get("core_memory") or [])
    for b in blocks:
        if (
            isinstance(b, dict)
            and isinstance(b.get("value"), str)
            and b["value"].strip()
            and (not wanted or b.get("id") in wanted)
        ):
            instructions.append(
                Instruction(f"memory block {b.get('label', b.get('id', '?'))}", b["value"].strip())
            )
    llm = obj(agent.get("llm_config"))
    if llm.get("model") and compactions:
        compactions = [
            c
            if c.model
            else Compaction(c.index, c.before, c.after, c.line, c.occurred_at, str(llm["model"]), c.metadata)
            for c in compactions
        ]
    session = agent.get("id") if isinstance(agent.get("id"), str) else None
    return Transcript(
        format=FORMAT,
        session_id=f"{Path(name).stem}:{session}" if session else Path(name).stem,
        compactions=tuple(compactions),
        instructions=tuple(instructions),
    )


READER = Reader(
    name=FORMAT,
    label="Letta agent files (.af)",
    extensions=(".af", ".json"),
    sniff=sniff,
    parse=parse,
)
