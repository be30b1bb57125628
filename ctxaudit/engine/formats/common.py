"""What every context reader shares: the error type, role names, text of content parts."""

from __future__ import annotations

import json
from typing import Any

# Roles as the tools spell them → our five roles.
ROLE_ALIASES = {
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


def role_of(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise ContextFormatError(field, "must be a non-empty string")
    role = ROLE_ALIASES.get(value.lower())
    if role is None:
        raise ContextFormatError(field, f"unknown role {value!r}")
    return role


def json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def parts_text(content: Any, field: str) -> str:
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
                    texts.append(json_text(part))
            else:
                raise ContextFormatError(f"{field}[{i}]", "must be a string or an object")
        return "\n".join(texts)
    raise ContextFormatError(field, "must be a string or a list of content parts")


ENCRYPTED = "[encrypted compaction: content not auditable]"
