"""Human-facing views. Every tenant-owned row comes through projects.access helpers."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from ctxaudit.alerts.kinds import KNOWN_KINDS, severity_rank
from ctxaudit.alerts.selectors import open_alert_counts, projects_with_open_alerts
from ctxaudit.core.params import db_int
from ctxaudit.engine.checks.rule_findings import RULE_FINDING_KINDS
from ctxaudit.engine.diff import Collapsed, Limits, expand_lines, expand_messages, plan_contexts
from ctxaudit.engine.formats import context_from_json
from ctxaudit.ingest.models import Event, Session
from ctxaudit.ingest.selectors import COUNT_CAP, event_page
from ctxaudit.projects.access import event_for_user, events_of_projects
from ctxaudit.projects.audit import log_content_access
from ctxaudit.ui.event_items import detail_highlights, finding_items, rule_items, token_table
from ctxaudit.ui.event_pages import FULL_ROWS_PER_PAGE as FULL_ROWS_PER_PAGE  # re-exported for tests
from ctxaudit.ui.event_pages import diff_page
from ctxaudit.ui.event_rows import SEVERITIES, filter_by_findings, filter_by_session, row_summaries
from ctxaudit.ui.event_table import event_rows_html


def htmx_login_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """login_required, but an htmx request from an expired session reloads the whole page on the
    login form (HX-Redirect) instead of swapping the login page into a fragment."""
    plain = login_required(view)

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.htmx and not request.user.is_authenticated:  # type: ignore[attr-defined]
            back = request.htmx.current_url_abs_path or "/"  # type: ignore[attr-defined]
            return HttpResponseClientRedirect(f"{settings.LOGIN_URL}?next={quote(back)}")
        return plain(request, *args, **kwargs)

    return wrapped


PAGE_SIZE = 50
LIST_CAP = 50  # rules and findings shown on the event page before "show all"
VERDICTS = ("fail", "pass", "no_rules", "pending", "error")
# What a row of the list shows (ui.event_table), read as columns, not models: loading the rest of
# three models per row cost as much as the page's queries together (issue 13). Project names
# come from the filter's list.
LIST_COLUMNS = (
    "id",
    "project_id",
    "session_id",
    "sequence",
    "occurred_at",
    "strategy",
    "verdict",
    "status",
    "tokens_before",
    "tokens_after",
    "session__external_id",
)


@htmx_login_required
@require_GET
@vary_on_headers("HX-Request")
def event_list(request: HttpRequest) -> HttpResponse:
    # The user's projects, read once: the filter's choices, the rows' project names, the nav's
    # open alerts and the scope of every query below (issue 13: each query of this page costs about as much in
    # Django and on the wire as the keyset read of its 50 rows in the database).
    projects = projects_with_open_alerts(request.user)
    names = {p.pk: p.name for p in projects}
    f = {
        k: request.GET.get(k, "").strip()
        for k in ("project", "session", "verdict", "strategy", "severity", "kind")
    }
    scope: list[int] = list(names)
    if f["project"]:
        # The filter form sends the name; links from other pages (and people) use the id.
        named = [p.pk for p in projects if p.name == f["project"]]
        project_pk = db_int(f["project"])  # None for "²" or 30 digits: no row has such an id
        scope = named or ([project_pk] if project_pk in names else [])
    qs = events_of_projects(scope)
    qs = filter_by_session(qs, Session.objects.filter(project_id__in=scope), f["session"])
    if f["verdict"] in ("pass", "fail", "no_rules"):
        qs = qs.filter(verdict=f["verdict"])
    elif f["verdict"] in ("pending", "error"):
        qs = qs.filter(status=f["verdict"])
    if f["strategy"]:
        qs = qs.filter(strategy_family=f["strategy"])
    qs = filter_by_findings(qs, severity=f["severity"], kind=f["kind"])
    query = {k: v for k, v in f.items() if v}
    # Keyset pages with counts for their own rows only: constant queries, page 2,000 as fast as 1.
    page = event_page(
        qs,
        params=request.GET.dict(),
        query=query,
        size=PAGE_SIZE,
        columns=LIST_COLUMNS,
    )
    ctx = {
        "page": page,
        "rows_html": event_rows_html(page.rows, row_summaries(page.rows), names),
        "count_cap": COUNT_CAP,
        "severities": SEVERITIES,
        "kinds": sorted({*KNOWN_KINDS, *([f["kind"]] if f["kind"] else [])}),
        "filters": f,
        "filtered": any(f.values()),
        "query": query,
        "projects": projects,
        "alert_counts": open_alert_counts(projects),
        "strategies": Event.STRATEGIES,
        "verdicts": VERDICTS,
    }
    # A history restore (back button with htmx's cache off) needs the whole page, not the rows.
    partial = request.htmx and not request.htmx.history_restore_request  # type: ignore[attr-defined]
    template = "ui/partials/_event_rows.html" if partial else "ui/events/list.html"
    return render(request, template, ctx)


@login_required
@require_GET
def event_detail(request: HttpRequest, event_id: int) -> HttpResponse:
    event = event_for_user(request.user, event_id)
    log_content_access(request, event, "view")
    report = event.report or {}
    findings = list(event.findings.all())
    full = request.GET.get("full") == "1"
    before, after = context_from_json(event.before).messages, context_from_json(event.after).messages
    plan = plan_contexts(
        before, after, highlights=detail_highlights(report, findings), limits=Limits(collapse=not full)
    )
    # Uncollapsed, every highlight on a message is shown: its page is known without building a
    # row, and only the requested page's rows are built (diff_page). Collapsed, which highlights
    # stayed visible is known once the rows are built (they are folded, so that is cheap).
    anchors = plan.placeable if full else plan.diff().anchors
    paged = diff_page(
        request.GET.dict(),
        plan,
        full=full,
        placed=anchors,
        messages=len(before) + len(after),
        characters=sum(len(m.content) for m in (*before, *after)),
    )
    rules = rule_items(report, anchors, plan.zones, href=paged["href"])
    items = finding_items(findings, anchors, href=paged["href"])
    all_items = request.GET.get("all") == "1"
    ctx = {
        "event": event,
        "report": report,
        # Hundreds of extracted rules happen (long system prompts): show the lost ones first, capped.
        "rules": rules if all_items else rules[:LIST_CAP],
        "rules_total": len(rules),
        "findings": items if all_items else items[:LIST_CAP],
        "findings_total": len(items),
        "fail_reasons": fail_reasons(event.verdict, findings),
        "list_cap": LIST_CAP,
        "tokens": token_table(report),
        "diff": plan,  # its counts and zones
        # The diff starts at what matters: where each lost, weakened or demoted rule was and went.
        "lost_rules": [it for it in rules if it["shown_state"] != "retained"][:LIST_CAP],
        "full": full,
        **paged,
    }
    return render(request, "ui/events/detail.html", ctx)


def _int(request: HttpRequest, name: str) -> int | None:
    raw = request.GET.get(name, "")
    if raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise Http404(f"bad {name}") from None


@htmx_login_required
@require_GET
def event_expand(request: HttpRequest, event_id: int) -> HttpResponse:
    """A collapsed run of messages or lines, shown (the htmx partial behind "show N hidden")."""
    event = event_for_user(request.user, event_id)
    log_content_access(request, event, "view")  # hands out context text the page had folded away
    level = request.GET.get("level")
    op = request.GET.get("op")
    if level not in ("messages", "lines") or op not in ("equal", "delete", "insert"):
        raise Http404("bad range")
    b0, b1, a0, a1 = (_int(request, k) or 0 for k in ("b0", "b1", "a0", "a1"))
    collapsed = Collapsed(level, op, (b0, b1), (a0, a1), 0, _int(request, "bm"), _int(request, "am"))  # type: ignore[arg-type]
    before = context_from_json(event.before).messages
    after = context_from_json(event.after).messages
    highlights = detail_highlights(event.report or {}, list(event.findings.all()))
    # stack=1: the run sits in one column of a "replaced" block (single-column boxes).
    stack = request.GET.get("stack") == "1"
    try:
        if level == "messages":
            rows = expand_messages(before, after, collapsed, highlights=highlights)
            template = "ui/partials/_diff_stack.html" if stack else "ui/partials/_diff_rows.html"
            return render(request, template, {"event": event, "rows": rows})
        hunk = expand_lines(before, after, collapsed, highlights=highlights)
    except ValueError:
        raise Http404("bad range") from None
    template = "ui/partials/_diff_stack_hunk.html" if stack else "ui/partials/_diff_hunk.html"
    return render(request, template, {"event": event, "h": hunk})


def fail_reasons(verdict: str | None, findings: list[Any]) -> list[Any]:
    """The (at most three) most severe findings that failed the event, for the page's header:
    a failing event whose rules were all kept must still say at once why it failed."""
    if verdict != "fail":
        return []
    failing = [f for f in findings if f.kind in RULE_FINDING_KINDS or severity_rank(f.severity) >= 2]
    return sorted(failing, key=lambda f: -severity_rank(f.severity))[:3]
