"""Reads of the event list: one page of events, newest first, by keyset (issue 13).

At 100,000 events the list was 259 × a keyset query of its 50 rows: findings were counted with a
GROUP BY over every matching event before the LIMIT, the paginator's COUNT repeated that join,
and a deep page made the database skip (OFFSET) every newer row. Here:

- rows are fetched by keyset: "older than the last row shown" (`after=<cursor>`) or "newer than
  the first" (`before=<cursor>`), so page 2,000 costs what page 1 costs; a bare `?page=N` (an old
  link) still works through OFFSET;
- finding counts are made for the page's rows only, from the findings ui.event_rows reads for
  them anyway (a correlated subquery per row cost as much again as the rows);
- the total is counted up to COUNT_CAP + 1 rows: "page 3 of 12" while it is small, "more than
  1,000 events" beyond (the oldest page is still one click: the same keyset, reversed).

The rows come with their (capped) count in one query; with ui.event_rows.row_summaries, three
queries whatever the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

from django.db.models import IntegerField, Q, QuerySet, Subquery
from django.db.models.expressions import RawSQL

from ctxaudit.ingest.models import Event

COUNT_CAP = 1000
_HEAVY = ("before", "after", "report", "rules", "metadata")  # what a list never shows


def positive_int(raw: str, default: int | None = None, *, cap: int = 10**6) -> int | None:
    """`raw` as an int in 1..cap when it is one written in ASCII digits ("²".isdigit() is True,
    int("²") raises), else `default`."""
    if raw.isascii() and raw.isdigit() and len(raw) <= len(str(cap)) and 0 < int(raw) <= cap:
        return int(raw)
    return default


def cursor_of(event: Event | ListRow) -> str:
    """The keyset position of a row: "<occurred_at ISO 8601>_<id>"."""
    return f"{event.occurred_at.isoformat()}_{event.pk}"


def parse_cursor(raw: str) -> tuple[datetime, int] | None:
    """(occurred_at, id) of a cursor_of() string; None when it is not one."""
    at, sep, pk = raw.rpartition("_")
    if not sep or not (pk.isascii() and pk.isdigit()) or len(pk) > 18:
        return None
    try:
        when = datetime.fromisoformat(at)
    except ValueError:
        return None
    return (when, int(pk)) if when.tzinfo is not None else None


@dataclass
class EventPage:
    """One page of the list, with what its pager needs (links as query strings)."""

    rows: list[Any]  # Events, or ListRows (event_page's `columns`)
    number: int | None  # 1-based; None on the oldest page of a list too long to count
    count: int  # exact when not capped, else COUNT_CAP + 1
    capped: bool
    size: int
    newer: str | None = None  # query string of the page before (newer rows), None on the first
    older: str | None = None
    newest: str | None = None
    oldest: str | None = None
    query: dict[str, str] = field(default_factory=dict)

    def __iter__(self) -> Any:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def num_pages(self) -> int | None:
        return None if self.capped else max(1, -(-self.count // self.size))

    @property
    def multiple(self) -> bool:
        return self.capped or self.count > self.size

    @property
    def label(self) -> str:
        """ "page 3 of 12", "page 3" (too many to count), "oldest page", or "" (unknown)."""
        if self.number is not None:
            return f"page {self.number}" + (f" of {self.num_pages}" if self.num_pages else "")
        return "oldest page" if self.older is None else ""


def _link(query: dict[str, str], **extra: str | int) -> str:
    return urlencode({**query, **{k: str(v) for k, v in extra.items()}})


def _with_count(rows_qs: QuerySet[Event], counted: QuerySet[Event]) -> QuerySet[Event]:
    """rows_qs with `list_total`: the rows of `counted` up to COUNT_CAP + 1, counted by the
    database in the same query (an uncorrelated subquery: PostgreSQL runs it once, as an InitPlan).
    One round trip instead of two: at 50 rows a query costs more in Django and on the wire than
    in the database (issue 13)."""
    sql, params = counted.order_by().values("pk")[: COUNT_CAP + 1].query.sql_with_params()
    total = RawSQL(f"SELECT COUNT(*) FROM ({sql}) AS counted", params, output_field=IntegerField())  # noqa: S608, S611 - Django's own SQL of `counted`; its values stay parameters
    return rows_qs.annotate(list_total=total)


class ListRow(SimpleNamespace):
    """One row of a page read by columns: each column an attribute (`session__external_id`
    too), `pk` the id. Reading 51 rows into models (and their sessions) cost about as much
    again as reading them (issue 13)."""

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__(pk=values["id"], **values)


def _rows(qs: QuerySet[Any], by_columns: bool) -> list[Any]:
    return [ListRow(v) for v in qs] if by_columns else list(qs)


def event_page(
    qs: QuerySet[Event],
    *,
    params: dict[str, str],
    query: dict[str, str],
    size: int,
    annotations: Mapping[str, Any] | None = None,
    columns: Sequence[str] | None = None,
) -> EventPage:
    """The page of `qs` (already filtered and scoped) that `params` names: "after"/"before" (a
    cursor), "page" (a number, or "last"), with "n" carrying the page number along keyset links.
    `query`: the filters, kept in every link. `annotations`: expressions added to the rows only
    (not to what is counted). `columns`: the rows are ListRows of these columns (with "id", and
    the annotations and `list_total`), not Events. Without, Events that leave their contexts,
    rules, report and metadata unread (deferred). One query, the rows with their count (a page number or a cursor past the end
    takes a second: the oldest page, or the count)."""
    if qs.query.is_empty():
        return EventPage([], 1, 0, False, size, query=query)
    ordered = qs.order_by("-occurred_at", "-id")
    by_columns = columns is not None
    rows_qs = _with_count(ordered if by_columns else ordered.defer(*_HEAVY), qs)
    if annotations:
        rows_qs = rows_qs.annotate(**annotations)
    if columns is not None:
        rows_qs = rows_qs.values(*columns, "list_total", *(annotations or {}))

    number: int | None
    after = parse_cursor(params.get("after", ""))
    before = parse_cursor(params.get("before", ""))
    raw_n = params.get("n", "")
    carried = positive_int(raw_n)
    raw_page = params.get("page", "")
    wanted = positive_int(raw_page, 1) or 1
    rows: list[Any] = []
    # Each query takes one row more than it shows: whether there is a page beyond it.
    if after is not None:
        at, pk = after
        # occurred_at <= at is implied by the OR: it lets the database range-scan the index.
        older = rows_qs.filter(Q(occurred_at__lt=at) | Q(occurred_at=at, id__lt=pk), occurred_at__lte=at)
        rows = _rows(older[: size + 1], by_columns)
        has_newer, has_older = True, len(rows) > size
        rows, number = rows[:size], carried
    elif before is not None:
        at, pk = before
        newer = rows_qs.filter(Q(occurred_at__gt=at) | Q(occurred_at=at, id__gt=pk), occurred_at__gte=at)
        rows = _rows(newer.order_by("occurred_at", "id")[: size + 1], by_columns)
        has_newer, has_older = len(rows) > size, True
        rows, number = list(reversed(rows[:size])), carried
        if not has_newer:
            number = 1
    elif wanted > 1 and raw_page != "last":
        # An old-style page number: the skipped rows are counted off in a subquery over the
        # index alone, so the finding counts are computed for this page's rows only.
        window = ordered.values("pk")[(wanted - 1) * size : wanted * size + 1]
        rows = _rows(rows_qs.filter(pk__in=Subquery(window)), by_columns)
        has_newer, has_older = True, len(rows) > size
        rows, number = rows[:size], wanted
    elif raw_page != "last":
        rows = _rows(rows_qs[: size + 1], by_columns)
        has_newer, has_older = False, len(rows) > size
        rows, number = rows[:size], 1
        if not rows:  # the first page is empty: nothing matches
            return EventPage([], 1, 0, False, size, query=query)
    if not rows and after is None and before is None:
        # The oldest page (asked for, or a page number past the end), by the same keyset
        # reversed: the oldest `size` rows, of which it shows as many as are left over.
        rows = _rows(rows_qs.order_by("occurred_at", "id")[:size], by_columns)[::-1]
        count = rows[0].list_total if rows else 0
        capped = count > COUNT_CAP
        left = size if capped or count % size == 0 else count % size
        rows = rows[len(rows) - left :] if left < len(rows) else rows
        has_newer, has_older = capped or count > size, False
        number = None if capped else max(1, -(-count // size))
    elif rows:
        count = rows[0].list_total
        capped = count > COUNT_CAP
    else:  # a cursor past the end
        count = ordered.order_by()[: COUNT_CAP + 1].count()
        capped = count > COUNT_CAP

    page = EventPage(rows, number, count, capped, size, query=query)
    if rows and has_newer:
        page.newer = _link(query, before=cursor_of(rows[0]), **({"n": number - 1} if number else {}))
        page.newest = _link(query)
    if rows and has_older:
        page.older = _link(query, after=cursor_of(rows[-1]), **({"n": number + 1} if number else {}))
        page.oldest = _link(query, page="last")
    return page
