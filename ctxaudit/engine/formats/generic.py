"""The documented generic form: `[{"role", "content"}]`, an `{"messages": [...]}` object, or plain text."""

from __future__ import annotations

from typing import Any

from ctxaudit.engine.formats import anthropic, openai
from ctxaudit.engine.formats.common import ContextFormatError
from ctxaudit.engine.types import Message

NAME = "generic"


def detect(raw: Any) -> bool:
    """Anything: the fallback when no other format claims the context."""
    return True


def read(raw: Any, field: str) -> list[Message]:
    if isinstance(raw, str):
        return [Message(role="user", content=raw)]
    if isinstance(raw, dict):
        if "messages" in raw:
            return anthropic.read(raw, field)
        raise ContextFormatError(field, "must be a list of {role, content} messages or a string")
    return openai.read(raw, field)
