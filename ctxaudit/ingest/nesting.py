"""How deep an API body may nest, and saying where it nests too deep.

MAX_DEPTH levels of arrays/objects are accepted (a context is about 6 deep: messages → content
blocks → tool result → text); deeper input is refused with 400 naming the field, e.g.
`metadata.a.b.c…: nested deeper than 100 levels`. Two places need it:

- `check_depth` after parsing: every later step (redaction, the engine, JSON storage) walks the
  structure, and Python's recursion limit (~1000 frames) must never be what stops it.
- `JsonParser` for the API hub: Python's json module itself gives up near 1,000 levels with a
  RecursionError, which used to be reported as "not valid JSON"; it now says "nested too deep"
  and where (`deep_path`, a scan of the raw text that runs only on that error).
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.http import HttpRequest
from ninja.parser import Parser

MAX_DEPTH = 100


class TooDeep(ValueError):
    """Input nested deeper than MAX_DEPTH; `field` is the path where it went over ("metadata.a[0])."""

    def __init__(self, field: str, limit: int = MAX_DEPTH) -> None:
        super().__init__(f"{field}: nested deeper than {limit} levels of arrays/objects")
        self.field = field
        self.limit = limit


def _join(path: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{path}[{part}]"
    return f"{path}.{part}" if path else part


def check_depth(value: Any, field: str, *, limit: int = MAX_DEPTH) -> None:
    """Raise TooDeep when `value` (parsed JSON) nests more than `limit` containers below `field`.

    Iterative (no recursion), visits containers only, so strings cost nothing; the path is
    built only for a body that is too deep (building it for every container cost ~5 ms on a
    200k-token event; issue 13).
    """
    if limit >= 1 and _within(value, limit):
        return
    stack: list[tuple[Any, int, str]] = [(value, 1, field)]
    while stack:
        node, depth, path = stack.pop()
        if depth > limit:
            raise TooDeep(path, limit)
        if isinstance(node, dict):
            stack.extend(
                (v, depth + 1, _join(path, str(k))) for k, v in node.items() if isinstance(v, dict | list)
            )
        elif isinstance(node, list):
            stack.extend(
                (v, depth + 1, _join(path, i)) for i, v in enumerate(node) if isinstance(v, dict | list)
            )


def _within(value: Any, limit: int) -> bool:
    """True when no container in `value` sits more than `limit` levels deep (`value` is level 1)."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 1
    while level:
        if depth > limit:
            return False
        deeper: list[Any] = []
        for node in level:
            deeper.extend(
                v for v in (node.values() if isinstance(node, dict) else node) if isinstance(v, dict | list)
            )
        level = deeper
        depth += 1
    return True


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]', re.DOTALL)


def deep_path(text: str, *, limit: int = MAX_DEPTH) -> str | None:
    """The path, named as `check_depth` names it ("metadata.a[0].b"), of the first container in
    JSON `text` that sits more than `limit` levels below a top-level field, or None. Tolerates
    invalid JSON: it only follows strings, brackets, colons and commas."""
    # One entry per open container: its current key (objects) or index (arrays).
    stack: list[str | int | None] = []
    last_string: str | None = None
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok[0] == '"':
            last_string = tok
        elif tok == ":":
            if stack and last_string is not None:
                stack[-1] = _unquote(last_string)
        elif tok == ",":
            if stack:
                top = stack[-1]
                stack[-1] = top + 1 if isinstance(top, int) else None
        elif tok in "[{":
            stack.append(0 if tok == "[" else None)
            if len(stack) > limit + 1:  # the body object itself is not a level
                path = ""
                for part in stack[:-1]:
                    path = _join(path, "?" if part is None else part)
                return path or "body"
        elif stack:  # "]" or "}"
            stack.pop()
    return None


def _unquote(token: str) -> str:
    try:
        return str(json.loads(token))
    except ValueError:
        return token.strip('"')


class JsonParser(Parser):
    """ninja's JSON parser, with a clear error when the body nests too deep for json.loads."""

    def parse_body(self, request: HttpRequest) -> Any:
        try:
            return json.loads(request.body)
        except RecursionError:
            text = request.body.decode("utf-8", "replace")
            raise TooDeep(deep_path(text) or "body") from None
