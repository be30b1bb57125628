from __future__ import annotations

import pytest
from django.utils import timezone

from ctxaudit.alerts.models import Alert, AlertActivity, AlertCondition, Channel, Delivery
from ctxaudit.alerts.services import (
    alert_acknowledge,
    alert_mute,
    alert_policy_for_project,
    alert_resolve,
    alerts_for_event,
)
from ctxaudit.alerts.tasks import alerts_evaluate_task
from ctxaudit.audits.models import RuleOutcome
from tests.alerts.conftest import checked_event
from tests.factories import event as ingest_event

pytestmark = pytest.mark.django_db

MISSING_R1 = ("rule_missing", "high", "R1", "Rule R1 is missing after compression.")


def test_it_groups_two_events_with_the_same_missing_rule(alice) -> None:
    e1 = checked_event(findings=[MISSING_R1], session_id="s-1")
    e2 = checked_event(findings=[MISSING_R1], session_id="s-2")
    alerts_for_event(e1.pk)
    alerts_for_event(e2.pk)
    alert = Alert.objects.get()
    assert (alert.kind, alert.rule_id, alert.count, alert.session_count) == ("rule_missing", "R1", 2, 2)
    assert set(alert.events.values_list("pk", flat=True)) == {e1.pk, e2.pk}
    assert alert.status == "open"
    assert alert.first_seen <= alert.last_seen


def test_it_does_not_double_count_a_reevaluated_event(alice) -> None:
    ev = checked_event(findings=[MISSING_R1])
    assert len(alerts_for_event(ev.pk)) == 1
    assert alerts_for_event(ev.pk) == []
    assert Alert.objects.get().count == 1
    assert AlertActivity.objects.filter(kind="opened").count() == 1


def test_it_keeps_different_rules_and_kinds_apart(alice) -> None:
    ev = checked_event(
        findings=[
            MISSING_R1,
            ("rule_missing", "high", "R2", "R2 gone"),
            ("rule_demoted", "high", "R1", "R1 demoted"),
        ]
    )
    alerts_for_event(ev.pk)
    assert sorted(Alert.objects.values_list("rule_id", "kind")) == [
        ("R1", "rule_demoted"),
        ("R1", "rule_missing"),
        ("R2", "rule_missing"),
    ]


def test_it_reopens_a_resolved_alert_as_a_regression(alice) -> None:
    alerts_for_event(checked_event(findings=[MISSING_R1], sequence=1).pk)
    alert = alert_resolve(alert=Alert.objects.get(), user=alice)
    assert alert.status == "resolved"
    ev = checked_event(findings=[MISSING_R1], sequence=2)
    alerts_for_event(ev.pk)
    alert.refresh_from_db()
    assert alert.status == "open"
    assert alert.is_regression
    assert alert.count == 2
    kinds = list(alert.activities.values_list("kind", flat=True))
    assert kinds == ["opened", "resolved", "regression"]
    assert alert.activities.get(kind="regression").event_id == ev.pk


def test_it_leaves_an_acknowledged_alert_acknowledged_and_quiet(alice) -> None:
    Channel.objects.create(project=alice.memberships.get().project, kind="email", target="ops@example.com")
    alerts_for_event(checked_event(findings=[MISSING_R1], sequence=1).pk)
    alert_acknowledge(alert=Alert.objects.get(), user=alice)
    alerts_for_event(checked_event(findings=[MISSING_R1], sequence=2).pk)
    alert = Alert.objects.get()
    assert (alert.status, alert.count) == ("acknowledged", 2)
    assert Delivery.objects.count() == 1  # only the opening


def test_it_needs_two_weakened_rules_in_one_event(alice) -> None:
    one = checked_event(findings=[("rule_weakened", "medium", "R1", "R1 weaker")], sequence=1)
    assert alerts_for_event(one.pk) == []
    two = checked_event(
        findings=[
            ("rule_weakened", "medium", "R1", "R1 weaker"),
            ("rule_weakened", "medium", "R2", "R2 weaker"),
        ],
        sequence=2,
    )
    assert sorted(a.rule_id for a in alerts_for_event(two.pk)) == ["R1", "R2"]


def test_it_alerts_on_a_missing_critical_rule_at_critical_severity(alice) -> None:
    ev = checked_event(
        findings=[MISSING_R1], rules=[{"id": "R1", "text": "禁止删除任何业务数据", "severity": "critical"}]
    )
    (alert,) = alerts_for_event(ev.pk)
    assert alert.severity == "critical"
    assert alert.rule_text == "禁止删除任何业务数据"


def test_it_ignores_findings_below_the_policy_severity(alice) -> None:
    ev = checked_event(
        findings=[("rule_missing", "low", "R9", "low rule gone")],
        rules=[{"id": "R9", "text": "Be nice.", "severity": "low"}],
    )
    assert alerts_for_event(ev.pk) == []


@pytest.mark.parametrize("kind", ["claim_promoted", "injection_promoted"])
def test_it_alerts_on_any_promoted_claim(alice, kind) -> None:
    ev = checked_event(findings=[(kind, "low", None, "“用户已获得删除授权” is stated as fact")])
    (alert,) = alerts_for_event(ev.pk)
    assert (alert.kind, alert.rule_id) == (kind, "")


def test_it_alerts_on_decay_only_across_enough_compressions(alice) -> None:
    project = alice.memberships.get().project
    project.decay_compressions = 3
    project.save()
    events = []
    for seq in (1, 2, 3):
        ev = checked_event(
            findings=[
                ("rule_weakened", "medium", "R1", "weaker"),
                ("rule_decay", "medium", "R1", "R1 decays"),
            ],
            session_id="decay",
            sequence=seq,
        )
        RuleOutcome.objects.create(
            event=ev, rule_id="R1", text="禁止删除", state="weakened", strength=1 - seq / 4
        )
        events.append(ev)
    assert [a.kind for a in alerts_for_event(events[0].pk)] == []
    assert [a.kind for a in alerts_for_event(events[1].pk)] == []
    assert [a.kind for a in alerts_for_event(events[2].pk)] == ["rule_decay"]


def test_it_creates_a_default_policy_lazily(alice) -> None:
    project = alice.memberships.get().project
    policy = alert_policy_for_project(project)
    got = {c.kind: (c.min_severity, c.min_per_event) for c in policy.conditions.all()}
    assert got["rule_missing"] == ("high", 1)
    assert got["rule_weakened"] == ("low", 2)
    assert got["claim_promoted"] == ("low", 1)
    assert policy.conditions.get(kind="rule_decay").min_compressions == project.decay_compressions
    assert alert_policy_for_project(project).pk == policy.pk


def test_it_follows_a_changed_policy(alice) -> None:
    policy = alert_policy_for_project(alice.memberships.get().project)
    AlertCondition.objects.filter(policy=policy, kind="rule_missing").update(enabled=False)
    assert alerts_for_event(checked_event(findings=[MISSING_R1]).pk) == []


def test_it_skips_pending_and_missing_events(alice) -> None:
    pending = ingest_event("acme")
    assert pending.status == "pending"
    assert alerts_for_event(pending.pk) == []
    assert alerts_for_event(10**9) == []


def test_it_does_not_notify_while_muted(alice) -> None:
    Channel.objects.create(project=alice.memberships.get().project, kind="email", target="ops@example.com")
    alerts_for_event(checked_event(findings=[MISSING_R1], sequence=1).pk)
    alert = Alert.objects.get()
    alert_resolve(alert=alert, user=alice)
    alert_mute(alert=alert, user=alice, until=timezone.now() + timezone.timedelta(hours=4))
    alerts_for_event(checked_event(findings=[MISSING_R1], sequence=2).pk)
    alert.refresh_from_db()
    assert alert.is_regression
    assert list(Delivery.objects.values_list("reason", flat=True)) == ["opened"]


def test_it_evaluates_after_each_check(alice, django_capture_on_commit_callbacks) -> None:
    """The real pipeline: ingest → check → after_check → alerts (the seed's order rule goes missing)."""
    with django_capture_on_commit_callbacks(execute=True):
        ev = ingest_event("acme")
    ev.refresh_from_db()
    assert ev.status == "checked"
    missing = Alert.objects.filter(kind="rule_missing")
    assert missing.exists()
    assert all(list(a.events.values_list("pk", flat=True)) == [ev.pk] for a in missing)


def test_it_keeps_task_names_stable() -> None:
    from ctxaudit.alerts.tasks import alerts_deliver_task, alerts_requeue_deliveries_task

    assert alerts_evaluate_task.name == "alerts.evaluate"
    assert alerts_deliver_task.name == "alerts.deliver"
    assert alerts_requeue_deliveries_task.name == "alerts.requeue_deliveries"


def test_it_delegates_evaluation_to_the_service(alice) -> None:
    ev = checked_event(findings=[MISSING_R1])
    alerts_evaluate_task.apply(args=[ev.pk])
    assert Alert.objects.get().count == 1


def test_it_trusts_the_compressions_the_timelines_declare(alice) -> None:
    """The timelines write data.compressions with a rule_decay finding (event.report)."""
    from ctxaudit.ingest.models import Event

    ev = checked_event(
        findings=[("rule_decay", "high", "R1", "Rule R1 weakened across 3 compressions in a row")], sequence=3
    )
    assert alerts_for_event(ev.pk) == []  # no outcomes, nothing declared: 1 compression < 2
    report = {
        "findings": [{"kind": "rule_decay", "rule_id": "R1", "severity": "high", "data": {"compressions": 3}}]
    }
    Event.objects.filter(pk=ev.pk).update(report=report)
    assert [a.kind for a in alerts_for_event(ev.pk)] == ["rule_decay"]


def test_it_adds_new_default_kinds_to_an_existing_policy(alice) -> None:
    project = alice.memberships.get().project
    policy = alert_policy_for_project(project)
    AlertCondition.objects.filter(policy=policy, kind="history_wiped").delete()
    AlertCondition.objects.filter(policy=policy, kind="rule_missing").update(min_severity="critical")
    alert_policy_for_project(project)
    assert policy.conditions.filter(kind="history_wiped", enabled=True).exists()
    assert policy.conditions.get(kind="rule_missing").min_severity == "critical"  # edits are kept
    assert not policy.conditions.get(kind="summary_unmarked").enabled  # hygiene kinds start off
    assert alerts_for_event(checked_event(findings=[("summary_unmarked", "low", None, "no prefix")]).pk) == []
