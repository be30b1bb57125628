"""OpenAI Chat Completions messages: string or content parts, tool_calls, tool/function messages.

Source: the Chat Completions API reference (messages[].role/content/tool_calls/tool_call_id),
platform.openai.com/docs/api-reference/chat/create."""

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

NAME = "openai"


def read(raw: Any, field: str) -> list[Message]:
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
                    content=ENCRYPTED,
                    kind="encrypted_compaction",
                )
            )
            continue
        role = role_of(item.get("role"), f"{f}.role")
        text = parts_text(item.get("content"), f"{f}.content")
        calls = item.get("tool_calls") or []
        if calls and not isinstance(calls, list):
            raise ContextFormatError(f"{f}.tool_calls", "must be a list")
        for call in calls:
            fn = call.get("function", {}) if isinstance(call, dict) else {}
            text += (
                "\n" if text else ""
            ) + f"[tool call {fn.get('name', '?')}({json_text(fn.get('arguments', ''))})]"
        if item.get("function_call"):
            fc = item["function_call"]
            text += (
                "\n" if text else ""
            ) + f"[tool call {fc.get('name', '?')}({json_text(fc.get('arguments', ''))})]"
        name = item.get("name") if isinstance(item.get("name"), str) else None
        if name is None and role == "tool" and isinstance(item.get("tool_call_id"), str):
            name = call_names.get(item["tool_call_id"])
        # Our own stored form carries `kind` (e.g. "compact_summary" from a transcript import).
        kind = item.get("kind") if isinstance(item.get("kind"), str) and 0 < len(item["kind"]) <= 40 else None
        out.append(Message(role=role, content=text, name=name, kind=kind))
    return out


def detect(raw: Any) -> bool:
    """A message list with OpenAI-only traits: tool_calls, or a tool/function/developer role."""
    return isinstance(raw, list) and any(
        isinstance(item, dict)
        and ("tool_calls" in item or str(item.get("role", "")).lower() in ("tool", "function", "developer"))
        for item in raw
    )
