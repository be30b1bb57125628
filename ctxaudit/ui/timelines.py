"""Session timeline page and cross-session decay page (issue 5).

Charts are server-side SVG: Python computes numbers only (coordinates, labels, URLs); the
templates turn them into markup with autoescaping on, so rule text and session ids stay text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from ctxaudit.alerts.selectors import open_alert_counts, projects_with_open_alerts
from ctxaudit.ingest.models import Event, Session
from ctxaudit.projects.access import projects_for_user, session_for_user
from ctxaudit.timelines.selectors import (
    RuleTimeline,
    SessionTimeline,
    TimelineEvent,
    decay_overview,
    session_list_page,
    session_timeline,
)

RULES_PER_PAGE = 10
# A chart page holds at most about this many points (charts + table views), so that a session of
# 500 compressions renders 5 rule charts a page instead of 10: the page stays fast whatever the size.
POINTS_PER_PAGE = 2500

# Chart geometry, in SVG user units (1 unit = 1 CSS px at the SVG's natural width).
LEFT, RIGHT, TOP, BOTTOM = 48, 24, 34, 30
PLOT_H = 140
# A chart whose events fit FIT_WIDTH units at STEP_MIN or more apart is drawn FIT_WIDTH wide and
# scaled by CSS to the page width (`fit`, viewBox + width:100%); a longer session keeps STEP_MIN
# per event at its natural size and scrolls sideways.
STEP_MIN, FIT_WIDTH = 10, 1000
# Room a "first weakened"/"first missing" label needs (11 px bold, 14 characters) to stay inside.
MARK_LABEL_W = 100
# Shapes (and glyphs in the table) carry the state, so the chart reads without colour.
GLYPHS = {"retained": "●", "weakened": "▼", "missing": "✕", "demoted": "◆", "pending": "…", "error": "!"}
# A demoted rule keeps its text (state "retained") but left the system role: the page says so.
STATE_TEXT = {"demoted": "demoted (text kept, outside the system role)"}


@dataclass(slots=True)
class Mark:
    x: float
    label: str
    kind: str  # "weakened" | "missing": line style and label row
    anchor: str  # text-anchor, so a label near the right edge stays inside the chart
    label_y: float


@dataclass(slots=True)
class RuleChart:
    rule: RuleTimeline
    dom_id: str
    width: float
    height: float
    points: list[dict[str, Any]]  # one per compression since the rule's first appearance (table rows)
    markers: list[dict[str, Any]]  # the checked ones (chart points)
    segments: list[str]  # polyline "x,y x,y ..." strings; a gap where an event is unchecked
    marks: list[Mark]
    summary: str


@dataclass(slots=True)
class Axis:
    width: float
    height: float
    step: float
    fit: bool
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    plot_bottom: float
    plot_right: float
    left: float = LEFT
    top: float = TOP
    x_label_y: float = TOP + PLOT_H + 18


def _seq_label(e: TimelineEvent) -> str:
    return str(e.sequence) if e.sequence is not None else f"#{e.id}"


def rules_per_page(n_events: int) -> int:
    return max(1, min(RULES_PER_PAGE, POINTS_PER_PAGE // max(n_events, 1)))


def timeline_charts(
    tl: SessionTimeline, rules: list[RuleTimeline], *, offset: int = 0
) -> tuple[Axis, list[RuleChart]]:
    """Chart geometry for `rules` of `tl`: every chart shares the session's x axis (one column per
    event in session order) and a 0..1 strength y axis. `offset`: index of rules[0] in tl.rules
    (chart ids are rule-<index in the session>, stable across pages)."""
    n = len(tl.events)
    plot_w = FIT_WIDTH - LEFT - RIGHT
    step = max(STEP_MIN, plot_w / max(n - 1, 1))
    fit = step * max(n - 1, 0) <= plot_w
    width = float(FIT_WIDTH) if fit else round(LEFT + step * (n - 1) + RIGHT, 1)
    # A single compression sits in the middle of the plot, not against the y axis.
    x0 = LEFT + plot_w / 2 if n == 1 else LEFT
    every = max(1, math.ceil(40 / step))
    axis = Axis(
        width=width,
        height=TOP + PLOT_H + BOTTOM,
        step=step,
        fit=fit,
        x_ticks=[
            (round(x0 + e.index * step, 1), _seq_label(e))
            for e in tl.events
            if e.index % every == 0 or e.index == n - 1
        ],
        y_ticks=[(round(TOP + (1 - v) * PLOT_H, 1), f"{v:.2f}") for v in (1.0, 0.75, 0.5, 0.25, 0.0)],
        plot_bottom=TOP + PLOT_H,
        plot_right=round(width - RIGHT, 1),
    )
    # One reverse() per event, not per point: a 500 × 50 session has 25,000 points.
    probe = reverse("ui:event-detail", args=[987654321])
    urls = {e.id: probe.replace("987654321", str(e.id)) for e in tl.events}
    charts = []
    for k, rule in enumerate(rules):
        # Plain dicts with preformatted text: the template engine resolves dict keys fastest, and a
        # chart page of a 500-compression session renders thousands of these.
        points: list[dict[str, Any]] = []
        markers: list[dict[str, Any]] = []
        segments: list[str] = []
        current: list[str] = []
        prev: float | None = None
        for p in rule.points:
            x = round(x0 + p.event.index * step, 1)
            flags = ", ".join(
                f
                for f, on in (
                    ("first weakened", p.first_weakened),
                    ("first missing", p.first_missing),
                    ("decay", p.decay),
                )
                if on
            )
            shown = p.shown_state
            row = {
                "url": urls[p.event.id],
                "seq": _seq_label(p.event),
                "state": shown,
                "state_text": f"{GLYPHS.get(shown, '?')} {STATE_TEXT.get(shown, shown)}",
                "strength": "–" if p.strength is None else f"{p.strength:.2f}",
                "delta": "–" if p.strength is None or prev is None else f"{p.strength - prev:+.2f}",
                "marks": flags,
            }
            points.append(row)
            if p.strength is None:
                if current:
                    segments.append(" ".join(current))
                    current = []
                continue
            prev = p.strength
            y = round(TOP + (1 - p.strength) * PLOT_H, 1)
            current.append(f"{x},{y}")
            label = f"Rule {rule.rule_id}, compression {row['seq']}: {STATE_TEXT.get(shown, shown)}, strength {row['strength']}"
            # Coordinates as text: a float would go through number localisation, per point.
            markers.append(
                {
                    **row,
                    "x": f"{x:.1f}",
                    "y": f"{y:.1f}",
                    "decay": p.decay,
                    "label": label + (f" ({flags})" if flags else "") + ". Opens the event's diff.",
                }
            )
        if current:
            segments.append(" ".join(current))
        marks = []
        for kind, first, label_y in (
            ("weakened", rule.first_weakened, 12),
            ("missing", rule.first_missing, 26),
        ):
            if first is not None:
                mx = round(x0 + first.event.index * step, 1)
                anchor = "start" if mx + MARK_LABEL_W <= width else "end"
                marks.append(Mark(mx, f"first {kind}", kind, anchor, label_y))
        charts.append(
            RuleChart(
                rule,
                f"rule-{offset + k}",
                width,
                axis.height,
                points,
                markers,
                segments,
                marks,
                _summary(rule),
            )
        )
    return axis, charts


def _summary(rule: RuleTimeline) -> str:
    """The chart's <desc>: what a screen reader user needs without walking every point."""
    checked = [p for p in rule.points if p.strength is not None]
    if not checked:
        return f"Rule {rule.rule_id}: no checked compression yet."
    parts = [
        f"Rule {rule.rule_id} across {len(rule.points)} compressions: strength {checked[0].strength:.2f} at the first checked one, "
        f"{checked[-1].strength:.2f} ({checked[-1].state}) at the last, lowest {rule.min_strength:.2f}."
    ]
    parts.append(
        f"First weakened at compression {_seq_label(rule.first_weakened.event)}."
        if rule.first_weakened
        else "Never weakened."
    )
    parts.append(
        f"First missing at compression {_seq_label(rule.first_missing.event)}."
        if rule.first_missing
        else "Never missing."
    )
    if rule.decays:
        parts.append(
            "Decay: "
            + "; ".join(
                f"{len(d.indices)} falls in a row ending at compression {_seq_label(rule.points[d.end].event)}"
                for d in rule.decays
            )
            + "."
        )
    pending = len(rule.points) - len(checked)
    if pending:
        parts.append(f"{pending} compressions not checked yet.")
    return " ".join(parts)


@login_required
@require_GET
@vary_on_headers("HX-Request")
def session_detail(request: HttpRequest, session_pk: int) -> HttpResponse:
    session = session_for_user(request.user, session_pk)
    tl = session_timeline(session)
    per_page = rules_per_page(len(tl.events))
    page = Paginator(tl.rules, per_page).get_page(request.GET.get("rules_page"))
    axis, charts = timeline_charts(
        tl, list(page.object_list), offset=page.start_index() - 1 if tl.rules else 0
    )
    # Preformatted rows: the list holds every event of the session (500 and more).
    probe = reverse("ui:event-detail", args=[987654321])
    event_rows = [
        {
            "url": probe.replace("987654321", str(e.id)),
            "seq": "–" if e.sequence is None else str(e.sequence),
            "when": timezone.localtime(e.occurred_at).strftime("%Y-%m-%d %H:%M:%S"),
            "strategy": e.strategy,
            "model": e.model or "–",
            "verdict": e.verdict or e.status,
        }
        for e in tl.events
    ]
    ctx = {
        "event_rows": event_rows,
        # For the summary table: where each rule's chart is (page and anchor).
        "rule_rows": [(r, i // per_page + 1, f"rule-{i}") for i, r in enumerate(tl.rules)],
        "session": session,
        "timeline": tl,
        "decaying": sum(1 for r in tl.rules if r.decays),
        "demoted_now": sum(1 for r in tl.rules if r.last and r.last.shown_state == "demoted"),
        "events": tl.events,
        "rules_page": page,
        "axis": axis,
        "charts": charts,
        "glyphs": GLYPHS,
    }
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, "ui/partials/_timeline_rules.html", ctx)
    return render(request, "ui/sessions/detail.html", ctx)


@login_required
@require_GET
@vary_on_headers("HX-Request")
def decay_overview_page(request: HttpRequest) -> HttpResponse:
    projects = projects_for_user(request.user)
    f = {k: request.GET.get(k, "").strip() for k in ("project", "strategy", "model")}
    overview = decay_overview(projects, project=f["project"], strategy=f["strategy"], model=f["model"])
    ctx = {"overview": overview, "filters": f, "projects": projects, "strategies": Event.STRATEGIES}
    template = "ui/partials/_decay_tables.html" if request.htmx else "ui/decay/overview.html"  # type: ignore[attr-defined]
    return render(request, template, ctx)


SESSIONS_PER_PAGE = 50


@login_required
@require_GET
def session_list(request: HttpRequest) -> HttpResponse:
    """Every session the user can see, newest activity first: how many compressions, how many
    failed, how many rules decayed; ?project= and ?q= (part of the session id) narrow it.
    The same number of queries whatever the page (two of them the list's: count and rows); the
    user's projects are read once, for the filter, the scope and the nav's open alerts."""
    projects = projects_with_open_alerts(request.user)
    f = {k: request.GET.get(k, "").strip()[:200] for k in ("project", "q")}
    scope = [p.pk for p in projects if not f["project"] or p.name == f["project"]]
    qs = Session.objects.filter(project_id__in=scope) if scope else Session.objects.none()
    if f["q"]:
        qs = qs.filter(external_id__icontains=f["q"])
    page = session_list_page(qs, request.GET.get("page"), SESSIONS_PER_PAGE)
    ctx = {
        "page": page,
        "filters": f,
        "query": {k: v for k, v in f.items() if v},
        "projects": projects,
        "alert_counts": open_alert_counts(projects),
    }
    return render(request, "ui/sessions/list.html", ctx)
