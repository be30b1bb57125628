"""session_decay_sync: rule_decay findings across N compressions, idempotent, any check order."""

from __future__ import annotations

import pytest

from ctxaudit.audits.models import Finding, RuleOutcome
from ctxaudit.audits.services import after_check
from ctxaudit.ingest.models import Event
from ctxaudit.timelines.services import session_decay_sync
from tests.timelines.build import build_session

pytestmark = pytest.mark.django_db


def _decays(session):
    return sorted(
        Finding.objects.filter(event__session=session, kind="rule_decay").values_list(
            "event__sequence", "rule_id"
        )
    )


def test_it_raises_decay_across_n_steps_when_no_step_lost_the_rule(project) -> None:
    session, events = build_session(project, {"R1": [0.8, 0.6, 0.6], "R2": [1.0, 1.0, 1.0]})
    changed = session_decay_sync(event_id=events[-1].id)
    assert changed == [events[1].id]
    assert _decays(session) == [(2, "R1")]
    f = Finding.objects.get(kind="rule_decay")
    assert f.severity == "high"
    assert "weakened across 2 compressions in a row" in f.message
    assert "1.00 → 0.80 → 0.60" in f.message
    assert "no single step lost it" in f.message
    ev = Event.objects.get(pk=events[1].id)
    assert ev.verdict == "fail"
    assert ev.report["engine_verdict"] == "pass"
    (entry,) = [x for x in ev.report["findings"] if x["kind"] == "rule_decay"]
    assert entry["rule_id"] == "R1"
    assert entry["data"]["sequences"] == [1, 2]
    assert Event.objects.get(pk=events[0].id).verdict == "pass"


def test_it_raises_nothing_for_stable_or_once_weakened_rules(project) -> None:
    session, events = build_session(project, {"R1": [1.0, 1.0, 1.0, 1.0], "R2": [0.6, 0.6, 0.6, 0.6]})
    assert session_decay_sync(event_id=events[-1].id) == []
    assert _decays(session) == []
    assert set(Event.objects.values_list("verdict", flat=True)) == {"pass"}


def test_it_uses_the_projects_decay_compressions(project) -> None:
    project.decay_compressions = 3
    project.save()
    session, events = build_session(project, {"R1": [0.9, 0.8, 0.7]})
    session_decay_sync(event_id=events[0].id)
    assert _decays(session) == [(3, "R1")]


def test_it_is_idempotent(project) -> None:
    session, events = build_session(project, {"R1": [0.8, 0.6]})
    session_decay_sync(event_id=events[1].id)
    assert session_decay_sync(event_id=events[1].id) == []
    assert session_decay_sync(event_id=events[0].id) == []
    assert Finding.objects.filter(kind="rule_decay").count() == 1
    ev = Event.objects.get(pk=events[1].id)
    assert [f["kind"] for f in ev.report["findings"]].count("rule_decay") == 1


def test_it_recomputes_later_events_when_an_earlier_one_is_checked_late(project) -> None:
    # Sequence 2 is checked last: until then the run is 1.0 → 0.8 (seq 1) → 0.7 (seq 3): decay at 3.
    session, events = build_session(project, {"R1": [0.8, 0.9, 0.7]}, pending=[1])
    session_decay_sync(event_id=events[2].id)
    assert _decays(session) == [(3, "R1")]
    assert Event.objects.get(pk=events[2].id).verdict == "fail"
    # Now sequence 2 arrives: 0.8 → 0.9 is a rise, so the only run left is 0.9 → 0.7 (one fall).
    Event.objects.filter(pk=events[1].id).update(
        status="checked", verdict="pass", report={"verdict": "pass", "findings": []}
    )
    RuleOutcome.objects.create(event=events[1], rule_id="R1", text="x", state="weakened", strength=0.9)
    changed = session_decay_sync(event_id=events[1].id)
    assert changed == [events[2].id]
    assert _decays(session) == []
    ev = Event.objects.get(pk=events[2].id)
    assert ev.verdict == "pass"  # the engine's verdict comes back
    assert [f for f in ev.report["findings"] if f["kind"] == "rule_decay"] == []


def test_it_moves_a_finding_when_a_late_event_completes_an_earlier_run(project) -> None:
    session, events = build_session(project, {"R1": [0.8, 0.6, 0.4]}, pending=[1])
    session_decay_sync(event_id=events[2].id)
    assert _decays(session) == [(3, "R1")]
    Event.objects.filter(pk=events[1].id).update(
        status="checked", verdict="pass", report={"verdict": "pass", "findings": []}
    )
    RuleOutcome.objects.create(event=events[1], rule_id="R1", text="x", state="weakened", strength=0.6)
    session_decay_sync(event_id=events[1].id)
    assert _decays(session) == [(2, "R1")]
    assert Event.objects.get(pk=events[2].id).verdict == "pass"
    assert Event.objects.get(pk=events[1].id).verdict == "fail"


def test_it_runs_after_each_check(project) -> None:
    """after_check (audits.services) calls the sync: the one-line hook."""
    session, events = build_session(project, {"R1": [0.8, 0.6]})
    after_check(events[1].id)
    assert _decays(session) == [(2, "R1")]


def test_it_keeps_a_failing_engine_verdict(project) -> None:
    session, events = build_session(project, {"R1": [0.8, 0.6]})
    Event.objects.filter(pk=events[1].id).update(
        verdict="fail", report={"verdict": "fail", "findings": [{"kind": "rule_weakened"}]}
    )
    session_decay_sync(event_id=events[1].id)
    ev = Event.objects.get(pk=events[1].id)
    assert ev.verdict == "fail"
    assert [f["kind"] for f in ev.report["findings"]] == ["rule_weakened", "rule_decay"]


def test_it_ignores_a_missing_event(db) -> None:
    assert session_decay_sync(event_id=12345) == []


def test_it_recomputes_a_project_when_its_setting_changes(project) -> None:
    s1, e1 = build_session(project, {"R1": [0.8, 0.6, 0.5]}, external_id="a")
    s2, e2 = build_session(project, {"R1": [0.9, 0.8]}, external_id="b")
    from ctxaudit.timelines.services import project_decay_sync

    assert project_decay_sync(project_id=project.pk) == 2
    assert _decays(s1) == [(2, "R1")] and _decays(s2) == [(2, "R1")]
    project.decay_compressions = 3
    project.save()
    assert project_decay_sync(project_id=project.pk) == 3  # a: moved from 2 to 3; b: removed
    assert _decays(s1) == [(3, "R1")] and _decays(s2) == []
    assert project_decay_sync(project_id=project.pk) == 0
