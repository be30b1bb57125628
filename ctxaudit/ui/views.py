"""Human-facing views. Every tenant-owned row comes through projects.access helpers."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from ctxaudit.ingest.models import Event
from ctxaudit.projects.access import event_for_user, events_for_user, projects_for_user

PAGE_SIZE = 50


@login_required
@require_GET
@vary_on_headers("HX-Request")
def event_list(request: HttpRequest) -> HttpResponse:
    qs = events_for_user(request.user).select_related("project", "session")
    f = {k: request.GET.get(k, "").strip() for k in ("project", "session", "verdict", "strategy")}
    if f["project"]:
        qs = qs.filter(project__name=f["project"])
    if f["session"]:
        qs = qs.filter(session__external_id__icontains=f["session"])
    if f["verdict"] in ("pass", "fail"):
        qs = qs.filter(verdict=f["verdict"])
    elif f["verdict"] in ("pending", "error"):
        qs = qs.filter(status=f["verdict"])
    if f["strategy"]:
        qs = qs.filter(strategy=f["strategy"])
    page = Paginator(qs.order_by("-occurred_at", "-id"), PAGE_SIZE).get_page(request.GET.get("page"))
    ctx = {
        "page": page,
        "filters": f,
        "projects": projects_for_user(request.user),
        "strategies": Event.STRATEGIES,
    }
    template = "ui/partials/_event_rows.html" if request.htmx else "ui/events/list.html"  # type: ignore[attr-defined]
    return render(request, template, ctx)


@login_required
@require_GET
def event_detail(request: HttpRequest, event_id: int) -> HttpResponse:
    event = event_for_user(request.user, event_id)
    report = event.report or {}
    ctx = {
        "event": event,
        "report": report,
        "rules": report.get("rules", []),
        "findings": event.findings.all(),
        "pairs": _message_pairs(event.before, event.after),
    }
    return render(request, "ui/events/detail.html", ctx)


def _message_pairs(before: list[dict], after: list[dict]) -> list[tuple[dict | None, dict | None, int | None, int | None]]:
    """Placeholder alignment: index by index. The diff module replaces this."""
    n = max(len(before), len(after))
    return [
        (before[i] if i < len(before) else None, after[i] if i < len(after) else None, i if i < len(before) else None, i if i < len(after) else None)
        for i in range(n)
    ]
