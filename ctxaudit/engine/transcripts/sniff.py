"""Cheap looks at a file's content, shared by the readers' `sniff` functions.

Sniffing must not raise: a file that is not JSON is simply "not this format".
"""

from __future__ import annotations

import json
from typing import Any

# How many JSON lines a JSONL sniff looks at: the first record can be metadata.
HEAD_LINES = 8


def jsonl_head(text: str, limit: int = HEAD_LINES) -> list[dict[str, Any]]:
    """The first `limit` lines of `text` that parse as JSON objects (others skipped)."""
    out: list[dict[str, Any]] = []
    start = 0
    # "\n" only (U+2028 inside a JSON string is no line break), and no split of the whole file
    while len(out) < limit and start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        raw, start = text[start:end].strip(), end + 1
        if not raw.startswith("{"):
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            out.append(data)
    return out


def whole_json(text: str) -> Any:
    """The whole text as one JSON document, or None when it is not one (e.g. JSONL)."""
    stripped = text.lstrip()
    if stripped[:1] not in ("{", "["):
        return None
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        return None
