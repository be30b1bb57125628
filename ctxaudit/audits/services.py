"""Run the engine on a stored event and persist what it says. Safe to run twice."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.utils import timezone

from ctxaudit.audits.models import Finding, RuleOutcome
from ctxaudit.engine import ContextPair, Rule, Severity, run_checks
from ctxaudit.engine.formats import context_from_json
from ctxaudit.ingest.models import Event, SessionRule

logger = logging.getLogger(__name__)


def _order_key(ev: Event) -> tuple[int, Any, int]:
    return (ev.sequence if ev.sequence is not None else 2**31, ev.occurred_at, ev.pk)


def rules_in_force(event: Event) -> tuple[Rule, ...]:
    """The event's own rules, plus every rule in force earlier in its session (seed §3.5:
    a rule stays in force after a compression dropped it from the context)."""
    own = {
        r["id"]: Rule(r["id"], r["text"], Severity(r.get("severity", "high")), r.get("source", "event"))
        for r in event.rules
    }
    key = _order_key(event)
    earlier = SessionRule.objects.filter(session=event.session).select_related("first_event").order_by("id")
    for sr in earlier:
        if sr.rule_id in own:
            continue
        if sr.first_event is None or _order_key(sr.first_event) <= key:
            own[sr.rule_id] = Rule(sr.rule_id, sr.text, Severity(sr.severity), sr.source)
    return tuple(own.values())


def event_check(*, event_id: int) -> Event | None:
    """Check one event. Returns None when the row is gone; a checked event is left as it is."""
    event = Event.objects.select_related("session", "project").filter(pk=event_id).first()
    if event is None or event.status != Event.Status.PENDING:
        return event
    Event.objects.filter(pk=event_id).update(attempts=event.attempts + 1)
    pair = ContextPair(
        before=context_from_json(event.before),
        after=context_from_json(event.after),
        rules=rules_in_force(event),
        strategy=event.strategy,
        metadata=event.metadata,
    )
    try:
        report = run_checks(pair)
    except Exception as exc:
        # A bug in a check must show on the event, not retry forever.
        logger.exception("check failed for event %s", event_id)
        Event.objects.filter(pk=event_id, status=Event.Status.PENDING).update(
            status=Event.Status.ERROR, error=f"{type(exc).__name__}: {exc}", checked_at=timezone.now()
        )
        return Event.objects.get(pk=event_id)
    with transaction.atomic():
        locked = Event.objects.select_for_update().get(pk=event_id)
        if locked.status != Event.Status.PENDING:
            return locked  # another worker finished first
        RuleOutcome.objects.filter(event=locked).delete()
        Finding.objects.filter(event=locked).delete()
        RuleOutcome.objects.bulk_create(
            RuleOutcome(
                event=locked,
                rule_id=r.rule_id,
                text=r.text,
                state=r.state.value,
                strength=r.strength,
                role_before=r.role_before,
                role_after=r.role_after,
                demoted=r.demoted,
            )
            for r in report.rules
        )
        Finding.objects.bulk_create(
            Finding(
                event=locked,
                kind=f.kind,
                severity=f.severity.value,
                rule_id=f.rule_id,
                message=f.message,
                evidence=[s.to_dict() for s in f.evidence],
            )
            for f in report.findings
        )
        locked.status = Event.Status.CHECKED
        locked.verdict = report.verdict
        locked.report = report.to_dict()
        locked.tokens_before = report.tokens.before if report.tokens else None
        locked.tokens_after = report.tokens.after if report.tokens else None
        locked.engine_version = report.engine_version
        locked.checked_at = timezone.now()
        locked.error = ""
        locked.save()
        transaction.on_commit(lambda: after_check(locked.pk))
    return locked


def after_check(event_id: int) -> None:
    """Hook for what follows a finished check (alerts). Each step is its own task/service."""
    from ctxaudit.timelines.services import session_decay_sync  # decay findings first: alerts see them

    changed = session_decay_sync(event_id=event_id)

    from ctxaudit.alerts.services import alerts_evaluate_enqueue

    # Also the session's other events whose decay findings this check changed (checked out of order).
    for pk in dict.fromkeys([event_id, *changed]):
        alerts_evaluate_enqueue(pk)
