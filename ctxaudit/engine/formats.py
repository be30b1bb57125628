"""Read contexts as agent tools write them and normalise them to `Context`.

Supported (`format` names): "openai" (Chat Completions messages: string or content parts,
tool_calls, tool/function messages), "anthropic" (Messages API: `{"system", "messages"}`, content
blocks, tool_use/tool_result), "langchain" (message dicts `{"type": "human"|"ai"|...}` and the
serialised `{"lc": 1, "kwargs": ...}` form), "generic" (`[{"role", "content"}]` or plain text).
`detect_format` picks one when the caller does not name it. Adding a format: write a
`_read_<name>` function returning `list[Message]` and register it in `READERS`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ctxaudit.engine.types import Context, Message

FORMATS = ("auto", "openai", "anthropic", "langchain", "generic")

# Roles as the tools spell them → our five roles.
_ROLE_ALIASES = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}


class ContextFormatError(ValueError):
    """Raised when a context cannot be read. `field` is a path like "before[2].content"."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


def detect_format(raw: Any) -> str:
    """Guess the format of one raw context (see module docstring for the names)."""
    if isinstance(raw, dict):
        if "messages" in raw or "system" in raw:
            return "anthropic"
        return "generic"
    if isinstance(raw, list):
        for item in raw:
            if not isinstance(item, dict):
                continue
            if item.get("lc") == 1 or (
                "type" in item and "role" not in item and item.get("type") in _LC_TYPES
            ):
                return "langchain"
            content = item.get("content")
            if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in content
            ):
                return "anthropic"
            if "tool_calls" in item or item.get("role") in ("tool", "function", "developer"):
                return "openai"
        return "openai"
    return "generic"


def parse_context(raw: Any, *, format: str = "auto", field: str = "context") -> Context:
    """Normalise one raw context.

    raw: list of message dicts, an Anthropic `{"system", "messages"}` dict, or a string.
    Returns a Context whose messages have roles in types.ROLES.
    Raises ContextFormatError naming the offending field.
    """
    if format not in FORMATS:
        raise ContextFormatError("format", f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    if raw is None:
        raise ContextFormatError(field, "is required")
    fmt = detect_format(raw) if format == "auto" else format
    if format == "anthropic":
        _check_anthropic_roles(raw, field)
    messages = READERS[fmt](raw, field)
    return Context(messages=tuple(messages))


def context_to_json(ctx: Context) -> list[dict[str, Any]]:
    """The normalised context as JSON-ready dicts (what the database stores)."""
    out = []
    for m in ctx.messages:
        d: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.name:
            d["name"] = m.name
        if m.kind:
            d["kind"] = m.kind
        out.append(d)
    return out


def context_from_json(data: list[dict[str, Any]]) -> Context:
    """Inverse of context_to_json (trusted input: our own stored rows)."""
    return Context(
        messages=tuple(
            Message(role=d["role"], content=d["content"], name=d.get("name"), kind=d.get("kind"))
            for d in data
        )
    )


# --- readers ----------------------------------------------------------------------------------


def _role(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise ContextFormatError(field, "must be a non-empty string")
    role = _ROLE_ALIASES.get(value.lower())
    if role is None:
        raise ContextFormatError(field, f"unknown role {value!r}")
    return role


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _parts_text(content: Any, field: str) -> str:
    """OpenAI content: a string, or parts [{"type": "text", "text"}, {"type": "image_url"}, ...]."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                ptype = part.get("type")
                if ptype in ("text", "input_text", "output_text"):
                    text = part.get("text")
                    if not isinstance(text, str):
                        raise ContextFormatError(f"{field}[{i}].text", "must be a string")
                    texts.append(text)
                elif ptype in ("image_url", "input_image", "image"):
                    texts.append("[image]")
                elif ptype in ("input_audio", "audio"):
                    texts.append("[audio]")
                elif ptype in ("file", "input_file"):
                    texts.append("[file]")
                else:
                    texts.append(_json_text(part))
            else:
                raise ContextFormatError(f"{field}[{i}]", "must be a string or an object")
        return "\n".join(texts)
    raise ContextFormatError(field, "must be a string or a list of content parts")


def _read_openai(raw: Any, field: str) -> list[Message]:
    if isinstance(raw, str):
        return [Message(role="user", content=raw)]
    if not isinstance(raw, list):
        raise ContextFormatError(field, "must be a list of messages")
    out: list[Message] = []
    # Tool messages carry only tool_call_id; the tool's name is on the assistant's call.
    call_names: dict[str, str] = {}
    for i, item in enumerate(raw):
        f = f"{field}[{i}]"
        if not isinstance(item, dict):
            raise ContextFormatError(f, "must be an object with role and content")
        for call in item.get("tool_calls") or []:
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                fn_name = (
                    (call.get("function") or {}).get("name")
                    if isinstance(call.get("function"), dict)
                    else None
                )
                if isinstance(fn_name, str):
                    call_names[call["id"]] = fn_name
        if item.get("type") in ("compaction", "compaction_summary") and "encrypted_content" in item:
            out.append(
                Message(
                    role="system",
                    content="[encrypted compaction: content not auditable]",
                    kind="encrypted_compaction",
                )
            )
            continue
        role = _role(item.get("role"), f"{f}.role")
        text = _parts_text(item.get("content"), f"{f}.content")
        calls = item.get("tool_calls") or []
        if calls and not isinstance(calls, list):
            raise ContextFormatError(f"{f}.tool_calls", "must be a list")
        for call in calls:
            fn = call.get("function", {}) if isinstance(call, dict) else {}
            text += (
                "\n" if text else ""
            ) + f"[tool call {fn.get('name', '?')}({_json_text(fn.get('arguments', ''))})]"
        if item.get("function_call"):
            fc = item["function_call"]
            text += (
                "\n" if text else ""
            ) + f"[tool call {fc.get('name', '?')}({_json_text(fc.get('arguments', ''))})]"
        name = item.get("name") if isinstance(item.get("name"), str) else None
        if name is None and role == "tool" and isinstance(item.get("tool_call_id"), str):
            name = call_names.get(item["tool_call_id"])
        # Our own stored form carries `kind` (e.g. "compact_summary" from a transcript import).
        kind = item.get("kind") if isinstance(item.get("kind"), str) and 0 < len(item["kind"]) <= 40 else None
        out.append(Message(role=role, content=text, name=name, kind=kind))
    return out


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
            texts.append(f"[tool call {block.get('name', '?')}({_json_text(block.get('input', {}))})]")
        elif btype == "tool_result":
            flush()
            inner = block.get("content", "")
            inner_text = inner if isinstance(inner, str) else _parts_text(inner, f"{f}.content")
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
            out.append(
                Message(
                    role=role,
                    content="[encrypted compaction: content not auditable]",
                    kind="encrypted_compaction",
                )
            )
        else:
            texts.append(_json_text(block))
    flush()
    return out


def _check_anthropic_roles(raw: Any, field: str) -> None:
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


def _read_anthropic(raw: Any, field: str) -> list[Message]:
    if isinstance(raw, list):
        raw = {"messages": raw}
    if not isinstance(raw, dict):
        raise ContextFormatError(field, 'must be {"system": ..., "messages": [...]}')
    out: list[Message] = []
    system = raw.get("system")
    if system:
        out.append(Message(role="system", content=_parts_text(system, f"{field}.system")))
    messages = raw.get("messages", [])
    if not isinstance(messages, list):
        raise ContextFormatError(f"{field}.messages", "must be a list")
    tool_names: dict[str, str] = {}
    for i, item in enumerate(messages):
        f = f"{field}.messages[{i}]"
        if not isinstance(item, dict):
            raise ContextFormatError(f, "must be an object with role and content")
        role = _role(item.get("role"), f"{f}.role")
        out.extend(_anthropic_blocks(item.get("content", ""), role, f"{f}.content", tool_names))
    return out


_LC_TYPES = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
    "chat": "user",
}
_LC_CLASSES = {
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
    "ChatMessage": "user",
}


def _read_langchain(raw: Any, field: str) -> list[Message]:
    if not isinstance(raw, list):
        raise ContextFormatError(field, "must be a list of messages")
    out: list[Message] = []
    for i, item in enumerate(raw):
        f = f"{field}[{i}]"
        if not isinstance(item, dict):
            raise ContextFormatError(f, "must be a message object")
        if item.get("lc") == 1:
            cls = (item.get("id") or ["?"])[-1]
            kwargs = item.get("kwargs") or {}
            role = _LC_CLASSES.get(cls)
            if role is None:
                raise ContextFormatError(f"{f}.id", f"unknown LangChain message class {cls!r}")
            data = kwargs
        elif "role" in item:
            role = _role(item["role"], f"{f}.role")
            data = item
        else:
            role = _LC_TYPES.get(str(item.get("type")))
            if role is None:
                raise ContextFormatError(f"{f}.type", f"unknown LangChain message type {item.get('type')!r}")
            data = item.get("data", item) if isinstance(item.get("data"), dict) else item
        if role == "user" and data.get("role") in ("system", "assistant"):
            role = _ROLE_ALIASES[data["role"]]
        text = _parts_text(data.get("content"), f"{f}.content")
        for call in data.get("tool_calls") or []:
            if isinstance(call, dict):
                text += (
                    "\n" if text else ""
                ) + f"[tool call {call.get('name', '?')}({_json_text(call.get('args', {}))})]"
        out.append(
            Message(
                role=role, content=text, name=data.get("name") if isinstance(data.get("name"), str) else None
            )
        )
    return out


def _read_generic(raw: Any, field: str) -> list[Message]:
    if isinstance(raw, str):
        return [Message(role="user", content=raw)]
    if isinstance(raw, dict):
        if "messages" in raw:
            return _read_anthropic(raw, field)
        raise ContextFormatError(field, "must be a list of {role, content} messages or a string")
    return _read_openai(raw, field)


READERS: dict[str, Callable[[Any, str], list[Message]]] = {
    "openai": _read_openai,
    "anthropic": _read_anthropic,
    "langchain": _read_langchain,
    "generic": _read_generic,
}
