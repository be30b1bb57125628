"""Small helpers the JSON-based readers share: loading JSONL with line numbers, timestamps."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ctxaudit.engine.transcripts.types import TranscriptError


def incomplete_last_line(text: str) -> int | None:
    """The 1-based number of the last line when the file ends inside a JSON record: no newline
    after it, and it does not parse (a session the tool is still writing), else None. Such a line
    is left for the next import: the importer adds only what it has not stored."""
    if not text or text.endswith(("\n", "\r")):
        return None
    last = text.rpartition("\n")[2]
    if not last.lstrip().startswith("{"):
        return None
    try:
        json.loads(last)
    except json.JSONDecodeError:
        return text.count("\n") + 1
    return None


def load_jsonl(text: str, name: str) -> list[tuple[int, dict[str, Any]]]:
    """(1-based line, object) for every non-blank line, except an incomplete last line
    (incomplete_last_line), which is skipped. Raises TranscriptError naming the line that is not
    JSON or not an object."""
    out: list[tuple[int, dict[str, Any]]] = []
    partial = incomplete_last_line(text)
    # "\n" only: splitlines() also breaks at U+2028, U+0085 and the like, which JSON strings may
    # hold raw (serde_json and json.dumps(ensure_ascii=False) write them unescaped)
    for n, raw in enumerate(text.split("\n"), start=1):
        raw = raw.removesuffix("\r")
        if not raw.strip() or n == partial:
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise TranscriptError(name, n, f"not valid JSON ({exc.msg} at column {exc.colno})") from exc
        if not isinstance(data, dict):
            raise TranscriptError(name, n, "expected a JSON object per line")
        out.append((n, data))
    return out


def load_json(text: str, name: str) -> Any:
    """The whole file as one JSON document. Raises TranscriptError with the line of the error."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(name, exc.lineno, f"not valid JSON ({exc.msg} at column {exc.colno})") from exc


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 string (a trailing Z allowed) or epoch seconds → aware datetime; naive
    strings are read as UTC; anything else → None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(float(value), tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not value:
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def text_of(value: Any) -> str:
    """Text of a content value: a string, or a list of parts with `text` (other parts dropped)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        t = value.get("text")
        return t if isinstance(t, str) else ""
    if isinstance(value, list):
        return "\n".join(t for t in (text_of(p) for p in value) if t)
    return ""


def call_text(name: Any, args: Any) -> str:
    """How a tool call reads in a context: "[tool call name(args)]" (args as compact JSON)."""
    shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, sort_keys=True)
    return f"[tool call {name if isinstance(name, str) and name else '?'}({shown})]"


def obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (foreign files are loosely typed)."""
    return value if isinstance(value, dict) else {}


def string(value: Any) -> str:
    """`value` when it is a string, else ""."""
    return value if isinstance(value, str) else ""
