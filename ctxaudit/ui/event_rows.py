"""What one row of the event list says happened: the rules the compression lost (id and the
start of the text), else the worst finding, and the top severity — read for one page of events
in one query, whatever the page's query (the list's own query and pagination live in events.py).

Also the list's filters by finding (severity at or above, finding kind) and by session id, as
subqueries, so they add no join to the list query and work with any pagination of it."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db import connection
from django.db.models import (
    Exists,
    F,
    Lookup,
    OuterRef,
    Q,
    QuerySet,
)

from ctxaudit.alerts.titles import kind_label
from ctxaudit.audits.models import Finding, RuleOutcome
from ctxaudit.engine.types import Severity
from ctxaudit.ingest.models import Event, Session
from ctxaudit.regression.models import ChecklistStep

SEVERITIES = tuple(s.value for s in sorted(Severity, key=lambda s: s.rank, reverse=True))  # critical first
LOST_SHOWN = 3  # lost rules named in a row; the rest are counted ("+2 more")
TEXT_START = 60  # characters of a rule text or finding message in a row
# When two findings share the top severity, the one about a lost rule names the row.
_KIND_ORDER = {"rule_missing": 0, "rule_weakened": 1, "rule_demoted": 2}
_STATE_ORDER = {"missing": 0, "weakened": 1}
SERIOUS = ("high", "critical")  # a row's findings count is red when one of them is this severe


def _rank(severity: str) -> int:
    try:
        return Severity(severity).rank
    except ValueError:
        return 0


def _start(text: str, n: int = TEXT_START) -> str:
    """The first non-empty line, whitespace folded, cut at n characters with an ellipsis."""
    line = " ".join(next((ln for ln in text.splitlines() if ln.strip()), "").split())
    return line if len(line) <= n else line[: n - 1].rstrip() + "…"


def _english(message: str) -> str:
    """The English half of a bilingual "中文 / English" message (the list is read in English first)."""
    head, sep, tail = message.partition(" / ")
    return tail if sep and tail.strip() else head


def filter_by_findings(qs: QuerySet[Event], *, severity: str = "", kind: str = "") -> QuerySet[Event]:
    """Events with a finding at `severity` or above (one of SEVERITIES) and/or of `kind`; an
    empty or unknown value filters nothing. Both given: one finding must match both."""
    cond = Q(event=OuterRef("pk"))
    if severity in SEVERITIES:
        cond &= Q(severity__in=[s for s in SEVERITIES if _rank(s) >= _rank(severity)])
    if kind:
        cond &= Q(kind=kind)
    if cond == Q(event=OuterRef("pk")):
        return qs
    return qs.filter(Exists(Finding.objects.filter(cond)))


class _AnyOf(Lookup):
    """`column = ANY(<one array parameter>)`: PostgreSQL plans `IN (5,000 literals)` in 21 ms, an
    array of them in 1.6 ms."""

    lookup_name = "any_of"
    prepare_rhs = False

    def get_db_prep_lookup(self, value: Any, connection: Any) -> Any:
        return "%s", (list(value),)  # one parameter: the whole list, sent as an array

    def as_sql(self, compiler: Any, connection: Any) -> Any:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        # Cast to the column's type: psycopg sends small ids as int2[], and int8 = ANY(int2[])
        # is not hashed (every element compared per row: 0.5 s for 1,111 sessions).
        array = f"{self.lhs.output_field.db_type(connection)}[]"
        return f"{lhs} = ANY({rhs}::{array})", (*lhs_params, *rhs_params)


SESSION_IDS_LISTED = 10_000  # sessions a session filter names by id; beyond, it joins


def filter_by_session(qs: QuerySet[Event], sessions: QuerySet[Session], text: str) -> QuerySet[Event]:
    """Events of `qs` whose session id contains `text` (case-insensitive), `sessions` being the
    sessions the user may see. An empty text filters nothing.

    One query first: the ids of the matching sessions, up to SESSION_IDS_LISTED. PostgreSQL
    cannot estimate how many session ids contain a string (it guesses a handful), so given the
    condition itself it planned for a few events: for `?session=` matching 1,111 of 5,000
    sessions it joined every event to every session (50 s at 100,000 events). Given the ids, it
    knows how many events that is, and walks the list newest first or reads those sessions'
    events, whichever is cheaper. None match: no query. More than SESSION_IDS_LISTED: the
    condition, as before."""
    if not text:
        return qs
    # SQLite takes a bounded number of query parameters (Django assumes 999), and the ids are
    # sent twice there: in the rows' condition and in their count (ingest.selectors._with_count).
    cap = connection.features.max_query_params
    listed = min(SESSION_IDS_LISTED, cap // 2 if cap else SESSION_IDS_LISTED)
    matching = sessions.filter(external_id__icontains=text).order_by()
    ids = list(matching.values_list("pk", flat=True)[: listed + 1])
    if not ids:
        return qs.none()
    if len(ids) <= listed:
        if connection.vendor == "postgresql":
            return qs.filter(_AnyOf(F("session_id"), ids))
        return qs.filter(session_id__in=ids)
    return qs.filter(session__external_id__icontains=text)


_OUTCOME, _FINDING, _STEPS = 0, 1, 2


def _page_reads_sql(vendor: str) -> str:
    """The UNION ALL of _page_reads as SQL text with three placeholders (the ids, thrice). Written
    out, not built by the ORM: building and compiling the querysets cost more than the database
    took to answer them, and on PostgreSQL the ids go as one array parameter, so the
    text is the same for every page and psycopg's statement cache keeps its parsed form."""
    outcome, finding, step = RuleOutcome._meta.db_table, Finding._meta.db_table, ChecklistStep._meta.db_table
    ids = "= ANY(%s::bigint[])" if vendor == "postgresql" else "IN (SELECT value FROM json_each(%s))"
    return (
        f"SELECT {_OUTCOME}, event_id, id, rule_id, state, '', text, demoted FROM {outcome} "  # noqa: S608 - table names from the models, ids a parameter
        f"WHERE event_id {ids} AND (state <> 'retained' OR demoted) "
        f"UNION ALL SELECT {_FINDING}, event_id, id, kind, severity, rule_id, message, FALSE FROM {finding} "
        f"WHERE event_id {ids} "
        f"UNION ALL SELECT {_STEPS}, event_id, COUNT(*), '', '', '', '', FALSE FROM {step} "
        f"WHERE event_id {ids} AND status <> '{ChecklistStep.Status.OPEN.value}' GROUP BY event_id"
    )


def _page_reads(ids: list[int]) -> list[tuple[Any, ...]]:
    """The lost rules (RuleOutcome rows not retained, or demoted), the findings and the
    checklist steps done of these events, in one UNION ALL (issue 13: at 50 rows each query of
    the list cost about as much in Django and on the wire as the keyset read of the rows):
    (source, event id, row id, a, b, c, text, flag) with source _OUTCOME (rule id, state, "",
    rule text, demoted), _FINDING (kind, severity, rule id, message, False) or _STEPS (row id
    is the number of steps marked done or not applicable; one row per event that has any).
    Unordered."""
    param: Any = ids if connection.vendor == "postgresql" else json.dumps(ids)
    with connection.cursor() as cursor:
        cursor.execute(_page_reads_sql(connection.vendor), [param, param, param])
        return [(*r[:7], bool(r[7])) for r in cursor.fetchall()]


def row_summaries(events: Iterable[Any]) -> dict[int, dict[str, Any]]:
    """{event id: {"severity", "lost": [{"rule_id", "text", "state", "demoted"}], "lost_more",
    "worst": {"kind", "label", "severity", "text", "rule_id"} | None, "n_findings", "n_serious"}}
    for the given events.

    severity: the highest finding severity ("" without findings). lost: rules missing, weakened
    or demoted (missing first), at most LOST_SHOWN, texts cut to TEXT_START characters; lost_more:
    how many more. worst: the most severe finding (a lost rule's finding first among equals).
    n_findings, n_serious: how many findings, how many of them high or critical (counted from the
    same rows, not by a subquery per event). checklist_done: the troubleshooting checklist's
    steps marked done or not applicable. One query (_page_reads)."""
    ids = [e.pk for e in events]
    if not ids:
        return {}
    lost: dict[int, list[dict[str, Any]]] = defaultdict(list)
    worst: dict[int, tuple[tuple[int, int, int], dict[str, Any]]] = {}
    n_findings: dict[int, int] = defaultdict(int)
    n_serious: dict[int, int] = defaultdict(int)
    steps_done: dict[int, int] = {}
    for src, event_id, pk, a, b, c, text, flag in sorted(_page_reads(ids), key=lambda r: r[2]):
        if src == _STEPS:
            steps_done[event_id] = pk
            continue
        if src == _OUTCOME:  # a: rule id, b: state, text: the rule's text, flag: demoted
            lost[event_id].append({"rule_id": a, "text": _start(text), "state": b, "demoted": flag})
            continue
        # a finding: a: kind, b: severity, c: rule id, text: the message
        n_findings[event_id] += 1
        n_serious[event_id] += b in SERIOUS
        key = (-_rank(b), _KIND_ORDER.get(a, 9), pk)
        if event_id not in worst or key < worst[event_id][0]:
            worst[event_id] = (
                key,
                {
                    "kind": a,
                    "label": kind_label(a),
                    "severity": b,
                    "rule_id": c or "",
                    "text": _start(_english(text), 100),
                },
            )
    out = {}
    for pk in ids:
        rules = sorted(lost.get(pk, []), key=lambda r: _STATE_ORDER.get(r["state"], 2))
        w = worst.get(pk)
        out[pk] = {
            "severity": w[1]["severity"] if w else "",
            "lost": rules[:LOST_SHOWN],
            "lost_more": max(len(rules) - LOST_SHOWN, 0),
            "worst": w[1] if w else None,
            "n_findings": n_findings.get(pk, 0),
            "n_serious": n_serious.get(pk, 0),
            "checklist_done": steps_done.get(pk, 0),
        }
    return out


def matching_findings(events: Iterable[Event], kinds: Iterable[str]) -> dict[int, dict[str, Any]]:
    """{event id: the event's most severe finding among `kinds`} as {"kind", "label", "severity",
    "rule_id", "text", "count"} (count: how many findings of those kinds the event has): which
    finding put an incident under a symptom row. Events without one are left out."""
    ids = [e.pk for e in events]
    wanted = list(kinds)
    if not ids or not wanted:
        return {}
    best: dict[int, tuple[tuple[int, int, int], dict[str, Any]]] = {}
    counts: dict[int, int] = defaultdict(int)
    rows = Finding.objects.filter(event_id__in=ids, kind__in=wanted).values(
        "id", "event_id", "kind", "severity", "rule_id", "message"
    )
    for f in rows:
        counts[f["event_id"]] += 1
        key = (-_rank(f["severity"]), _KIND_ORDER.get(f["kind"], 9), f["id"])
        if f["event_id"] not in best or key < best[f["event_id"]][0]:
            best[f["event_id"]] = (
                key,
                {
                    "kind": f["kind"],
                    "label": kind_label(f["kind"]),
                    "severity": f["severity"],
                    "rule_id": f["rule_id"] or "",
                    "text": _start(_english(f["message"]), 120),
                },
            )
    return {pk: {**b, "count": counts[pk]} for pk, (_, b) in best.items()}
