"""Run the engine on a stored event and persist what it says. Safe to run twice."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ctxaudit.audits.models import Finding, RuleOutcome
from ctxaudit.core.after_response import run_after_response
from ctxaudit.engine import ContextPair, Rule, Severity, embeddings, run_checks
from ctxaudit.engine.formats import context_from_json
from ctxaudit.ingest.handoff import handoff_take
from ctxaudit.ingest.models import Event, SessionRule
from ctxaudit.ingest.services import event_rules_extract

logger = logging.getLogger(__name__)


def _order_key(ev: Event) -> tuple[int, Any, int]:
    return (ev.sequence if ev.sequence is not None else 2**31, ev.occurred_at, ev.pk)


def rules_in_force(event: Event) -> tuple[Rule, ...]:
    """The event's own rules, plus every rule in force earlier in its session (seed §3.5:
    a rule stays in force after a compression dropped it from the context). Raises ValueError
    for an event whose rules are still to be extracted (event.rules NULL).

    One query over the session's rules, reading only the ordering columns of each rule's first
    event: loading the first events themselves decoded every earlier event's contexts and report
    once per rule (issue 13: 250 of 272 JSON decodes of a 50-rule check).
    """
    if event.rules is None:
        raise ValueError(
            f"event {event.pk}: its rules are not extracted yet (ingest.services.event_rules_extract)"
        )
    own = {
        r["id"]: Rule(r["id"], r["text"], Severity(r.get("severity", "high")), r.get("source", "event"))
        for r in event.rules
    }
    key = _order_key(event)
    earlier = (
        SessionRule.objects.filter(session_id=event.session_id)
        .order_by("id")
        .values_list(
            "rule_id",
            "text",
            "severity",
            "source",
            "first_event_id",
            "first_event__sequence",
            "first_event__occurred_at",
        )
    )
    for rule_id, text, severity, source, first_id, first_seq, first_at in earlier:
        if rule_id in own:
            continue
        if first_id is None or (first_seq if first_seq is not None else 2**31, first_at, first_id) <= key:
            own[rule_id] = Rule(rule_id, text, Severity(severity), source)
    return tuple(own.values())


_RESULT_FIELDS = (
    "status",
    "verdict",
    "report",
    "tokens_before",
    "tokens_after",
    "engine_version",
    "checked_at",
    "error",
)


def event_check(*, event_id: int, semantic: bool | None = None) -> Event | None:
    """Check one event. Returns None when the row is gone; a checked event is left as it is.

    The row's contexts are read (and JSON-decoded) once, or not at all when ingestion in this
    process hands them over (ingest/handoff.py: the embedded default); the result is written with
    an UPDATE of the result columns only, never the contexts again (they are the bulk of the row).
    An event whose rules are to be extracted (rules_source "extracted") gets them here
    (ingest.services.event_rules_extract), stored with the result.

    semantic: whether the checks may look for reworded rules by meaning (engine/embeddings.py);
    default: CTXAUDIT_SEMANTIC's setting for a worker, or for a synchronous path when ingestion in
    this process handed the event over (the check then runs inside the ingesting request).
    """
    fresh = handoff_take(event_id)
    event = Event.objects.filter(pk=event_id).defer("before", "after").first()
    if event is None:
        return None
    if event.status != Event.Status.PENDING:
        return event
    if fresh is not None:
        before, after = fresh
    else:
        stored = Event.objects.filter(pk=event_id).values_list("before", "after").first()
        if stored is None:
            return None
        before, after = context_from_json(stored[0]), context_from_json(stored[1])
    event.attempts += 1
    if fresh is None:
        # Counted before the run, so a check that kills its worker still shows as an attempt. A
        # check handed over by ingestion runs in the request that stored the event: if it dies,
        # so does the request; the count is written with the result (on SQLite every UPDATE
        # rewrites the whole row, contexts included).
        Event.objects.filter(pk=event_id).update(attempts=F("attempts") + 1)
    extracted = event.rules is None
    if extracted:
        event.rules = event_rules_extract(event=event, before=before, after=after)
    pair = ContextPair(
        before=before,
        after=after,
        rules=rules_in_force(event),
        strategy=event.strategy,
        metadata=event.metadata,
    )
    try:
        if semantic is None:
            semantic = embeddings.enabled_for("sync" if fresh is not None else "worker")
        report = run_checks(pair, semantic=semantic)
    except Exception as exc:
        # A bug in a check must show on the event, not retry forever.
        logger.exception("check failed for event %s", event_id)
        Event.objects.filter(pk=event_id, status=Event.Status.PENDING).update(
            status=Event.Status.ERROR,
            error=f"{type(exc).__name__}: {exc}",
            checked_at=timezone.now(),
            **({"rules": event.rules} if extracted else {}),
            **({"attempts": F("attempts") + 1} if fresh is not None else {}),
        )
        return Event.objects.defer("before", "after").get(pk=event_id)
    with transaction.atomic():
        locked = Event.objects.select_for_update().filter(pk=event_id).only("pk", "status").first()
        if locked is None:
            return None
        if locked.status != Event.Status.PENDING:
            return Event.objects.defer("before", "after").get(pk=event_id)  # another worker finished first
        RuleOutcome.objects.filter(event_id=event_id).delete()
        Finding.objects.filter(event_id=event_id).delete()
        RuleOutcome.objects.bulk_create(
            RuleOutcome(
                event_id=event_id,
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
        report_dict = report.to_dict()
        Finding.objects.bulk_create(
            Finding(
                event_id=event_id,
                kind=f.kind,
                severity=f.severity.value,
                rule_id=f.rule_id,
                message=f.message,
                evidence=d["evidence"],  # the spans as the report holds them, not converted again
            )
            for f, d in zip(report.findings, report_dict["findings"], strict=True)
        )
        event.status = Event.Status.CHECKED
        event.verdict = report.verdict
        event.report = report_dict
        event.tokens_before = report.tokens.before if report.tokens else None
        event.tokens_after = report.tokens.after if report.tokens else None
        event.engine_version = report.engine_version
        event.checked_at = timezone.now()
        event.error = ""
        event.save(
            update_fields=_RESULT_FIELDS
            + (("rules",) if extracted else ())
            + (("attempts",) if fresh else ())
        )
        # Alerts follow the answer: in the embedded default this check runs inside the POST that
        # stored the event, and its 202 need not wait for them (core/after_response.py).
        transaction.on_commit(lambda: run_after_response(lambda: after_check(event_id)))
    return event


def after_check(event_id: int) -> None:
    """Hook for what follows a finished check (alerts). Each step is its own task/service."""
    from ctxaudit.timelines.services import session_decay_sync  # decay findings first: alerts see them

    changed = session_decay_sync(event_id=event_id)

    from ctxaudit.alerts.services import alerts_evaluate_enqueue

    # Also the session's other events whose decay findings this check changed (checked out of order).
    for pk in dict.fromkeys([event_id, *changed]):
        alerts_evaluate_enqueue(pk)
