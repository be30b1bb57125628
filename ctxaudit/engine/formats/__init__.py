"""Read contexts as agent tools write them and normalise them to `Context`.

The registry `READERS` maps a `format` name to its module; each module has `NAME`, `detect(raw)
-> bool` and `read(raw, field) -> list[Message]`. With format "auto", `detect_format` asks the
readers in registry order (the most specific first) and takes the first that claims the context;
"generic" claims everything. Adding a format: write a module with those three names and add one
line to `READERS`.

- "openai-responses": Responses API input items (openai_responses.py);
- "anthropic": Messages API `{"system", "messages"}`, content blocks, the compaction block (anthropic.py);
- "langchain": LangChain message dicts and the serialised lc:1 form (langchain.py);
- "openai": Chat Completions messages (openai.py);
- "generic": `[{"role", "content"}]` or plain text (generic.py).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from ctxaudit.engine.formats import anthropic, generic, langchain, openai, openai_responses
from ctxaudit.engine.formats.common import ContextFormatError
from ctxaudit.engine.types import Context, Message

READERS: dict[str, ModuleType] = {
    openai_responses.NAME: openai_responses,
    anthropic.NAME: anthropic,
    langchain.NAME: langchain,
    openai.NAME: openai,
    generic.NAME: generic,
}
FORMATS = ("auto", *READERS)

__all__ = [
    "FORMATS",
    "READERS",
    "ContextFormatError",
    "context_from_json",
    "context_to_json",
    "detect_format",
    "parse_context",
]


def detect_format(raw: Any) -> str:
    """The first format in READERS whose `detect` claims `raw`; a plain list reads as "openai"."""
    for name, reader in READERS.items():
        if name == generic.NAME and isinstance(raw, list):
            return openai.NAME
        if reader.detect(raw):
            return name
    return generic.NAME


def parse_context(raw: Any, *, format: str = "auto", field: str = "context") -> Context:
    """Normalise one raw context.

    raw: list of message dicts or items, an object (`{"system", "messages"}`, `{"instructions",
    "input"}`), or a string. Returns a Context whose messages have roles in types.ROLES.
    Raises ContextFormatError naming the offending field.
    """
    if format not in FORMATS:
        raise ContextFormatError("format", f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    if raw is None:
        raise ContextFormatError(field, "is required")
    fmt = detect_format(raw) if format == "auto" else format
    if format == anthropic.NAME:
        anthropic.check_roles(raw, field)
    messages: list[Message] = READERS[fmt].read(raw, field)
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
