"""Writes for the checklist, the regression set, replay runs and the gate (HackSoft services)."""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from ctxaudit.audits.services import event_check
from ctxaudit.core import netguard
from ctxaudit.engine import embeddings
from ctxaudit.ingest.event_rules import event_own_rules
from ctxaudit.ingest.models import Event
from ctxaudit.ingest.schemas import EventIn
from ctxaudit.ingest.services import event_ingest
from ctxaudit.projects.models import Project
from ctxaudit.regression import replay
from ctxaudit.regression.guide import STEP_COUNT
from ctxaudit.regression.models import ChecklistStep, RegressionCase, ReplayEndpoint, ReplayRun

logger = logging.getLogger(__name__)

VERDICTS = ("pass", "fail", "no_rules")
# Findings whose after-side evidence quotes a claim or imperative promoted to fact/instruction.
PROMOTION_KINDS = ("claim_promoted", "injection_promoted")


def checklist_step_mark(*, event: Event, step: int, status: str, note: str, user: User) -> ChecklistStep:
    """Record a reviewer's mark on one checklist step; the last writer's name and time are kept."""
    if not 1 <= step <= STEP_COUNT:
        raise ValueError(f"step must be 1..{STEP_COUNT}")
    if status not in ChecklistStep.Status.values:
        raise ValueError(f"status must be one of {', '.join(ChecklistStep.Status.values)}")
    obj, _ = ChecklistStep.objects.update_or_create(
        event=event,
        step=step,
        defaults={
            "status": status,
            "note": note.strip()[:5000],
            "updated_by": user,
            "updated_at": timezone.now(),
        },
    )
    return obj


def expected_from_event(event: Event) -> dict[str, Any]:
    """The incident's current check results as a samples-format `expected` block."""
    report = event.report or {}
    rules = report.get("rules", [])
    expected: dict[str, Any] = {
        "rules": {r["id"]: r["state"] for r in rules},
        "demoted_rules": [r["id"] for r in rules if r.get("demoted")],
        "summary_elevated": bool(report.get("summary_elevated", False)),
    }
    claims = [
        s["quote"]
        for f in report.get("findings", [])
        if f.get("kind") in PROMOTION_KINDS
        for s in f.get("evidence", [])
        if s.get("side") == "after" and s.get("quote")
    ]
    if claims:
        expected["claims_promoted"] = claims
    expected["verdict"] = event.verdict if event.verdict in VERDICTS else "fail"
    return expected


def _case_rules(event: Event) -> list[dict[str, Any]]:
    """The rules the check used (session rules in force included), with their severities."""
    own = event_own_rules(event)
    severity = {r["id"]: r.get("severity", "high") for r in own}
    report_rules = (event.report or {}).get("rules", [])
    if not report_rules:
        return [{"id": r["id"], "text": r["text"], "severity": r.get("severity", "high")} for r in own]
    return [
        {"id": r["id"], "text": r["text"], "severity": severity.get(r["id"], "high")} for r in report_rules
    ]


def _samples_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"role": m["role"], "content": m.get("content", ""), **({"name": m["name"]} if m.get("name") else {})}
        for m in messages
    ]


def regression_case_from_event(*, event: Event, user: User | None) -> tuple[RegressionCase, bool]:
    """Add `event` to its project's regression set (checklist step 7). Returns (case, created);
    adding the same event twice answers the existing case."""
    case_id = f"event-{event.pk}"
    existing = RegressionCase.objects.filter(project_id=event.project_id, case_id=case_id).first()
    if existing:
        return existing, False
    kinds = sorted(set(event.findings.values_list("kind", flat=True)))
    seq = f" #{event.sequence}" if event.sequence is not None else ""
    try:
        with transaction.atomic():
            case = RegressionCase.objects.create(
                project_id=event.project_id,
                case_id=case_id,
                source=f"ctxaudit event {event.pk}, session {event.session.external_id}{seq}"[:200],
                strategy=event.strategy,
                description=(f"Findings: {', '.join(kinds)}." if kinds else "No findings when added."),
                rules=_case_rules(event),
                before=_samples_messages(event.before),
                after=_samples_messages(event.after),
                expected=expected_from_event(event),
                event=event,
                created_by=user,
            )
    except IntegrityError:  # a concurrent click won
        return RegressionCase.objects.get(project_id=event.project_id, case_id=case_id), False
    if user is not None:
        _tick_regression_step(event, case, user)
    return case, True


REGRESSION_STEP = 7  # guide.STEPS[6]: add the case to the rule-retention regression set


def _tick_regression_step(event: Event, case: RegressionCase, user: User) -> None:
    """Adding the incident is what checklist step 7 asks: mark it done, unless a reviewer
    already wrote something there."""
    step = ChecklistStep.objects.filter(event=event, step=REGRESSION_STEP).first()
    if step is None or (step.status == ChecklistStep.Status.OPEN and not step.note):
        checklist_step_mark(
            event=event,
            step=REGRESSION_STEP,
            status=ChecklistStep.Status.DONE,
            note=f"Added to the regression set as {case.case_id}.",
            user=user,
        )


def regression_case_update(
    *, case: RegressionCase, verdict: str | None = None, description: str | None = None
) -> RegressionCase:
    """Edit a case's expected verdict and description (the rule states stay as recorded)."""
    if verdict is not None:
        if verdict not in VERDICTS:
            raise ValueError("verdict must be pass, fail or no_rules")
        case.expected = {**case.expected, "verdict": verdict}
    if description is not None:
        case.description = description.strip()[:5000]
    case.save(update_fields=["expected", "description"])
    return case


def regression_case_to_sample(case: RegressionCase) -> dict[str, Any]:
    """One case in the samples format (shared/samples/README.md), as `ctxaudit check` reads it."""
    return {
        "id": case.case_id,
        "source": case.source,
        "strategy": case.strategy,
        "description": case.description,
        "rules": case.rules,
        "before": case.before,
        "after": case.after,
        "expected": case.expected,
    }


def replay_endpoint_save(
    *, project: Project, base_url: str, model: str, api_key: str | None, user: User
) -> ReplayEndpoint:
    """Create or change the project's replay endpoint; api_key None keeps the stored key."""
    if not base_url.strip().startswith(("http://", "https://")):
        raise ValueError("the base URL must start with http:// or https://")
    try:
        netguard.check_url(base_url)
    except netguard.UnsafeURL as e:
        raise ValueError(f"the base URL is refused: {e}") from None
    endpoint = ReplayEndpoint.objects.filter(project=project).first() or ReplayEndpoint(project=project)
    endpoint.base_url = base_url.strip()
    endpoint.model = model.strip()
    if api_key is not None:
        endpoint.api_key = api_key.strip()
    endpoint.updated_by = user
    endpoint.updated_at = timezone.now()
    endpoint.full_clean(exclude=["project", "updated_by", "api_key"])
    endpoint.save()
    return endpoint


def replay_endpoint_delete(*, project: Project) -> None:
    ReplayEndpoint.objects.filter(project=project).delete()


def replay_run_start(*, event: Event, prompt: str, user: User) -> ReplayRun:
    """Queue a replay of `prompt` with the before- and the after-context (checklist step 6).
    Raises ValueError when the project has no endpoint: nothing leaves the machine by default."""
    endpoint = ReplayEndpoint.objects.filter(project_id=event.project_id).first()
    if endpoint is None:
        raise ValueError("this project has no replay endpoint configured")
    run = ReplayRun.objects.create(
        event=event, prompt=prompt, model=endpoint.model, base_url=endpoint.base_url, requested_by=user
    )

    def enqueue() -> None:
        from ctxaudit.regression.tasks import replay_run_execute_task

        try:
            replay_run_execute_task.delay(run.pk)
        except Exception as exc:  # the broker is down: say so on the run rather than spin forever
            logger.exception("could not enqueue replay run %s", run.pk)
            ReplayRun.objects.filter(pk=run.pk, status=ReplayRun.Status.PENDING).update(
                status=ReplayRun.Status.ERROR,
                error=f"could not queue the run: {type(exc).__name__}",
                finished_at=timezone.now(),
            )

    transaction.on_commit(enqueue)
    return run


def replay_run_execute(*, run_id: int) -> ReplayRun | None:
    """Send both requests and store both answers. Returns None when the run is gone; a finished
    run is left as it is (safe to run twice: the pending → done update claims it)."""
    run = ReplayRun.objects.select_related("event", "event__project").filter(pk=run_id).first()
    if run is None or run.status != ReplayRun.Status.PENDING:
        return run
    endpoint = ReplayEndpoint.objects.filter(project_id=run.event.project_id).first()
    if endpoint is None:
        ReplayRun.objects.filter(pk=run_id, status=ReplayRun.Status.PENDING).update(
            status=ReplayRun.Status.ERROR,
            error="the project's replay endpoint was removed",
            finished_at=timezone.now(),
        )
        return ReplayRun.objects.get(pk=run_id)
    bundle = replay.replay_bundle(
        before=run.event.before, after=run.event.after, prompt=run.prompt, model=run.model
    )
    try:
        answer_before = replay.chat_completion(
            base_url=run.base_url, api_key=endpoint.api_key, body=bundle["openai"]["before"]
        )
        answer_after = replay.chat_completion(
            base_url=run.base_url, api_key=endpoint.api_key, body=bundle["openai"]["after"]
        )
    except replay.ReplayError as exc:
        ReplayRun.objects.filter(pk=run_id, status=ReplayRun.Status.PENDING).update(
            status=ReplayRun.Status.ERROR, error=str(exc), finished_at=timezone.now()
        )
        return ReplayRun.objects.get(pk=run_id)
    ReplayRun.objects.filter(pk=run_id, status=ReplayRun.Status.PENDING).update(
        status=ReplayRun.Status.DONE,
        answer_before=answer_before,
        answer_after=answer_after,
        finished_at=timezone.now(),
    )
    return ReplayRun.objects.get(pk=run_id)


def gate_check(*, project: Project, spec: EventIn, idempotency_key: str | None = None) -> Event:
    """Store the event (as POST /api/v1/events does) and check it now, in the request.

    The enqueued check finds the event already checked and leaves it; a worker that got there
    first makes this call a read. Raises ContextFormatError like event_ingest.
    """
    event, _ = event_ingest(project=project, spec=spec, idempotency_key=idempotency_key)
    # the gate answers in the request: no embeddings unless CTXAUDIT_SEMANTIC=all
    checked = event_check(event_id=event.pk, semantic=embeddings.enabled_for("sync"))
    return checked if checked is not None else event
