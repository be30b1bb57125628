"""The checklist (seed §7.2), the symptom guide (§7.1) and the regression set (§6.6) pages.

Tenant rows come through projects.access helpers (404 for outsiders); marking steps, adding
cases and replaying need the admin or reviewer role (403 otherwise); the replay endpoint is an
admin setting.
"""

from __future__ import annotations

import json
from typing import Any, cast

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from ctxaudit.core.http import AuthedRequest
from ctxaudit.engine.cli import case_from_dict, check_case
from ctxaudit.engine.compare import CompareInputError, compare, read_results
from ctxaudit.engine.tokens import CharCounter
from ctxaudit.ingest.event_rules import event_own_rules
from ctxaudit.ingest.models import Event
from ctxaudit.ingest.selectors import positive_int
from ctxaudit.projects.access import event_for_user, project_for_user, role_for_user
from ctxaudit.projects.audit import log_content_access
from ctxaudit.projects.models import Membership, Project
from ctxaudit.regression import exports, replay, selectors, services
from ctxaudit.regression.guide import STEP_COUNT, SYMPTOM_FOR_KIND, SYMPTOMS, kinds_for_row
from ctxaudit.regression.models import ChecklistStep, RegressionCase, ReplayEndpoint, ReplayRun
from ctxaudit.ui.event_rows import matching_findings

REVIEW_ROLES = (Membership.Role.ADMIN, Membership.Role.REVIEWER)
EVENTS_PER_SYMPTOM = 20
INCIDENTS_PAGE_SIZE = 50
MAX_CASES_SHOWN = 500
MAX_COMPARE_BYTES = 20 * 1024 * 1024  # per uploaded results file; a 500-case run is a few MB


def _require_role(request: HttpRequest, project: Project, roles: tuple[str, ...]) -> None:
    if role_for_user(request.user, project) not in roles:
        raise PermissionDenied("Your role in this project cannot do this.")


def _can(request: HttpRequest, project: Project, roles: tuple[str, ...] = REVIEW_ROLES) -> bool:
    return role_for_user(request.user, project) in roles


def _attachment(data: Any, filename: str) -> HttpResponse:
    resp = HttpResponse(
        json.dumps(data, ensure_ascii=False, indent=2), content_type="application/json; charset=utf-8"
    )
    resp["Content-Disposition"] = f'attachment; filename="{filename}"'
    return resp


# --- the checklist ----------------------------------------------------------------------------


def _page_number(request: HttpRequest, name: str) -> int:
    raw = request.GET.get(name, "")  # ASCII digits only: "²".isdigit() is True, int("²") raises
    return positive_int(raw, 1) or 1


@login_required
@require_GET
def checklist(request: HttpRequest, event_id: int) -> HttpResponse:
    event = event_for_user(request.user, event_id)
    log_content_access(request, event, "view")  # the checklist shows both whole contexts
    steps = selectors.checklist_steps(event)
    ctx = {
        "event": event,
        "steps": steps,
        "done": sum(1 for s in steps if s["status"] != "open"),
        "step_count": STEP_COUNT,
        "can_review": _can(request, event.project),
        "can_configure": _can(request, event.project, (Membership.Role.ADMIN,)),
        "symptoms": selectors.finding_symptoms(event),
        "session": selectors.session_evidence(event),
        "diff": selectors.line_diff(event.before, event.after, page=_page_number(request, "diff_page")),
        "max_line_chars": selectors.MAX_LINE_CHARS,
        "searches": selectors.rule_searches(event),
        "system": selectors.system_evidence(event),
        "drift": selectors.drift_evidence(event),
        "replay": selectors.replay_evidence(event),
        "case": RegressionCase.objects.filter(project_id=event.project_id, event=event).first(),
        "diff_url": reverse("ui:event-detail", args=[event.pk]),
        "statuses": ChecklistStep.Status.choices,
    }
    return render(request, "ui/checklist/detail.html", ctx)


@login_required
@require_POST
def checklist_step(request: HttpRequest, event_id: int, step: int) -> HttpResponse:
    event = event_for_user(request.user, event_id)
    _require_role(request, event.project, REVIEW_ROLES)
    if not 1 <= step <= STEP_COUNT:
        return HttpResponse("No such step", status=404)
    status = request.POST.get("status", "")
    if status not in ChecklistStep.Status.values:
        return HttpResponse("status must be done, na or open", status=400)
    services.checklist_step_mark(
        event=event,
        step=step,
        status=status,
        note=request.POST.get("note", ""),
        user=cast(AuthedRequest, request).user,
    )
    if not request.htmx:  # type: ignore[attr-defined]
        return redirect(reverse("regression:checklist", args=[event.pk]) + f"#step-{step}")
    steps = selectors.checklist_steps(event)
    item = next(s for s in steps if s["step"].number == step)
    ctx = {
        "event": event,
        "s": item,
        "can_review": True,
        "statuses": ChecklistStep.Status.choices,
        "oob": True,
        "done": sum(1 for s in steps if s["status"] != "open"),
        "step_count": STEP_COUNT,
    }
    return render(request, "ui/partials/_checklist_step_status.html", ctx)


@login_required
@require_GET
def checklist_search(request: HttpRequest, event_id: int) -> HttpResponse:
    event = event_for_user(request.user, event_id)
    log_content_access(request, event, "view")  # answers with context excerpts
    rule_id = request.GET.get("rule", "")
    query = request.GET.get("q", "")[:500]
    found = [s for s in selectors.rule_searches(event, {rule_id: query}) if s["rule"]["id"] == rule_id]
    if not found:
        return HttpResponse("No such rule", status=404)
    return render(request, "ui/partials/_rule_search.html", {"event": event, "item": found[0]})


@login_required
@require_GET
def event_export(request: HttpRequest, event_id: int) -> HttpResponse:
    """Step 2's download: before, after or both, as normalised messages."""
    event = event_for_user(request.user, event_id)
    log_content_access(request, event, "download")
    side = request.GET.get("side", "both")
    if side == "before":
        return _attachment(event.before, f"event-{event.pk}-before.json")
    if side == "after":
        return _attachment(event.after, f"event-{event.pk}-after.json")
    return _attachment(
        {"event": event.pk, "before": event.before, "after": event.after},
        f"event-{event.pk}-before-after.json",
    )


@login_required
@require_GET
def session_export(request: HttpRequest, event_id: int) -> HttpResponse:
    """Step 1's download: every compression event of the event's session, in order."""
    event = event_for_user(request.user, event_id)
    log_content_access(request, event, "download")
    events = Event.objects.filter(session=event.session).order_by("sequence", "occurred_at", "id")
    data = {
        "project": event.project.name,
        "session_id": event.session.external_id,
        "events": [
            {
                "id": e.pk,
                "sequence": e.sequence,
                "occurred_at": e.occurred_at.isoformat(),
                "strategy": e.strategy,
                "model": e.model,
                "verdict": e.verdict,
                "rules": event_own_rules(e),
                "before": e.before,
                "after": e.after,
            }
            for e in events
        ],
    }
    return _attachment(data, f"session-{event.session_id}.json")


@login_required
@require_GET
def replay_bundle(request: HttpRequest, event_id: int) -> HttpResponse:
    """Step 6's download: ready-to-send OpenAI and Anthropic request bodies, before and after."""
    event = event_for_user(request.user, event_id)
    log_content_access(request, event, "download")
    prompt = request.GET.get("prompt")
    ev = selectors.replay_evidence(event, prompt[:20_000] if prompt is not None else None)
    return _attachment(ev["bundle"], f"event-{event.pk}-replay.json")


@login_required
@require_POST
def replay_run_create(request: HttpRequest, event_id: int) -> HttpResponse:
    event = event_for_user(request.user, event_id)
    _require_role(request, event.project, REVIEW_ROLES)
    prompt = request.POST.get("prompt", "")[:20_000] or replay.final_user_request(
        event.before, event.metadata
    )
    try:
        run = services.replay_run_start(event=event, prompt=prompt, user=request.user)  # type: ignore[arg-type]
    except ValueError as exc:
        return HttpResponse(str(exc), status=400)
    if not request.htmx:  # type: ignore[attr-defined]
        return redirect(reverse("regression:checklist", args=[event.pk]) + "#step-6")
    run.refresh_from_db()
    return render(request, "ui/partials/_replay_run.html", {"run": run})


@login_required
@require_GET
def replay_run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.replay_run_for_user(request.user, run_id)
    resp = render(request, "ui/partials/_replay_run.html", {"run": run})
    if run.status != ReplayRun.Status.PENDING and request.htmx:  # type: ignore[attr-defined]
        return HttpResponseStopPolling(resp.content)  # 286: htmx stops the every-2s poll
    return resp


@login_required
@require_POST
def regression_case_add(request: HttpRequest, event_id: int) -> HttpResponse:
    event = event_for_user(request.user, event_id)
    _require_role(request, event.project, REVIEW_ROLES)
    case, _ = services.regression_case_from_event(event=event, user=request.user)  # type: ignore[arg-type]
    if request.htmx:  # type: ignore[attr-defined]
        response = render(request, "ui/partials/_regression_case_added.html", {"event": event, "case": case})
        # step 7 was just ticked: reload so the checklist shows it (and its progress) done
        response["HX-Refresh"] = "true"
        return response
    return redirect(reverse("regression:checklist", args=[event.pk]) + "#step-7")


# --- the symptom guide ------------------------------------------------------------------------


@login_required
@require_GET
def symptom_guide(request: HttpRequest) -> HttpResponse:
    """The symptom table with the newest incidents of each row and the finding that put each one
    there. Passing events (a low-severity advice finding on a faithful compression) are left out
    unless ?passing=1."""
    passing = request.GET.get("passing") == "1"
    rows = []
    for s in SYMPTOMS:
        kinds = kinds_for_row(s.row)
        qs = _incidents(request, kinds, passing)
        events = list(qs[:EVENTS_PER_SYMPTOM])
        rows.append(
            {
                "symptom": s,
                "kinds": [(k, SYMPTOM_FOR_KIND[k][1]) for k in kinds],
                "events": _with_match(events, kinds),
                "count": qs.count(),
                "passing": 0 if passing else _passing_count(request, kinds),
            }
        )
    other = selectors.unmapped_kinds(request.user)
    other_events = (
        _with_match(list(_incidents(request, other, passing)[:EVENTS_PER_SYMPTOM]), other) if other else []
    )
    ctx = {"rows": rows, "other_kinds": other, "other_events": other_events, "passing": passing}
    return render(request, "ui/symptoms/guide.html", ctx)


def _incidents(request: HttpRequest, kinds: list[str], passing: bool) -> QuerySet[Event]:
    qs = selectors.events_with_kinds(request.user, kinds)
    return qs if passing else qs.exclude(verdict="pass")


def _passing_count(request: HttpRequest, kinds: list[str]) -> int:
    return selectors.events_with_kinds(request.user, kinds).filter(verdict="pass").count()


def _with_match(events: list[Event], kinds: list[str]) -> list[Event]:
    """The events, each with `match`: the finding (of `kinds`) that makes it an incident of the row."""
    found = matching_findings(events, kinds)
    for e in events:
        e.match = found.get(e.pk)  # type: ignore[attr-defined]
    return events


@login_required
@require_GET
def symptom_incidents(request: HttpRequest) -> HttpResponse:
    """Every incident of one symptom row (?row=N, or ?row=other for kinds no row covers), newest
    first, paginated, each with its matching finding; passing events only with ?passing=1."""
    raw = request.GET.get("row", "")
    passing = request.GET.get("passing") == "1"
    symptom = next((s for s in SYMPTOMS if str(s.row) == raw), None)
    if symptom is not None:
        kinds = kinds_for_row(symptom.row)
    elif raw == "other":
        kinds = selectors.unmapped_kinds(request.user)
    else:
        raise Http404("No such symptom row")
    qs = _incidents(request, kinds, passing) if kinds else Event.objects.none()
    page = Paginator(qs, INCIDENTS_PAGE_SIZE).get_page(request.GET.get("page"))
    _with_match(list(page), kinds)
    ctx = {
        "symptom": symptom,
        "row": raw,
        "kinds": kinds,
        "page": page,
        "passing": passing,
        "passing_count": 0 if passing or not kinds else _passing_count(request, kinds),
    }
    return render(request, "ui/symptoms/incidents.html", ctx)


# --- the regression set -----------------------------------------------------------------------


@login_required
@require_GET
def regression_index(request: HttpRequest) -> HttpResponse:
    projects = selectors.projects_with_case_counts(request.user)
    if projects.count() == 1:
        return redirect("regression:set", project_id=projects.get().pk)
    return render(request, "ui/regression/index.html", {"projects": projects})


@login_required
@require_GET
def regression_set(request: HttpRequest, project_id: int) -> HttpResponse:
    """The project's cases; with ?run=1 also what `ctxaudit check` answers for each one today
    (on demand: a large case takes the engine a second or more)."""
    project = project_for_user(request.user, project_id)
    cases = list(selectors.regression_cases(project.pk)[:MAX_CASES_SHOWN])
    run = request.GET.get("run") == "1"
    counter = CharCounter()  # tokens are not shown here; no tokenizer load for a page view
    rows = []
    for c in cases:
        now, problems = None, []
        if run:
            try:
                result = check_case(
                    case_from_dict(services.regression_case_to_sample(c), c.case_id), counter=counter
                )
                now, problems = ("pass" if result.passed else "fail"), result.problems
            except Exception as exc:  # a stored case the engine can no longer read: show it, don't 500
                now, problems = "error", [f"{type(exc).__name__}: {exc}"]
        rows.append({"case": c, "now": now, "problems": problems})
    ctx = {
        "project": project,
        "rows": rows,
        "ran": run,
        "can_edit": _can(request, project),
        "can_configure": _can(request, project, (Membership.Role.ADMIN,)),
    }
    return render(request, "ui/regression/set.html", ctx)


@login_required
@require_GET
def regression_export(request: HttpRequest, project_id: int) -> HttpResponse:
    """The set as JSONL in the samples format: `ctxaudit check <file>` runs it."""
    project = project_for_user(request.user, project_id)
    log_content_access(request, project, "export")
    lines = [
        json.dumps(services.regression_case_to_sample(c), ensure_ascii=False)
        for c in selectors.regression_cases(project.pk).order_by("created_at", "id")
    ]
    resp = HttpResponse(
        "".join(line + "\n" for line in lines), content_type="application/x-ndjson; charset=utf-8"
    )
    stamp = timezone.now().strftime("%Y%m%d")
    resp["Content-Disposition"] = f'attachment; filename="regression-set-project-{project.pk}-{stamp}.jsonl"'
    return resp


# kind -> (builder, file name, content type); each file runs `ctxaudit check` on every case.
EXPORTS = {
    "pytest": (exports.pytest_file, "test_ctxaudit_regression.py", "text/x-python"),
    "promptfoo": (exports.promptfoo_config, "promptfooconfig.yaml", "application/yaml"),
    "deepeval": (exports.deepeval_file, "test_ctxaudit_deepeval.py", "text/x-python"),
}


@login_required
@require_GET
def regression_export_as(request: HttpRequest, project_id: int, kind: str) -> HttpResponse:
    """The set as a pytest file, a promptfoo suite or DeepEval test cases (regression/exports.py)."""
    project = project_for_user(request.user, project_id)
    if kind not in EXPORTS:
        raise Http404("unknown export kind")
    build, filename, content_type = EXPORTS[kind]
    log_content_access(request, project, "export")
    samples = [
        services.regression_case_to_sample(c)
        for c in selectors.regression_cases(project.pk).order_by("created_at", "id")
    ]
    resp = HttpResponse(build(samples, title=project.name), content_type=f"{content_type}; charset=utf-8")
    resp["Content-Disposition"] = f'attachment; filename="{filename}"'
    return resp


@login_required
@require_POST
def regression_case_edit(request: HttpRequest, case_id: int) -> HttpResponse:
    case = selectors.regression_case_for_user(request.user, case_id)
    _require_role(request, case.project, REVIEW_ROLES)
    verdict = request.POST.get("verdict")
    try:
        services.regression_case_update(
            case=case, verdict=verdict or None, description=request.POST.get("description")
        )
    except ValueError as exc:
        return HttpResponse(str(exc), status=400)
    return redirect(reverse("regression:set", args=[case.project_id]) + f"#case-{case.pk}")


@login_required
@require_POST
def regression_case_delete(request: HttpRequest, case_id: int) -> HttpResponse:
    case = selectors.regression_case_for_user(request.user, case_id)
    _require_role(request, case.project, REVIEW_ROLES)
    project_id = case.project_id
    case.delete()
    return redirect("regression:set", project_id=project_id)


@login_required
@require_http_methods(["GET", "POST"])
def replay_endpoint(request: HttpRequest, project_id: int) -> HttpResponse:
    """The project's OpenAI-compatible endpoint for replays (admins only; the key is write-only)."""
    project = project_for_user(request.user, project_id)
    _require_role(request, project, (Membership.Role.ADMIN,))
    error = None
    if request.method == "POST":
        if request.POST.get("remove"):
            services.replay_endpoint_delete(project=project)
            return redirect("regression:replay-endpoint", project_id=project.pk)
        key = request.POST.get("api_key", "")
        try:
            services.replay_endpoint_save(
                project=project,
                base_url=request.POST.get("base_url", "").strip(),
                model=request.POST.get("model", "").strip(),
                api_key=key if key else None,
                user=request.user,  # type: ignore[arg-type]
            )
            return redirect("regression:replay-endpoint", project_id=project.pk)
        except (ValueError, ValidationError) as exc:
            error = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
    endpoint = ReplayEndpoint.objects.filter(project=project).first()
    return render(
        request,
        "ui/regression/endpoint.html",
        {"project": project, "endpoint": endpoint, "error": error},
        status=400 if error else 200,
    )


def _uploaded_results(request: HttpRequest, name: str) -> dict[str, Any]:
    """The `name` upload read as `ctxaudit check --json` output. Raises CompareInputError naming the field."""
    upload = request.FILES.get(name)
    if upload is None:
        raise CompareInputError(f"{name}: choose a `ctxaudit check --json` output file")
    if upload.size is not None and upload.size > MAX_COMPARE_BYTES:
        raise CompareInputError(f"{name}: larger than {MAX_COMPARE_BYTES // (1024 * 1024)} MB")
    try:
        text = upload.read().decode("utf-8")
    except UnicodeDecodeError:
        raise CompareInputError(f"{name}: is not UTF-8 text") from None
    return read_results(text, name)


@login_required
@require_http_methods(["GET", "POST"])
def regression_compare(request: HttpRequest, project_id: int) -> HttpResponse:
    """Compare two compressors on this project's regression set (issue 15): upload a baseline and
    a candidate `ctxaudit check --json` output; engine/compare.py does the comparison, as
    `ctxaudit check --compare` does. Any member may compare (nothing is stored); bad files → 400."""
    project = project_for_user(request.user, project_id)
    ctx: dict[str, Any] = {"project": project, "comparison": None, "error": None}
    status = 200
    if request.method == "POST":
        try:
            baseline = _uploaded_results(request, "baseline")
            candidate = _uploaded_results(request, "candidate")
            ctx["comparison"] = compare(baseline, candidate)
            ctx["names"] = [getattr(request.FILES.get(n), "name", n) for n in ("baseline", "candidate")]
        except CompareInputError as exc:
            ctx["error"], status = str(exc), 400
    return render(request, "ui/regression/compare.html", ctx, status=status)
