"""LangChain message dicts (`{"type": "human"|"ai"|...}`, messages_to_dict's `{"type", "data"}`) and the
serialised `{"lc": 1, "kwargs": ...}` form.

Source: langchain-core messages/base.py (message_to_dict) and load/serializable.py (lc: 1)."""

from __future__ import annotations

from typing import Any

from ctxaudit.engine.formats.common import (
    ROLE_ALIASES,
    ContextFormatError,
    json_text,
    parts_text,
    role_of,
)
from ctxaudit.engine.types import Message

NAME = "langchain"

LC_TYPES = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
    "chat": "user",
}
LC_CLASSES = {
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
    "ChatMessage": "user",
}


def read(raw: Any, field: str) -> list[Message]:
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
            role = LC_CLASSES.get(cls)
            if role is None:
                raise ContextFormatError(f"{f}.id", f"unknown LangChain message class {cls!r}")
            data = kwargs
        elif "role" in item:
            role = role_of(item["role"], f"{f}.role")
            data = item
        else:
            role = LC_TYPES.get(str(item.get("type")))
            if role is None:
                raise ContextFormatError(f"{f}.type", f"unknown LangChain message type {item.get('type')!r}")
            data = item.get("data", item) if isinstance(item.get("data"), dict) else item
        if role == "user" and data.get("role") in ("system", "assistant"):
            role = ROLE_ALIASES[data["role"]]
        text = parts_text(data.get("content"), f"{f}.content")
        for call in data.get("tool_calls") or []:
            if isinstance(call, dict):
                text += (
                    "\n" if text else ""
                ) + f"[tool call {call.get('name', '?')}({json_text(call.get('args', {}))})]"
        out.append(
            Message(
                role=role, content=text, name=data.get("name") if isinstance(data.get("name"), str) else None
            )
        )
    return out


def detect(raw: Any) -> bool:
    """A list holding a serialised LangChain message, or a `type` of LangChain's without a `role`."""
    return isinstance(raw, list) and any(
        isinstance(item, dict)
        and (item.get("lc") == 1 or ("type" in item and "role" not in item and item.get("type") in LC_TYPES))
        for item in raw
    )
