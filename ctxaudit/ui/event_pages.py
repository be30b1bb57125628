"""The event page's diff rows a page at a time, and where each highlight's link goes (issue 13).

`?full=1` shows every row, FULL_ROWS_PER_PAGE at a time (a 100k-message event returned 45 MB of
HTML after 47 s). The collapsed page shows up to COLLAPSED_ROWS_PER_PAGE rows, then pages too: a
65,000-message event with every tenth message edited has 26,000 rows nothing can fold (16 MB of
HTML). A link to a highlight on another page carries that page; one to a highlight folded into a
collapsed run opens the full view at the page holding its message (`?full=1&at=before-12`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctxaudit.ingest.selectors import positive_int

FULL_ROWS_PER_PAGE = 200
COLLAPSED_ROWS_PER_PAGE = 1000


def _row_of_message(rows: Iterable[Any]) -> dict[tuple[str, int], int]:
    """{(side, message index): the top-level row showing it} (a "replaced" row holds several)."""
    out: dict[tuple[str, int], int] = {}
    for i, row in enumerate(rows):
        for r in (row, *row.before_rows, *row.after_rows):
            if r.before is not None:
                out.setdefault(("before", r.before.index), i)
            if r.after is not None:
                out.setdefault(("after", r.after.index), i)
    return out


def _at(raw: str) -> tuple[str, int] | None:
    side, _, index = raw.partition("-")
    n = positive_int(index) if index != "0" else 0
    return (side, n) if side in ("before", "after") and n is not None else None


def diff_page(
    params: Mapping[str, str], rows: tuple[Any, ...], *, full: bool, placed: frozenset[str], messages: int
) -> dict[str, Any]:
    """The rows to render and the pager of the event page.

    params: the query string (`page`: 1-based, clamped; `at`: "<side>-<message index>", the page
    holding that message wins). rows: ContextDiff.rows of the view (`full` or collapsed);
    placed: ContextDiff.anchors (highlights in those rows); messages: both contexts' messages
    together (the full view has at most that many rows).
    Returns {"diff_rows", "full_page", "full_pages", "href"}; href(anchor, span) is the link to a
    highlight whose evidence span is {"side", "message_index", …}."""
    per = FULL_ROWS_PER_PAGE if full else COLLAPSED_ROWS_PER_PAGE
    pages = max(1, -(-len(rows) // per))
    where = _row_of_message(rows) if pages > 1 else {}
    page = min(positive_int(params.get("page", ""), 1) or 1, pages)
    at = _at(params.get("at", ""))
    if at is not None and at in where:
        page = where[at] // per + 1
    start = (page - 1) * per
    view = "full=1&" if full else ""

    def href(anchor: str, span: Mapping[str, Any]) -> str:
        if anchor in placed:
            row = where.get((span["side"], span["message_index"]))
            on = page if row is None else row // per + 1
            return f"#{anchor}" if on == page else f"?{view}page={on}#{anchor}"
        # Folded into a collapsed run: the full view shows it, on one page when it has one only.
        if messages <= FULL_ROWS_PER_PAGE:
            return f"?full=1#{anchor}"
        return f"?full=1&at={span['side']}-{span['message_index']}#{anchor}"

    return {"diff_rows": rows[start : start + per], "full_page": page, "full_pages": pages, "href": href}
