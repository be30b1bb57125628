"""Anthropic Messages API: `{"system", "messages"}`, content blocks, tool_use/tool_result, and the
server-side compaction block.

Sources: the Messages API reference (content blocks text/tool_use/tool_result/thinking), and for
`{"type": "compaction", "content": <summary or null>}` anthropics/anthropic-sdk-ruby
lib/anthropic/models/beta/beta_compaction_block_param.rb at d7744d12ef000bd54c04eb3b0198afde63c0c2de
("Summary of previously compacted content, or null if compaction failed"; the API drops every
block before it). Its plaintext summary is what the model sees next, so it is read as the summary."""

from __future__ import annotations

from typing import Any

from ctxaudit.engine.formats.common import (
    ENCRYPTED,
    ContextFormatError,
    json_text,
    parts_text,
    role_of,
)
from ctxaudit.engine.types import Message

NAME = "anthropic"
# Messages that carry a server-side compaction summary (a summary kind of language/clauses.py).
COMPACTION_KIND = "compact_summary"


def _anthropic_blocks(content: Any, role: str, field: str, tool_names: dict[str, str]) -> list[Message]:
    """One Anthropic message → one or more Messages (tool_result blocks become role "tool").

    tool_names maps tool_use ids seen so far to tool names, so a result is named by its tool."""
    if isinstance(content, str):
        return [Message(role=role, content=content)]
    if not isinstance(content, list):
        raise ContextFormatError(field, "must be a string or a list of content blocks")
    out: list[Message] = []
    texts: list[str] = []

    def flush() -> None:
        if texts:
            out.append(Message(role=role, content="\n".join(texts)))
            texts.clear()

    for i, block in enumerate(content):
        f = f"{field}[{i}]"
        if isinstance(block, str):
            texts.append(block)
            continue
        if not isinstance(block, dict):
            raise ContextFormatError(f, "must be a content block object")
        btype = block.get("type")
        if btype == "text":
            if not isinstance(block.get("text"), str):
                raise ContextFormatError(f"{f}.text", "must be a string")
            texts.append(block["text"])
        elif btype == "tool_use":
            if isinstance(block.get("id"), str) and isinstance(block.get("name"), str):
                tool_names[block["id"]] = block["name"]
            texts.append(f"[tool call {block.get('name', '?')}({json_text(block.get('input', {}))})]")
        elif btype == "tool_result":
            flush()
            inner = block.get("content", "")
            inner_text = inner if isinstance(inner, str) else parts_text(inner, f"{f}.content")
            use_id = block.get("tool_use_id")
            out.append(
                Message(
                    role="tool",
                    content=inner_text,
                    name=tool_names.get(use_id, use_id) if isinstance(use_id, str) else None,
                )
            )
        elif btype in ("thinking", "redacted_thinking"):
            continue  # not part of what later turns see as instructions
        elif btype in ("image", "document"):
            texts.append(f"[{btype}]")
        elif btype == "compaction":
            flush()
            summary = block.get("content")
            if isinstance(block.get("encrypted_content"), str) and not isinstance(summary, str):
                out.append(Message(role=role, content=ENCRYPTED, kind="encrypted_compaction"))
            else:
                # null content is a failed compaction (the API treats it as a no-op): an empty summary.
                text = summary if isinstance(summary, str) else parts_text(summary, f"{f}.content")
                out.append(Message(role=role, content=text, kind=COMPACTION_KIND))
        else:
            texts.append(json_text(block))
    flush()
    return out


def check_roles(raw: Any, field: str) -> None:
    """A caller who names "anthropic" gets told when the messages are not Anthropic's shape
    (an OpenAI list with a system message would otherwise pass as something else)."""
    messages = raw.get("messages") if isinstance(raw, dict) else raw
    if not isinstance(messages, list):
        return
    prefix = f"{field}.messages" if isinstance(raw, dict) else field
    for i, item in enumerate(messages):
        if isinstance(item, dict) and str(item.get("role", "")).lower() not in ("user", "assistant"):
            raise ContextFormatError(
                f"{prefix}[{i}].role",
                f"Anthropic messages take the roles user and assistant, not {item.get('role')!r}; "
                'put the system prompt in "system", or send format "openai"',
            )


def read(raw: Any, field: str) -> list[Message]:
    if isinstance(raw, list):
        raw = {"messages": raw}
    if not isinstance(raw, dict):
        raise ContextFormatError(field, 'must be {"system": ..., "messages": [...]}')
    out: list[Message] = []
    system = raw.get("system")
    if system:
        out.append(Message(role="system", content=parts_text(system, f"{field}.system")))
    messages = raw.get("messages", [])
    if not isinstance(messages, list):
        raise ContextFormatError(f"{field}.messages", "must be a list")
    tool_names: dict[str, str] = {}
    for i, item in enumerate(messages):
        f = f"{field}.messages[{i}]"
        if not isinstance(item, dict):
            raise ContextFormatError(f, "must be an object with role and content")
        role = role_of(item.get("role"), f"{f}.role")
        out.extend(_anthropic_blocks(item.get("content", ""), role, f"{f}.content", tool_names))
    return _from_last_compaction(out)


def _from_last_compaction(messages: list[Message]) -> list[Message]:
    """What the model sees: the API drops every block before the last compaction block, so only
    the system prompt, that summary and what follows it remain in context."""
    last = max((i for i, m in enumerate(messages) if m.kind == COMPACTION_KIND), default=None)
    if last is None:
        return messages
    return [m for m in messages[:last] if m.role == "system"] + messages[last:]


def detect(raw: Any) -> bool:
    """An `{"system", "messages"}` object, or a list with Anthropic-only content blocks."""
    if isinstance(raw, dict):
        return "messages" in raw or "system" in raw
    return isinstance(raw, list) and any(
        isinstance(item, dict)
        and isinstance(item.get("content"), list)
        and any(isinstance(b, dict) and b.get("type") in _ANTHROPIC_BLOCKS for b in item["content"])
        for item in raw
    )


_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "compaction"})
