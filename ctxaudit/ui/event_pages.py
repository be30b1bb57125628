"""The event page's diff rows a page at a time, and where each highlight's link goes (issue 13).

`?full=1` shows every row, FULL_ROWS_PER_PAGE (or FULL_PAGE_CHARS characters) at a time (a
100k-message event returned 45 MB of HTML after 47 s), and builds only that page's rows: the
pages are cut from the rows' plans (their messages and characters), before any hunk is made. The collapsed page shows up to COLLAPSED_ROWS_PER_PAGE rows, then pages too: a
65,000-message event with every tenth message edited has 26,000 rows nothing can fold (16 MB of
HTML). A link to a highlight on another page carries that page; one to a highlight folded into a
collapsed run opens the full view at the page holding its message (`?full=1&at=before-12`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from typing import Any

from ctxaudit.engine.diff import DiffPlan, RowPlan
from ctxaudit.ingest.selectors import positive_int

FULL_ROWS_PER_PAGE = 200
# ~50 KB of text a page: 200 rows of tool output were 170 KB of HTML, twice the event page's time.
FULL_PAGE_CHARS = 50_000
COLLAPSED_ROWS_PER_PAGE = 1000


def _row_of_message(plans: Sequence[RowPlan]) -> dict[tuple[str, int], int]:
    """{(side, message index): the top-level row showing it} (a "replaced" row holds several)."""
    out: dict[tuple[str, int], int] = {}
    for i, plan in enumerate(plans):
        for key in plan.messages:
            out.setdefault(key, i)
    return out


def _at(raw: str) -> tuple[str, int] | None:
    side, _, index = raw.partition("-")
    n = positive_int(index) if index != "0" else 0
    return (side, n) if side in ("before", "after") and n is not None else None


def _page_starts(plans: Sequence[RowPlan], per: int, budget: int | None) -> list[int]:
    """The first row of each page: at most `per` rows, and (with a budget) no more characters of
    message text than `budget` unless one row alone has more."""
    starts = [0]
    chars = 0
    for i, plan in enumerate(plans):
        c = plan.chars if budget else 0
        if i > starts[-1] and (i - starts[-1] >= per or (budget is not None and chars + c > budget)):
            starts.append(i)
            chars = 0
        chars += c
    return starts


def diff_page(
    params: Mapping[str, str],
    plan: DiffPlan,
    *,
    full: bool,
    placed: frozenset[str],
    messages: int,
    characters: int,
) -> dict[str, Any]:
    """The rows to render and the pager of the event page.

    params: the query string (`page`: 1-based, clamped; `at`: "<side>-<message index>", the page
    holding that message wins). plan: engine.diff.plan_contexts of the view (`full` or
    collapsed); only the page's rows are built (and the collapsed view's were already, for its
    anchors). placed: the anchors in the rows (DiffPlan.placeable uncollapsed, ContextDiff.anchors
    collapsed); messages, characters: both
    contexts' messages and their text together (what the full view would show).
    A full page holds FULL_ROWS_PER_PAGE rows or FULL_PAGE_CHARS characters of message text,
    whichever comes first; a collapsed page COLLAPSED_ROWS_PER_PAGE rows (its runs are folded).
    Returns {"diff_rows", "full_page", "full_pages", "href"}; href(anchor, span) is the link to a
    highlight whose evidence span is {"side", "message_index", …}."""
    per = FULL_ROWS_PER_PAGE if full else COLLAPSED_ROWS_PER_PAGE
    starts = _page_starts(plan.plans, per, FULL_PAGE_CHARS if full else None)
    pages = len(starts)
    where = _row_of_message(plan.plans) if pages > 1 else {}

    def page_of(row: int) -> int:
        return bisect_right(starts, row)

    page = min(positive_int(params.get("page", ""), 1) or 1, pages)
    at = _at(params.get("at", ""))
    if at is not None and at in where:
        page = page_of(where[at])
    start = starts[page - 1]
    end = starts[page] if page < pages else len(plan)
    view = "full=1&" if full else ""

    def href(anchor: str, span: Mapping[str, Any]) -> str:
        if anchor in placed:
            row = where.get((span["side"], span["message_index"]))
            on = page if row is None else page_of(row)
            return f"#{anchor}" if on == page else f"?{view}page={on}#{anchor}"
        # Folded into a collapsed run: the full view shows it, on its first page when it has one.
        if messages <= FULL_ROWS_PER_PAGE and characters <= FULL_PAGE_CHARS:
            return f"?full=1#{anchor}"
        return f"?full=1&at={span['side']}-{span['message_index']}#{anchor}"

    return {"diff_rows": plan.rows(start, end), "full_page": page, "full_pages": pages, "href": href}
