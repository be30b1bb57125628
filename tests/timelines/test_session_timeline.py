"""session_timeline: order, states, first weakening/loss, missing outcomes, the seed decay session."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from ctxaudit.audits.models import Finding, RuleOutcome
from ctxaudit.ingest.models import Event, Session, SessionRule
from ctxaudit.ingest.schemas import EventIn
from ctxaudit.ingest.services import event_ingest
from ctxaudit.timelines.selectors import session_timeline
from tests.timelines.build import build_session

pytestmark = pytest.mark.django_db


def _series(tl, rule_id):
    (rule,) = [r for r in tl.rules if r.rule_id == rule_id]
    return rule


def test_it_orders_events_by_sequence_then_time_then_id(project) -> None:
    session, events = build_session(project, {"R1": [1.0, 0.6, 0.3, 0.0]}, sequences=[3, None, 1, 2])
    # Same sequence, different times: time decides.
    late = Event.objects.create(
        project=project,
        session=session,
        sequence=1,
        occurred_at=timezone.now(),
        before=[],
        after=[],
        status="checked",
    )
    tl = session_timeline(session)
    assert [e.sequence for e in tl.events] == [1, 1, 2, 3, None]
    assert [e.id for e in tl.events][:2] == [events[2].id, late.id]


def test_it_marks_first_weakening_and_first_loss(project) -> None:
    session, events = build_session(
        project, {"R1": [1.0, 0.7, 0.4, 0.0, 0.0], "R2": [1.0, 1.0, 1.0, 1.0, 1.0]}
    )
    tl = session_timeline(session)
    r1 = _series(tl, "R1")
    assert [p.state for p in r1.points] == ["retained", "weakened", "weakened", "missing", "missing"]
    assert [p.strength for p in r1.points] == [1.0, 0.7, 0.4, 0.0, 0.0]
    assert r1.first_weakened.event.id == events[1].id
    assert r1.first_missing.event.id == events[3].id
    assert [p.first_weakened for p in r1.points] == [False, True, False, False, False]
    assert [p.first_missing for p in r1.points] == [False, False, False, True, False]
    r2 = _series(tl, "R2")
    assert r2.first_weakened is None and r2.first_missing is None and r2.decays == []


def test_it_counts_a_rule_without_outcome_as_missing_from_its_first_appearance(project) -> None:
    session, events = build_session(project, {"R1": [1.0, 1.0, 1.0]})
    # R2 comes in at the second compression, then the engine says nothing about it at the third.
    SessionRule.objects.create(session=session, rule_id="R2", text="Always ask twice.", first_event=events[1])
    RuleOutcome.objects.create(
        event=events[1], rule_id="R2", text="Always ask twice.", state="retained", strength=1.0
    )
    r2 = _series(session_timeline(session), "R2")
    assert [(p.event.id, p.state, p.strength) for p in r2.points] == [
        (events[1].id, "retained", 1.0),
        (events[2].id, "missing", 0.0),
    ]


def test_it_leaves_unchecked_events_without_strength(project) -> None:
    session, events = build_session(project, {"R1": [1.0, 0.5, 0.2]}, pending=[1])
    r1 = _series(session_timeline(session), "R1")
    assert [(p.state, p.strength) for p in r1.points] == [
        ("retained", 1.0),
        ("pending", None),
        ("weakened", 0.2),
    ]


def test_it_shows_the_seed_decay_session(shared_dir, project, django_capture_on_commit_callbacks) -> None:
    """seed §3.5 (samples/seed_decay_session.json): strength never rises; D1 first missing at 2 or 3."""
    sample = json.loads((shared_dir / "samples" / "seed_decay_session.json").read_text(encoding="utf-8"))
    t0 = timezone.now()
    for ev in sample["events"]:
        spec = EventIn.model_validate(
            {
                "session_id": sample["session"],
                "sequence": ev["sequence"],
                "occurred_at": (t0 + timedelta(minutes=ev["sequence"])).isoformat(),
                "strategy": "summary",
                "before": ev["before"],
                "after": ev["after"],
                "rules": sample["rules"],
            }
        )
        with django_capture_on_commit_callbacks(execute=True):
            event_ingest(project=project, spec=spec)
    session = Session.objects.select_related("project").get(project=project, external_id=sample["session"])
    tl = session_timeline(session)
    assert [e.sequence for e in tl.events] == [1, 2, 3]
    assert all(e.status == "checked" for e in tl.events)
    for rule_id in sample["expected"]["strength_non_increasing"]:
        strengths = [p.strength for p in _series(tl, rule_id).points]
        assert len(strengths) == 3
        assert all(b <= a for a, b in zip(strengths, strengths[1:], strict=False)), strengths
    for rule_id, allowed in sample["expected"]["first_missing_sequence"].items():
        first = _series(tl, rule_id).first_missing
        assert first is not None and first.event.sequence in allowed, [
            (p.event.sequence, p.state, p.strength) for p in _series(tl, rule_id).points
        ]
    # And the session-level finding: D1 fell at two compressions in a row (from 1.0 as stated).
    decays = Finding.objects.filter(event__session=session, kind="rule_decay", rule_id="D1").select_related(
        "event"
    )
    assert [f.event.sequence for f in decays] in ([2], [3])
    assert all(f.event.verdict == "fail" for f in decays)
