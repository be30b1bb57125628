"""Alert pages. Tenant rows come only through ctxaudit.alerts.access helpers:
members read, ops/admin change (403 otherwise), outsiders get 404."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import cast
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from ctxaudit.alerts import kinds, services
from ctxaudit.alerts.access import (
    CHANGE_ROLES,
    alert_for_user,
    alerts_for_user,
    can_change_alerts,
    changeable_project_ids,
    channel_for_user,
    project_for_user,
)
from ctxaudit.alerts.models import Alert, Channel, WindowMonitor
from ctxaudit.alerts.selectors import (
    STATUS_FILTERS,
    alerts_filtered,
    alerts_sorted,
    open_alerts_by_severity,
    sort_key,
    with_rule_text,
)
from ctxaudit.core.http import AuthedRequest
from ctxaudit.core.params import db_int
from ctxaudit.projects.access import projects_for_user
from ctxaudit.projects.models import Project

PAGE_SIZE = 50
FILTERS = ("status", "severity", "project", "rule", "kind", "assignee")
# Sortable columns of the list, in page order: (sort key, header, first click descending?).
COLUMNS = (
    ("severity", "Severity", True),
    ("status", "Status", False),
    ("title", "Alert", False),
    ("kind", "Kind", False),
    ("project", "Project", False),
    ("events", "Events", True),
    ("sessions", "Sessions", True),
    ("first_seen", "First seen", True),
    ("last_seen", "Last seen", True),
    ("assignee", "Assignee", False),
)
MUTE_HOURS = (1, 4, 24, 168)


@login_required
@require_GET
@vary_on_headers("HX-Request")
def alert_list(request: HttpRequest) -> HttpResponse:
    f = {k: request.GET.get(k, "").strip() for k in FILTERS}
    f["status"] = f["status"] if f["status"] in STATUS_FILTERS else "active"
    qs = alerts_filtered(alerts_for_user(request.user).select_related("project", "assignee"), f, request.user)
    qs = with_rule_text(qs)
    sort = sort_key(request.GET.get("sort", ""))
    page = Paginator(alerts_sorted(qs, sort), PAGE_SIZE).get_page(request.GET.get("page"))
    query = {k: v for k, v in f.items() if v}
    ctx = {
        "page": page,
        "filters": f,
        "sort": sort,
        "columns": _columns(query, sort),
        "sort_label": _sort_label(sort),
        "query": urlencode({**query, "sort": sort}),
        "projects": projects_for_user(request.user),
        "statuses": STATUS_FILTERS,
        "severities": kinds.SEVERITIES,
        "kinds": kinds.KNOWN_KINDS,
        "changeable": changeable_project_ids(request.user),
        "now": timezone.now(),
    }
    template = "ui/partials/_alert_rows.html" if request.htmx else "ui/alerts/list.html"  # type: ignore[attr-defined]
    return render(request, template, ctx)


def _columns(query: dict[str, str], sort: str) -> list[dict[str, str]]:
    """Header cells: each links to the list sorted by it (again: the other way round), filters kept."""
    out = []
    for key, label, desc_first in COLUMNS:
        current = sort.lstrip("-") == key
        descending = sort.startswith("-")
        # Clicking the sorted column turns it round; another column starts in its natural direction.
        flip = key if descending else f"-{key}"
        nxt = flip if current else (f"-{key}" if desc_first else key)
        out.append(
            {
                "key": key,
                "label": label,
                "href": "?" + urlencode({**query, "sort": nxt}),
                "aria_sort": ("descending" if descending else "ascending") if current else "none",
            }
        )
    return out


def _sort_label(sort: str) -> str:
    key, desc = sort.lstrip("-"), sort.startswith("-")
    label = next(lbl for k, lbl, _ in COLUMNS if k == key).lower()
    if key == "severity":
        order = "most severe first" if desc else "least severe first"
    elif key in ("first_seen", "last_seen"):
        order = "newest first" if desc else "oldest first"
    else:
        order = "descending" if desc else "ascending"
    return f"{label}, {order}"


@login_required
@require_GET
@vary_on_headers("HX-Request")
def alert_summary(request: HttpRequest) -> HttpResponse:
    return render(
        request, "ui/partials/_alert_summary.html", {"alert_counts": open_alerts_by_severity(request.user)}
    )


@login_required
@require_GET
def alert_detail(request: HttpRequest, alert_id: int) -> HttpResponse:
    alert = alert_for_user(request.user, alert_id)
    alert.shown_rule_text = with_rule_text(Alert.objects.filter(pk=alert.pk)).values_list(  # type: ignore[attr-defined,misc]
        "shown_rule_text", flat=True
    )[0]
    can_change = can_change_alerts(request.user, alert.project)
    links = alert.alert_events.select_related("event", "event__session").order_by(
        "-event__occurred_at", "-id"
    )[:200]
    ctx = {
        "alert": alert,
        "can_change": can_change,
        "links": links,
        "activities": alert.activities.select_related("user", "event"),
        "deliveries": alert.deliveries.select_related("channel").prefetch_related("attempt_log"),
        "assignees": _assignable(alert) if can_change else [],
        "mute_hours": MUTE_HOURS,
        "now": timezone.now(),
    }
    return render(request, "ui/alerts/detail.html", ctx)


def _assignable(alert: Alert) -> list[User]:
    users = get_user_model().objects.filter(
        memberships__project=alert.project, memberships__role__in=CHANGE_ROLES
    )
    return list(users.order_by("username"))


@login_required
@require_POST
def alert_status(request: HttpRequest, alert_id: int) -> HttpResponse:
    alert = alert_for_user(request.user, alert_id, change=True)
    action = request.POST.get("action", "")
    change = {
        "acknowledge": services.alert_acknowledge,
        "resolve": services.alert_resolve,
        "reopen": services.alert_reopen,
    }.get(action)
    if change is None:
        return HttpResponseBadRequest("action must be acknowledge, resolve or reopen")
    try:
        change(alert=alert, user=request.user)  # type: ignore[arg-type]
    except services.AlertTransitionError as e:
        return HttpResponseBadRequest(str(e))
    return redirect("alerts:detail", alert.pk)


@login_required
@require_POST
def alert_assign(request: HttpRequest, alert_id: int) -> HttpResponse:
    alert = alert_for_user(request.user, alert_id, change=True)
    raw = request.POST.get("assignee", "").strip()
    assignee = None
    if raw:
        assignee = next((u for u in _assignable(alert) if str(u.pk) == raw), None)
        if assignee is None:
            return HttpResponseBadRequest("the assignee must be an ops or admin member of the project")
    services.alert_assign(alert=alert, user=request.user, assignee=assignee)  # type: ignore[arg-type]
    return redirect("alerts:detail", alert.pk)


@login_required
@require_POST
def alert_comment(request: HttpRequest, alert_id: int) -> HttpResponse:
    alert = alert_for_user(request.user, alert_id, change=True)
    try:
        services.alert_comment(alert=alert, user=request.user, text=request.POST.get("text", ""))  # type: ignore[arg-type]
    except ValueError as e:
        return HttpResponseBadRequest(str(e))
    return redirect("alerts:detail", alert.pk)


@login_required
@require_POST
def alert_mute(request: HttpRequest, alert_id: int) -> HttpResponse:
    alert = alert_for_user(request.user, alert_id, change=True)
    raw = request.POST.get("hours", "")
    if raw == "unmute":
        until = None
    elif request.POST.get("until"):
        try:
            until = datetime.fromisoformat(request.POST["until"])
        except ValueError:
            return HttpResponseBadRequest("until must be a date and time, e.g. 2026-12-01T09:00")
        until = until.replace(tzinfo=UTC) if until.tzinfo is None else until  # the form says UTC
        if until <= timezone.now():
            return HttpResponseBadRequest("until must be in the future")
    else:
        try:
            hours = int(raw)
        except ValueError:
            return HttpResponseBadRequest("hours must be a whole number or 'unmute'")
        if not 0 < hours <= 24 * 365:
            return HttpResponseBadRequest("hours must be between 1 and 8760")
        until = timezone.now() + timedelta(hours=hours)
    services.alert_mute(alert=alert, user=request.user, until=until)  # type: ignore[arg-type]
    return redirect("alerts:detail", alert.pk)


@login_required
@require_POST
def alert_bulk_acknowledge(request: HttpRequest) -> HttpResponse:
    allowed = changeable_project_ids(request.user)
    if not allowed:  # a reviewer everywhere: told so before anything about the selection
        raise PermissionDenied("Only ops and admin members may change alerts")
    ids = [i for i in map(db_int, request.POST.getlist("alert")) if i is not None]
    if not ids:
        return HttpResponseBadRequest("select at least one alert")
    alerts = list(alerts_for_user(request.user).filter(pk__in=ids).select_related("project"))
    if len(alerts) != len(set(ids)):
        raise Http404("No such alert")
    if any(a.project_id not in allowed for a in alerts):
        raise PermissionDenied("Only ops and admin members may change alerts")
    services.alerts_bulk_acknowledge(alerts=alerts, user=request.user)  # type: ignore[arg-type]
    # Back to the same filters; only known filter keys go into the redirect (no open redirect).
    back = QueryDict(request.POST.get("query", ""))
    query = urlencode({k: back[k] for k in (*FILTERS, "sort") if back.get(k)})
    return redirect(f"{reverse('alerts:list')}?{query}" if query else reverse("alerts:list"))


# --- alert settings of a project: policy and channels -----------------------------------------


def _settings_page(
    request: HttpRequest,
    project: Project,
    *,
    error: str = "",
    status: int = 200,
    channel_form: dict[str, str] | None = None,
    window_form: dict[str, str] | None = None,
) -> HttpResponse:
    policy = services.alert_policy_for_project(project)
    can_change = can_change_alerts(request.user, project)
    ctx = {
        "project": project,
        "policy": policy,
        "conditions": policy.conditions.all(),
        "channels": project.alert_channels.all(),
        "windows": project.window_monitors.all(),
        "window_metrics": WindowMonitor.Metric.choices,
        "window_form": window_form or {},
        "can_change": can_change,
        "severities": kinds.SEVERITIES,
        "channel_kinds": Channel.Kind.choices,
        "error": error,
        # a refused channel keeps what was typed, so the user corrects it instead of retyping
        "channel_form": channel_form or {},
    }
    return render(request, "ui/alerts/settings.html", ctx, status=status)


@login_required
@require_GET
def alert_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    return _settings_page(request, project_for_user(request.user, project_id))


@login_required
@require_POST
def alert_policy_edit(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_for_user(request.user, project_id, change=True)
    policy = services.alert_policy_for_project(project)
    conditions = {}
    try:
        for c in policy.conditions.all():
            p = f"cond-{c.pk}-"
            conditions[c.pk] = {
                "enabled": request.POST.get(p + "enabled") == "on",
                "min_severity": request.POST.get(p + "min_severity", c.min_severity),
                "min_per_event": int(request.POST.get(p + "min_per_event", c.min_per_event)),
                "min_compressions": int(request.POST.get(p + "min_compressions", c.min_compressions)),
            }
        services.alert_policy_update(
            policy=policy,
            user=cast(AuthedRequest, request).user,
            enabled=request.POST.get("enabled") == "on",
            conditions=conditions,
        )
    except ValueError as e:
        msg = str(e) if "invalid literal" not in str(e) else "thresholds must be whole numbers"
        return _settings_page(request, project, error=msg, status=400)
    return redirect("alerts:settings", project.pk)


@login_required
@require_POST
def alert_channel_add(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_for_user(request.user, project_id, change=True)
    form = {k: request.POST.get(k, "") for k in ("kind", "name", "target")}
    try:
        services.channel_create(project=project, **form)
    except ValueError as e:
        return _settings_page(request, project, error=str(e), status=400, channel_form=form)
    return redirect("alerts:settings", project.pk)


@login_required
@require_POST
def alert_channel_toggle(request: HttpRequest, channel_id: int) -> HttpResponse:
    channel = channel_for_user(request.user, channel_id)
    services.channel_set_enabled(channel=channel, enabled=not channel.enabled)
    return redirect("alerts:settings", channel.project_id)


@login_required
@require_POST
def alert_channel_test(request: HttpRequest, channel_id: int) -> HttpResponse:
    channel = channel_for_user(request.user, channel_id)
    result = services.channel_test(channel=channel)
    # Post/redirect/get: a refresh of the settings page must not send the test again.
    messages.info(request, f"Test notification to {channel}: {result}")
    return redirect("alerts:settings", channel.project_id)


# --- windowed policies -----------------------------------------------------------------------

WINDOW_FIELDS = ("metric", "rule_id", "min_severity", "window_minutes", "min_compressions")


def _window_values(request: HttpRequest) -> dict[str, object]:
    """The form's values for services.window_monitor_save; levels are typed as percents."""
    values: dict[str, object] = {k: request.POST.get(k, "") for k in WINDOW_FIELDS}
    for level in ("warning", "alert"):
        raw = request.POST.get(f"{level}_percent", "")
        try:
            values[level] = float(raw) / 100
        except ValueError:
            raise ValueError(f"{level}_percent: a number of percent is needed (20 for 20%)") from None
    values["enabled"] = request.POST.get("enabled", "on") == "on"
    return values


def _window_for_user(request: HttpRequest, window_id: int) -> WindowMonitor:
    pk = db_int(str(window_id))
    monitor = WindowMonitor.objects.filter(pk=pk).first() if pk is not None else None
    if monitor is None:
        raise Http404("No such windowed policy")
    project_for_user(request.user, monitor.project_id, change=True)  # 404 outsider, 403 viewer
    return monitor


@login_required
@require_POST
def alert_window_add(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_for_user(request.user, project_id, change=True)
    form = {k: request.POST.get(k, "") for k in (*WINDOW_FIELDS, "warning_percent", "alert_percent")}
    try:
        services.window_monitor_save(project=project, values=_window_values(request))
    except ValueError as e:
        return _settings_page(request, project, error=str(e), status=400, window_form=form)
    return redirect("alerts:settings", project.pk)


@login_required
@require_POST
def alert_window_edit(request: HttpRequest, window_id: int) -> HttpResponse:
    monitor = _window_for_user(request, window_id)
    try:
        services.window_monitor_save(project=monitor.project, monitor=monitor, values=_window_values(request))
    except ValueError as e:
        return _settings_page(request, monitor.project, error=str(e), status=400)
    return redirect("alerts:settings", monitor.project_id)


@login_required
@require_POST
def alert_window_delete(request: HttpRequest, window_id: int) -> HttpResponse:
    monitor = _window_for_user(request, window_id)
    project_id = monitor.project_id
    services.window_monitor_delete(monitor=monitor)
    return redirect("alerts:settings", project_id)
