"""Reads for the checklist page: the evidence each §7.2 step needs, gathered from the event."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, QuerySet
from django.http import Http404
from django.urls import NoReverseMatch, reverse

from ctxaudit.engine.diff import sequence_opcodes
from ctxaudit.engine.language.normalize import normalize
from ctxaudit.ingest.event_rules import event_own_rules
from ctxaudit.ingest.models import Event
from ctxaudit.projects.access import projects_for_user
from ctxaudit.regression import replay
from ctxaudit.regression.guide import STEPS, SYMPTOM_FOR_KIND, symptom_for_kind
from ctxaudit.regression.models import ChecklistStep, RegressionCase, ReplayEndpoint, ReplayRun
from ctxaudit.regression.search import key_terms, search_context

SYSTEM_ROLES = ("system", "developer")
HIERARCHY_KINDS = ("system_rewritten", "summary_elevated", "rule_demoted")
DRIFT_KINDS = ("rule_weakened", "rule_drift", "rule_decay")
MAX_DIFF_LINES = 600
MAX_SESSION_EVENTS = 200


def regression_case_for_user(user: User | AnonymousUser, case_pk: int) -> RegressionCase:
    case = (
        RegressionCase.objects.filter(project__in=projects_for_user(user), pk=case_pk)
        .select_related("project")
        .first()
    )
    if case is None:
        raise Http404("No such regression case")
    return case


def replay_run_for_user(user: User | AnonymousUser, run_pk: int) -> ReplayRun:
    run = (
        ReplayRun.objects.filter(event__project__in=projects_for_user(user), pk=run_pk)
        .select_related("event")
        .first()
    )
    if run is None:
        raise Http404("No such replay run")
    return run


def checklist_steps(event: Event) -> list[dict[str, Any]]:
    """The seven steps with their marks: [{"step": Step, "mark": ChecklistStep | None, "status"}]."""
    marks = {m.step: m for m in ChecklistStep.objects.filter(event=event).select_related("updated_by")}
    out = []
    for s in STEPS:
        status = marks[s.number].status if s.number in marks else ChecklistStep.Status.OPEN
        out.append(
            {
                "step": s,
                "mark": marks.get(s.number),
                "status": status,
                "label": ChecklistStep.Status(status).label,
            }
        )
    return out


def checklist_progress(event_ids: list[int]) -> dict[int, int]:
    """{event id: steps marked done or not applicable} (0 for events with no marks)."""
    counts = dict.fromkeys(event_ids, 0)
    rows = (
        ChecklistStep.objects.filter(event_id__in=event_ids)
        .exclude(status=ChecklistStep.Status.OPEN)
        .values_list("event_id", flat=True)
    )
    for eid in rows:
        counts[eid] += 1
    return counts


def _rules_of(event: Event) -> list[dict[str, Any]]:
    report_rules = (event.report or {}).get("rules")
    if report_rules:
        return list(report_rules)
    return [{"id": r["id"], "text": r["text"], "state": None} for r in event_own_rules(event)]


def session_evidence(event: Event) -> dict[str, Any]:
    """Step 1: the session's compressions in order, and where its timeline page is."""
    events = list(
        Event.objects.filter(session=event.session)
        .order_by("sequence", "occurred_at", "id")
        .only("id", "sequence", "occurred_at", "strategy", "verdict", "status")[:MAX_SESSION_EVENTS]
    )
    try:
        timeline_url: str | None = reverse("ui:session-detail", args=[event.session_id])
    except NoReverseMatch:  # the timelines page has not landed (yet)
        timeline_url = None
    return {
        "session": event.session,
        "events": events,
        "timeline_url": timeline_url,
        "before_messages": len(event.before),
    }


MAX_LINE_CHARS = 2_000  # one diff line shown; a minified 8 MiB blob is one "line"


def _export_lines(messages: list[dict[str, Any]]) -> list[str]:
    lines = []
    for i, m in enumerate(messages):
        lines.append(f"[{i}] {m.get('role')}{' (' + m['name'] + ')' if m.get('name') else ''}:")
        lines.extend("    " + line for line in (m.get("content") or "").splitlines() or [""])
    return lines


def _shown(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]}… ({len(line) - MAX_LINE_CHARS:,} more characters)"


def line_diff(before: list[dict[str, Any]], after: list[dict[str, Any]], *, page: int = 1) -> dict[str, Any]:
    """Step 2: before and after exported one line per content line, compared line by line.

    Returns {"ops": [{"kind": "equal"|"delete"|"insert"|"skip", "text"}], "removed", "added",
    "truncated", "page", "pages"}: the diff in pages of MAX_DIFF_LINES ops (page is 1-based and
    clamped), each line cut at MAX_LINE_CHARS characters. removed/added count the whole diff.
    The line alignment is the event page's (engine.diff.sequence_opcodes: common head and tail,
    patience anchors, SequenceMatcher only on small gaps), so it stays near-linear in the number
    of lines; difflib over every line took 40 s for a 275 KB event (issue 13).
    """
    a, b = _export_lines(before), _export_lines(after)
    opcodes, _degraded = sequence_opcodes(a, b)
    start = (max(1, page) - 1) * MAX_DIFF_LINES
    ops: list[dict[str, str]] = []
    n = 0  # ops before `ops`' first element, counted but not built

    def emit(kind: str, lines: list[str] | None = None, text: str = "") -> None:
        nonlocal n
        for t in lines if lines is not None else [text]:
            if start <= n < start + MAX_DIFF_LINES:
                ops.append({"kind": kind, "text": _shown(t)})
            n += 1

    removed = added = 0
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            if i2 - i1 > 6:  # keep context short, like a unified diff
                emit("equal", a[i1 : i1 + 2])
                emit("skip", text=f"… {i2 - i1 - 4} unchanged lines …")
                emit("equal", a[i2 - 2 : i2])
            else:
                emit("equal", a[i1:i2])
            continue
        removed += i2 - i1
        added += j2 - j1
        # Counted without slicing when the page is elsewhere: a 100k-line side stays cheap.
        if n + (i2 - i1) <= start or n >= start + MAX_DIFF_LINES:
            n += i2 - i1
        else:
            emit("delete", a[i1:i2])
        if n + (j2 - j1) <= start or n >= start + MAX_DIFF_LINES:
            n += j2 - j1
        else:
            emit("insert", b[j1:j2])
    pages = max(1, -(-n // MAX_DIFF_LINES))
    if start >= n and n:  # past the end: show the last page
        return line_diff(before, after, page=pages)
    return {
        "ops": ops,
        "removed": removed,
        "added": added,
        "truncated": pages > 1,
        "page": max(1, page),
        "pages": pages,
    }


def rule_searches(event: Event, overrides: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Step 3: each rule, its key terms (a search box's default) and their hits in the after-context."""
    from ctxaudit.regression.search import parse_query

    out = []
    for r in _rules_of(event):
        terms = key_terms(r["text"])
        query = " ".join(terms)
        if overrides and r["id"] in overrides:
            query = overrides[r["id"]]
            terms = parse_query(query)
        out.append({"rule": r, "query": query, "result": search_context(event.after, terms)})
    return out


def system_evidence(event: Event) -> dict[str, Any]:
    """Step 4: was the system message a compression candidate (rewritten, merged, elevated)?"""
    before_sys = [(i, m) for i, m in enumerate(event.before) if m.get("role") in SYSTEM_ROLES]
    after_sys = [(i, m) for i, m in enumerate(event.after) if m.get("role") in SYSTEM_ROLES]
    after_sys_norm = [normalize(m.get("content") or "") for _, m in after_sys]
    after_any_norm = [normalize(m.get("content") or "") for m in event.after]
    kept = []
    for i, m in before_sys:
        n = normalize(m.get("content") or "")
        verbatim = any(m.get("content") == a.get("content") for _, a in after_sys)
        contained = bool(n) and any(n in a for a in after_sys_norm)
        elsewhere = not contained and bool(n) and any(n in a for a in after_any_norm)
        kept.append(
            {"index": i, "message": m, "verbatim": verbatim, "contained": contained, "elsewhere": elsewhere}
        )
    before_norms = [normalize(m.get("content") or "") for _, m in before_sys]
    new_system = [
        {"index": i, "message": m}
        for i, m in after_sys
        if normalize(m.get("content") or "") not in before_norms
    ]
    findings = list(event.findings.filter(kind__in=HIERARCHY_KINDS))
    candidate = (
        any(not k["contained"] for k in kept)
        or bool(new_system)
        or bool(findings)
        or bool((event.report or {}).get("summary_elevated"))
    )
    return {
        "kept": kept,
        "new_system": new_system,
        "findings": findings,
        "candidate": candidate,
        "summary_elevated": bool((event.report or {}).get("summary_elevated")),
    }


def drift_evidence(event: Event) -> dict[str, Any]:
    """Step 5: rules still present but reworded: the wording before and after, and what was lost."""
    weakened = []
    for r in _rules_of(event):
        if r.get("state") != "weakened":
            continue
        quotes = [s.get("quote") for s in r.get("evidence", []) if s.get("side") == "after"]
        weakened.append({"rule": r, "after_quotes": [q for q in quotes if q], "lost": r.get("lost") or []})
    findings = list(event.findings.filter(kind__in=DRIFT_KINDS))
    return {"weakened": weakened, "findings": findings}


def replay_evidence(event: Event, prompt: str | None = None) -> dict[str, Any]:
    """Step 6: the request to replay, the bundle's shape, the endpoint (if any) and past runs."""
    prompt = prompt if prompt is not None else replay.final_user_request(event.before, event.metadata)
    endpoint = ReplayEndpoint.objects.filter(project_id=event.project_id).first()
    bundle = replay.replay_bundle(
        before=event.before, after=event.after, prompt=prompt, model=endpoint.model if endpoint else None
    )
    runs = list(ReplayRun.objects.filter(event=event)[:5])
    return {
        "prompt": prompt,
        "endpoint": endpoint,
        "bundle": bundle,
        "runs": runs,
        "before_count": len(bundle["openai"]["before"]["messages"]),
        "after_count": len(bundle["openai"]["after"]["messages"]),
    }


def finding_symptoms(event: Event) -> list[dict[str, Any]]:
    """The event's finding kinds, each with its §7.1 row (None for a kind no row covers)."""
    kinds = sorted(set(event.findings.values_list("kind", flat=True)))
    return [
        {"kind": k, "symptom": symptom_for_kind(k), "why": SYMPTOM_FOR_KIND.get(k, (0, ""))[1]} for k in kinds
    ]


def events_with_kinds(user: User | AnonymousUser, kinds: list[str]) -> QuerySet[Event]:
    return (
        Event.objects.filter(project__in=projects_for_user(user), findings__kind__in=kinds)
        .distinct()
        .select_related("project", "session")
        .order_by("-occurred_at", "-id")
    )


def unmapped_kinds(user: User | AnonymousUser) -> list[str]:
    """Finding kinds in the user's projects that no §7.1 row covers yet."""
    from ctxaudit.audits.models import Finding

    qs = Finding.objects.filter(event__project__in=projects_for_user(user)).exclude(
        kind__in=list(SYMPTOM_FOR_KIND)
    )
    return sorted(set(qs.values_list("kind", flat=True)))


def regression_cases(project_id: int) -> QuerySet[RegressionCase]:
    return RegressionCase.objects.filter(project_id=project_id).select_related("created_by", "event")


def projects_with_case_counts(user: User | AnonymousUser) -> QuerySet[Any]:
    return projects_for_user(user).annotate(case_count=Count("regression_cases"))
