"""Reads for rule decay timelines: one session's series, and decay aggregated across sessions.

`session_timeline` runs a fixed number of queries (events, rules in force, rule outcomes)
whatever the session's size; everything else is arithmetic on those rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Avg, Count, F, FloatField, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Cast, Coalesce

from ctxaudit.audits.models import Finding, RuleOutcome
from ctxaudit.ingest.models import Event, Session, SessionRule
from ctxaudit.projects.models import Project
from ctxaudit.timelines.decay import DecayRun, decay_runs

DECAY_KIND = "rule_decay"
RETAINED, WEAKENED, MISSING = "retained", "weakened", "missing"


def _count_of(rows: QuerySet[Any], by: str) -> Coalesce:
    """How many of `rows` (already filtered on OuterRef) there are, as a correlated subquery."""
    sub = rows.order_by().values(by).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(sub, output_field=IntegerField()), Value(0))


def session_list_page(sessions: QuerySet[Session], number: str | int | None, per_page: int) -> Page[Session]:
    """Page `number` (Paginator.get_page: bad or out-of-range numbers give the first or last) of
    `sessions`, newest activity first (Session.last_event_at, sessions without events last, then
    the newest session). Its rows are annotated compressions, failing (events with verdict fail),
    decays (rule_decay findings of its events) and last_at (= last_event_at), project loaded.

    Issue 13: the list joined every event and finding of every session, grouped and sorted them
    before its LIMIT (1 s at 100,000 events). Now the page's ids come from an index
    (session_list_order) in a subquery, and the counts are correlated subqueries evaluated for
    those rows only: an OFFSET in the same query would evaluate them for every skipped row too.
    Two queries: the count and the rows."""
    ordered = sessions.order_by(F("last_event_at").desc(nulls_last=True), "-pk")
    page = Paginator(ordered, per_page).get_page(number)
    window = ordered.values("pk")[page.start_index() - 1 : page.end_index()] if page.paginator.count else None
    events = Event.objects.filter(session=OuterRef("pk"))
    rows = (
        Session.objects.filter(pk__in=Subquery(window))
        .select_related("project")
        .annotate(
            compressions=_count_of(events, "session"),
            failing=_count_of(events.filter(verdict="fail"), "session"),
            decays=_count_of(Finding.objects.filter(event__session=OuterRef("pk"), kind=DECAY_KIND), "kind"),
            last_at=F("last_event_at"),
        )
        .order_by(F("last_event_at").desc(nulls_last=True), "-pk")
        if window is not None
        else Session.objects.none()
    )
    page.object_list = list(rows)
    return page


@dataclass(slots=True)
class TimelineEvent:
    """One compression event of the session; `index` is its position in session order (0-based)."""

    id: int
    index: int
    sequence: int | None
    occurred_at: datetime
    strategy: str
    model: str
    status: str
    verdict: str | None


@dataclass(slots=True)
class TimelinePoint:
    """One rule at one compression.

    state: retained | weakened | missing once the event is checked; "pending" or "error" while it
    is not (strength None then: there is nothing to measure yet). A checked event without an
    outcome for a rule in force counts as missing, strength 0.0.
    """

    event: TimelineEvent
    state: str
    strength: float | None
    first_weakened: bool = False
    first_missing: bool = False
    decay: bool = False  # a decay run completes here (a rule_decay finding sits on this event)
    demoted: bool = False  # the rule left the system role here (its text may still be retained)

    @property
    def shown_state(self) -> str:
        """What the page shows: "demoted" for a retained rule that left the system role (never the
        green "retained"); the state otherwise. The API keeps `state` and `demoted` apart."""
        return "demoted" if self.demoted and self.state == RETAINED else self.state


@dataclass(slots=True)
class RuleTimeline:
    rule_id: str
    text: str
    severity: str
    points: list[TimelinePoint]
    first_weakened: TimelinePoint | None = None
    first_missing: TimelinePoint | None = None
    decays: list[DecayRun] = field(default_factory=list)

    @property
    def last(self) -> TimelinePoint | None:
        checked = [p for p in self.points if p.strength is not None]
        return checked[-1] if checked else None

    @property
    def min_strength(self) -> float | None:
        values = [p.strength for p in self.points if p.strength is not None]
        return min(values) if values else None


@dataclass(slots=True)
class SessionTimeline:
    session: Session
    decay_compressions: int
    events: list[TimelineEvent]
    rules: list[RuleTimeline]


def session_events_ordered(session: Session) -> QuerySet[Event]:
    """The session's compression events in session order: sequence (unnumbered last), time, id."""
    return Event.objects.filter(session=session).order_by(
        F("sequence").asc(nulls_last=True), "occurred_at", "id"
    )


def session_timeline(session: Session, *, decay_compressions: int | None = None) -> SessionTimeline:
    """Every rule in force in `session` across its compression events, in session order.

    Three queries. A rule's series starts at its first appearance (the earliest event, in
    session order, that brought it or has an outcome for it); from there on a checked event
    without an outcome for it counts as missing (strength 0). `decay_compressions` defaults to
    the project's setting (Project.decay_compressions; `session.project` is read, so select it).
    """
    n = session.project.decay_compressions if decay_compressions is None else decay_compressions
    events = [
        TimelineEvent(
            e["id"], i, e["sequence"], e["occurred_at"], e["strategy"], e["model"], e["status"], e["verdict"]
        )
        for i, e in enumerate(
            session_events_ordered(session).values(
                "id", "sequence", "occurred_at", "strategy", "model", "status", "verdict"
            )
        )
    ]
    index_of = {e.id: e.index for e in events}

    rules: dict[str, dict[str, Any]] = {}
    for sr in (
        SessionRule.objects.filter(session=session)
        .order_by("id")
        .values("rule_id", "text", "severity", "first_event_id")
    ):
        start = index_of.get(sr["first_event_id"]) if sr["first_event_id"] is not None else None
        rules[sr["rule_id"]] = {"text": sr["text"], "severity": sr["severity"], "start": start}

    # The one big read (events × rules rows): numbers only, no text.
    by_rule: dict[str, dict[int, tuple[str, float | None]]] = {}
    demoted: set[tuple[str, int]] = set()
    for event_id, rule_id, state, strength, was_demoted in RuleOutcome.objects.filter(
        event__session=session
    ).values_list("event_id", "rule_id", "state", "strength", "demoted"):
        by_rule.setdefault(rule_id, {})[index_of[event_id]] = (
            state,
            0.0 if strength < 0 else 1.0 if strength > 1 else strength,
        )
        if was_demoted:
            demoted.add((rule_id, index_of[event_id]))
    unknown = [rid for rid in by_rule if rid not in rules]
    if (
        unknown
    ):  # outcomes for a rule no SessionRule row records (e.g. rows written before rules_in_force existed)
        for rid, text in (
            RuleOutcome.objects.filter(event__session=session, rule_id__in=unknown)
            .values_list("rule_id", "text")
            .distinct()
        ):
            rules.setdefault(rid, {"text": text, "severity": "high", "start": None})
    for rid, at in by_rule.items():
        first = min(at)
        if rules[rid]["start"] is None or first < rules[rid]["start"]:
            rules[rid]["start"] = first

    # Where a rule in force has no outcome: missing on a checked event, no strength on the others.
    fallback: list[tuple[str, float | None]] = [
        (MISSING, 0.0) if e.status == Event.Status.CHECKED else (e.status, None) for e in events
    ]
    timelines = []
    for rule_id, r in sorted(
        rules.items(), key=lambda kv: (kv[1]["start"] if kv[1]["start"] is not None else 0, kv[0])
    ):
        start = r["start"] if r["start"] is not None else 0
        at = by_rule.get(rule_id, {})
        points = []
        for e in events[start:]:
            state, value = at.get(e.index, fallback[e.index])
            points.append(TimelinePoint(e, state, value, demoted=(rule_id, e.index) in demoted))
        tl = RuleTimeline(rule_id, r["text"], r["severity"], points)
        tl.first_weakened = next((p for p in points if p.state == WEAKENED), None)
        tl.first_missing = next((p for p in points if p.state == MISSING), None)
        if tl.first_weakened:
            tl.first_weakened.first_weakened = True
        if tl.first_missing:
            tl.first_missing.first_missing = True
        tl.decays = decay_runs([p.strength for p in points], n)
        for run in tl.decays:
            points[run.end].decay = True
        timelines.append(tl)
    return SessionTimeline(session, n, events, timelines)


# --- across sessions -------------------------------------------------------------------------

RATE = FloatField()


def _rates(qs: QuerySet[Any, Any]) -> QuerySet[Any, Any]:
    """Counts, rates and average strength per group, computed by the database."""
    rated: QuerySet[Any, Any] = qs.annotate(
        outcomes=Count("id"),
        weakened=Count("id", filter=Q(state=WEAKENED)),
        missing=Count("id", filter=Q(state=MISSING)),
        avg_strength=Avg("strength"),
        sessions=Count("event__session", distinct=True),
    ).annotate(
        lost=F("weakened") + F("missing"),
        weakened_rate=Cast(F("weakened"), RATE) / Cast(F("outcomes"), RATE),
        missing_rate=Cast(F("missing"), RATE) / Cast(F("outcomes"), RATE),
        loss_rate=Cast(F("weakened") + F("missing"), RATE) / Cast(F("outcomes"), RATE),
    )
    return rated


@dataclass(slots=True)
class DecayOverview:
    by_strategy: list[dict[str, Any]]
    by_rule: list[dict[str, Any]]
    models: list[str]
    total_outcomes: int
    sessions: list[dict[str, Any]]  # sessions with the most decay findings, for links to timelines


def decay_overview(
    projects: QuerySet[Project], *, project: str = "", strategy: str = "", model: str = "", limit: int = 100
) -> DecayOverview:
    """Which rules weaken, go missing and decay most, by strategy and model, over `projects`.

    Aggregates run in the database (values + annotate); Python only merges the aggregated rows
    with the count of rule_decay findings of the same groups. by_strategy: one row per
    (strategy, model), safest first (highest average strength, then fewest missing); by_rule: the
    `limit` worst (project, rule, strategy, model) groups: lowest average strength (a missing
    rule counts 0, so it weighs losses and weakening together), then most missing.
    """
    outcomes = RuleOutcome.objects.filter(event__project__in=projects)
    decays = Finding.objects.filter(kind=DECAY_KIND, event__project__in=projects)
    if project:
        outcomes = outcomes.filter(event__project__name=project)
        decays = decays.filter(event__project__name=project)
    models = sorted(m for m in outcomes.values_list("event__model", flat=True).distinct() if m)
    if strategy:
        outcomes = outcomes.filter(event__strategy_family=strategy)
        decays = decays.filter(event__strategy_family=strategy)
    if model:
        outcomes = outcomes.filter(event__model=model)
        decays = decays.filter(event__model=model)

    strat_keys = ("event__strategy_family", "event__model")
    decay_by_strat = {
        (d["event__strategy_family"], d["event__model"]): d
        for d in decays.values(*strat_keys).annotate(
            n=Count("id"), decayed_sessions=Count("event__session", distinct=True)
        )
    }
    by_strategy = list(
        _rates(outcomes.values(*strat_keys)).order_by(
            "-avg_strength", "missing_rate", "event__strategy_family", "event__model"
        )
    )
    for row in by_strategy:
        d = decay_by_strat.get((row["event__strategy_family"], row["event__model"]), {})
        row["decays"] = d.get("n", 0)
        row["decayed_sessions"] = d.get("decayed_sessions", 0)

    rule_keys = ("event__project__name", "rule_id", "text", "event__strategy_family", "event__model")
    by_rule = list(
        _rates(outcomes.values(*rule_keys)).order_by("avg_strength", "-missing_rate", "rule_id")[:limit]
    )
    wanted_rules = {r["rule_id"] for r in by_rule}
    decay_by_rule = {
        (d["event__project__name"], d["rule_id"], d["event__strategy_family"], d["event__model"]): d["n"]
        for d in decays.filter(rule_id__in=wanted_rules)
        .values("event__project__name", "rule_id", "event__strategy_family", "event__model")
        .annotate(n=Count("id"))
    }
    for row in by_rule:
        row["decays"] = decay_by_rule.get(
            (row["event__project__name"], row["rule_id"], row["event__strategy_family"], row["event__model"]),
            0,
        )
    total = sum(r["outcomes"] for r in by_strategy)
    sessions = list(
        decays.values("event__session_id", "event__session__external_id", "event__project__name")
        .annotate(decays=Count("id"), rules=Count("rule_id", distinct=True))
        .order_by("-decays", "event__session__external_id")[:20]
    )
    return DecayOverview(by_strategy, by_rule, models, total, [dict(s) for s in sessions])
