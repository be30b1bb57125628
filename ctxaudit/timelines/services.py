"""Decay findings: the one writer of audits.Finding rows of kind "rule_decay".

Choices (issue 5):
- *Out of order*: after each check the whole session is recomputed (one timeline: three
  queries) and its rule_decay findings are synced to it: missing ones created, stale ones
  deleted. An earlier event checked late therefore moves, adds or removes findings on the
  session's later events, and running it twice changes nothing (idempotent). Pending events are
  skipped in a run (see decay.decay_runs), and their own check triggers another sync.
- *Severity and verdict*: decay is high severity, so an event carrying a rule_decay finding has
  verdict "fail". The finding is also written into event.report["findings"] so the events API
  shows it. The engine's own verdict is kept in report["engine_verdict"], so that removing the
  last decay finding of an event restores it.
- Concurrency: two workers syncing one session are serialised by a row lock on the session.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.db.models import Min

from ctxaudit.audits.models import Finding
from ctxaudit.ingest.models import Event, Session
from ctxaudit.timelines.decay import DecayRun
from ctxaudit.timelines.selectors import DECAY_KIND, MISSING, RuleTimeline, session_timeline

logger = logging.getLogger(__name__)

DECAY_SEVERITY = "high"


def _fmt(x: float) -> str:
    return f"{x:.2f}"


def _decay_message(rule: RuleTimeline, run: DecayRun) -> str:
    seqs = [rule.points[i].event.sequence for i in run.indices]
    where = " → ".join(
        str(s) if s is not None else f"#{rule.points[i].event.id}"
        for s, i in zip(seqs, run.indices, strict=True)
    )
    end = rule.points[run.end]
    tail = "it is now missing." if end.state == MISSING else "no single step lost it."
    return (
        f"Rule {rule.rule_id} weakened across {len(run.indices)} compressions in a row "
        f"(strength {' → '.join(_fmt(v) for v in run.values)}, compressions {where}); {tail}"
    )


def _report_entry(rule: RuleTimeline, run: DecayRun, message: str) -> dict[str, Any]:
    return {
        "kind": DECAY_KIND,
        "severity": DECAY_SEVERITY,
        "rule_id": rule.rule_id,
        "message": message,
        "evidence": [],
        "data": {
            "compressions": len(run.indices),
            "strengths": [round(v, 3) for v in run.values],
            "sequences": [rule.points[i].event.sequence for i in run.indices],
            "event_ids": [rule.points[i].event.id for i in run.indices],
        },
    }


def session_decay_sync(*, event_id: int) -> list[int]:
    """Recompute the rule_decay findings of the session of `event_id`.

    Returns the ids of the events whose decay findings changed (empty when nothing did, or when
    the event is gone). Safe to run twice and in any order of checks.
    """
    session_id = Event.objects.filter(pk=event_id).values_list("session_id", flat=True).first()
    if session_id is None:
        return []
    with transaction.atomic():
        session = (
            Session.objects.select_for_update(of=("self",))
            .select_related("project")
            .filter(pk=session_id)
            .first()
        )
        if session is None:
            return []
        timeline = session_timeline(session)
        wanted: dict[tuple[int, str], dict[str, Any]] = {}
        for rule in timeline.rules:
            for run in rule.decays:
                message = _decay_message(rule, run)
                wanted[(rule.points[run.end].event.id, rule.rule_id)] = _report_entry(rule, run, message)

        existing = list(
            Finding.objects.filter(event__session=session, kind=DECAY_KIND).values_list(
                "pk", "event_id", "rule_id", "message"
            )
        )
        keep: set[tuple[int, str]] = set()
        stale: list[int] = []
        changed: set[int] = set()
        for pk, ev_id, rule_id, message in existing:
            key = (ev_id, rule_id or "")
            entry = wanted.get(key)
            if entry is not None and entry["message"] == message and key not in keep:
                keep.add(key)
            else:
                stale.append(pk)
                changed.add(ev_id)
        new = {k: v for k, v in wanted.items() if k not in keep}
        changed.update(ev_id for ev_id, _ in new)
        if not changed:
            return []
        Finding.objects.filter(pk__in=stale).delete()
        Finding.objects.bulk_create(
            Finding(
                event_id=ev_id,
                kind=DECAY_KIND,
                severity=DECAY_SEVERITY,
                rule_id=rule_id,
                message=e["message"],
                evidence=[],
            )
            for (ev_id, rule_id), e in new.items()
        )
        # Not the contexts: they are the bulk of each row and only the report changes.
        for event in Event.objects.select_for_update().filter(pk__in=changed).defer("before", "after"):
            _event_report_sync(event, [e for (ev_id, _), e in wanted.items() if ev_id == event.pk])
    logger.info("decay findings changed on events %s (session %s)", sorted(changed), session_id)
    return sorted(changed)


def _event_report_sync(event: Event, entries: list[dict[str, Any]]) -> None:
    """Put exactly `entries` as the event's rule_decay findings in its report, and fix its verdict."""
    report = dict(event.report or {})
    engine_verdict = report.get("engine_verdict", report.get("verdict", event.verdict))
    report["engine_verdict"] = engine_verdict
    report["findings"] = [f for f in report.get("findings", []) if f.get("kind") != DECAY_KIND] + entries
    verdict = "fail" if entries else engine_verdict
    report["verdict"] = verdict
    event.report = report
    event.verdict = verdict
    event.save(update_fields=["report", "verdict"])


def project_decay_sync(*, project_id: int) -> int:
    """Recompute the rule_decay findings of every session of a project, e.g. after its
    `decay_compressions` changed. Returns how many events' findings changed."""
    first_events = (
        Event.objects.filter(project_id=project_id)
        .values("session_id")
        .annotate(first=Min("id"))
        .values_list("first", flat=True)
    )
    return sum(len(session_decay_sync(event_id=pk)) for pk in first_events)
