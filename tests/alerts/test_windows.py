"""Windowed policies: share of failing / rule-losing compressions over a window, warning and alert
levels, recovery after a full window under the warning level (alerts.services.windows)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from ctxaudit.alerts.models import Alert, AlertActivity, Channel, Delivery, WindowMonitor
from ctxaudit.alerts.services import (
    alerts_for_event,
    monitor_evaluate,
    window_counts,
    window_monitor_save,
)
from ctxaudit.alerts.tasks import alerts_evaluate_windows_task
from ctxaudit.alerts.titles import window_title
from ctxaudit.audits.models import Finding
from ctxaudit.ingest.models import Event, Session
from ctxaudit.projects.models import Project

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
_seq = itertools.count(1)


def compressions(
    project: Project,
    n: int,
    *,
    at: datetime,
    verdict: str = "pass",
    losses: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
) -> list[Event]:
    """n checked events of `project` that occurred at `at`, each with the findings `losses`
    [(kind, severity, rule_id)]. Written directly, so no evaluation runs while they are made."""
    out = []
    for _ in range(n):
        i = next(_seq)
        session = Session.objects.create(project=project, external_id=f"w-{i}")
        ev = Event.objects.create(
            project=project,
            session=session,
            sequence=1,
            occurred_at=at,
            received_at=at,
            before=[],
            after=[],
            status=Event.Status.CHECKED,
            verdict=verdict,
            checked_at=at,
        )
        Finding.objects.bulk_create(
            Finding(event=ev, kind=k, severity=s, rule_id=r, message=f"{r} {k}") for k, s, r in losses
        )
        out.append(ev)
    return out


LOST_CRITICAL = [("rule_missing", "critical", "R1")]


def losing(project: Project, n: int, at: datetime, losses=LOST_CRITICAL) -> list[Event]:
    return compressions(project, n, at=at, verdict="fail", losses=losses)


def monitor(project: Project, **kw) -> WindowMonitor:
    values = {
        "metric": "rule_losses",
        "rule_id": "",
        "min_severity": "critical",
        "window_minutes": 60,
        "min_compressions": 10,
        "warning": 0.15,
        "alert": 0.30,
    }
    values.update(kw)
    return window_monitor_save(project=project, values=values)


@pytest.fixture
def acme(project) -> Project:
    Channel.objects.create(project=project, kind="webhook", target="https://hooks.example.com/ctxaudit")
    return project


def test_below_the_warning_level_nothing_fires(acme) -> None:
    losing(acme, 1, T0 - timedelta(minutes=5))
    compressions(acme, 19, at=T0 - timedelta(minutes=5))
    m = monitor(acme)
    with time_machine.travel(T0, tick=False):
        assert monitor_evaluate(m) is None
    m.refresh_from_db()
    assert (m.level, m.last_total, m.last_share) == ("ok", 20, 0.05)
    assert not Alert.objects.exists()
    assert not Delivery.objects.exists()


def test_warning_opens_a_medium_alert_and_notifies(acme) -> None:
    evs = losing(acme, 2, T0 - timedelta(minutes=5))
    compressions(acme, 8, at=T0 - timedelta(minutes=5))
    m = monitor(acme)
    with time_machine.travel(T0, tick=False):
        alert = monitor_evaluate(m)
    assert alert is not None
    assert (alert.kind, alert.rule_id, alert.severity, alert.status) == (
        "window_rule_losses",
        "",
        "medium",
        "open",
    )
    assert alert.title == (
        "20% of compressions in the last 60 min lost or weakened a critical rule (warning ≥ 15%, alert ≥ 30%)"
        " / 最近 60 分钟内 20% 的压缩丢失或削弱了 critical 级规则（警告 ≥ 15%，告警 ≥ 30%）"
    )
    m.refresh_from_db()
    assert m.level == "warning"
    d = Delivery.objects.get()
    assert d.reason == "opened"
    assert d.payload["alert"]["kind"] == "window_rule_losses"
    assert d.event_id in {e.pk for e in evs}
    # The same share again: no second notification.
    with time_machine.travel(T0 + timedelta(minutes=1), tick=False):
        assert monitor_evaluate(m) is None
    assert Delivery.objects.count() == 1


def test_alert_level_escalates_to_critical(acme) -> None:
    losing(acme, 2, T0 - timedelta(minutes=5))
    compressions(acme, 8, at=T0 - timedelta(minutes=5))
    m = monitor(acme)
    with time_machine.travel(T0, tick=False):
        monitor_evaluate(m)
    losing(acme, 2, T0 + timedelta(minutes=1))  # 4 of 12 = 33%
    with time_machine.travel(T0 + timedelta(minutes=2), tick=False):
        alert = monitor_evaluate(m)
    assert alert is not None
    assert (alert.severity, alert.count) == ("critical", 2)
    assert alert.title.startswith("33.3% of compressions in the last 60 min")
    assert sorted(Delivery.objects.values_list("reason", flat=True)) == ["escalated", "opened"]
    assert AlertActivity.objects.filter(alert=alert, kind="escalated").count() == 1
    m.refresh_from_db()
    assert m.level == "alert"


def test_high_not_critical_for_a_monitor_of_any_rule(acme) -> None:
    losing(acme, 5, T0 - timedelta(minutes=5), losses=[("rule_weakened", "low", "R7")])
    compressions(acme, 5, at=T0 - timedelta(minutes=5))
    m = monitor(acme, min_severity="low")
    with time_machine.travel(T0, tick=False):
        alert = monitor_evaluate(m)
    assert alert is not None and alert.severity == "high"
    assert alert.title.startswith("50% of compressions in the last 60 min lost or weakened a rule (")


def test_recovery_resolves_after_a_full_window_under_warning_then_regresses(acme) -> None:
    losing(acme, 2, T0 - timedelta(minutes=5))
    compressions(acme, 8, at=T0 - timedelta(minutes=5))
    m = monitor(acme)
    with time_machine.travel(T0, tick=False):
        monitor_evaluate(m)
    compressions(acme, 12, at=T0 + timedelta(minutes=1))  # 2 of 22 = 9%: under the warning level
    with time_machine.travel(T0 + timedelta(minutes=1), tick=False):
        monitor_evaluate(m)
    with time_machine.travel(T0 + timedelta(minutes=60), tick=False):
        monitor_evaluate(m)
    alert = Alert.objects.get()
    assert alert.status == "open"  # 59 minutes under: not yet a full window
    with time_machine.travel(T0 + timedelta(minutes=61), tick=False):
        alerts_evaluate_windows_task()  # the beat sweep, no new traffic
    alert.refresh_from_db()
    m.refresh_from_db()
    # The window is (now - 60 min, now]: the passes of T0+1 are exactly 60 minutes old, out of it.
    assert (alert.status, m.level, m.last_total, m.last_share) == ("resolved", "ok", 0, None)
    assert AlertActivity.objects.filter(alert=alert, kind="resolved", user=None).count() == 1
    losing(acme, 3, T0 + timedelta(minutes=62))
    compressions(acme, 12, at=T0 + timedelta(minutes=62))  # 3 of 15 = 20%
    with time_machine.travel(T0 + timedelta(minutes=62), tick=False):
        again = monitor_evaluate(m)
    assert again is not None
    assert (again.pk, again.status, again.is_regression, again.severity) == (alert.pk, "open", True, "medium")
    assert sorted(Delivery.objects.values_list("reason", flat=True)) == ["opened", "regression"]


def test_a_share_back_over_warning_restarts_the_recovery_window(acme) -> None:
    losing(acme, 2, T0 - timedelta(minutes=5))
    compressions(acme, 8, at=T0 - timedelta(minutes=5))
    m = monitor(acme)
    with time_machine.travel(T0, tick=False):
        monitor_evaluate(m)
    compressions(acme, 12, at=T0 + timedelta(minutes=1))
    with time_machine.travel(T0 + timedelta(minutes=1), tick=False):
        monitor_evaluate(m)  # 9%: under
    losing(acme, 2, T0 + timedelta(minutes=2))  # 4 of 24 = 16.7%: over again
    with time_machine.travel(T0 + timedelta(minutes=2), tick=False):
        assert monitor_evaluate(m) is None  # same level: no new notification
    m.refresh_from_db()
    assert (m.level, m.below_since) == ("warning", None)


def test_too_few_compressions_never_fire(acme) -> None:
    losing(acme, 3, T0 - timedelta(minutes=5))
    compressions(acme, 2, at=T0 - timedelta(minutes=5))  # 60%, but only 5 compressions
    m = monitor(acme, min_compressions=10)
    with time_machine.travel(T0, tick=False):
        assert monitor_evaluate(m) is None
    m.refresh_from_db()
    assert (m.level, m.last_total) == ("ok", 5)
    assert not Alert.objects.exists()


def test_compressions_outside_the_window_do_not_count(acme) -> None:
    losing(acme, 5, T0 - timedelta(minutes=61))
    compressions(acme, 10, at=T0 - timedelta(minutes=10))
    m = monitor(acme)
    with time_machine.travel(T0, tick=False):
        assert window_counts(m).total == 10
        assert window_counts(m).hits == 0


def test_other_projects_are_never_counted(acme) -> None:
    other = Project.objects.create(name="other")
    losing(other, 10, T0 - timedelta(minutes=5))
    losing(acme, 1, T0 - timedelta(minutes=5))
    compressions(acme, 9, at=T0 - timedelta(minutes=5))  # acme: 10%
    m = monitor(acme)
    with time_machine.travel(T0, tick=False):
        counts = window_counts(m)
        assert monitor_evaluate(m) is None
    assert (counts.total, counts.hits) == (10, 1)
    assert not Alert.objects.exists()


def test_rule_and_severity_filters(acme) -> None:
    at = T0 - timedelta(minutes=5)
    losing(acme, 3, at, losses=[("rule_missing", "critical", "R1")])
    losing(acme, 2, at, losses=[("rule_weakened", "high", "R2")])
    losing(acme, 1, at, losses=[("rule_missing", "medium", "R2")])
    losing(acme, 1, at, losses=[("rule_demoted", "critical", "R2")])  # not a loss
    compressions(acme, 3, at=at)

    def hits(**kw) -> int:
        m = WindowMonitor(project=acme, window_minutes=60, **{"metric": "rule_losses", **kw})
        return window_counts(m).hits

    with time_machine.travel(T0, tick=False):
        assert hits(rule_id="R2", min_severity="high") == 2
        assert hits(rule_id="R2", min_severity="low") == 3
        assert hits(min_severity="critical") == 3
        assert hits(metric="failing_events") == 7


def test_one_rule_alert_names_the_rule(acme) -> None:
    losing(acme, 4, T0 - timedelta(minutes=5), losses=[("rule_weakened", "high", "R2")])
    compressions(acme, 6, at=T0 - timedelta(minutes=5))
    m = monitor(acme, rule_id="R2", min_severity="low", window_minutes=30)
    with time_machine.travel(T0, tick=False):
        alert = monitor_evaluate(m)
    assert alert is not None
    assert (alert.rule_id, alert.severity) == ("R2", "high")
    assert alert.title.startswith("40% of compressions in the last 30 min lost or weakened rule R2 (")


def test_one_aggregate_query_per_window(acme, django_assert_num_queries) -> None:
    losing(acme, 2, T0 - timedelta(minutes=5))
    m = monitor(acme)
    with time_machine.travel(T0, tick=False), django_assert_num_queries(1):
        window_counts(m)


def test_failing_share_is_evaluated_after_each_checked_event(acme) -> None:
    compressions(acme, 1, at=T0 - timedelta(minutes=1))
    evs = compressions(acme, 1, at=T0, verdict="fail")
    monitor(acme, metric="failing_events", min_compressions=2, warning=0.4, alert=0.6)
    with time_machine.travel(T0, tick=False):
        fed = alerts_for_event(evs[0].pk)
    alert = Alert.objects.get(kind="window_failing_share")
    assert alert in fed
    assert alert.severity == "medium"
    assert alert.title.startswith(
        "50% of compressions in the last 60 min failed the audit (warning ≥ 40%, alert ≥ 60%)"
    )


def test_a_disabled_monitor_is_not_swept(acme) -> None:
    losing(acme, 10, T0 - timedelta(minutes=5))
    m = monitor(acme)
    WindowMonitor.objects.filter(pk=m.pk).update(enabled=False)
    with time_machine.travel(T0, tick=False):
        alerts_evaluate_windows_task()
    assert not Alert.objects.exists()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"metric": "latency"}, "metric"),
        ({"window_minutes": "0"}, "window_minutes"),
        ({"window_minutes": "abc"}, "window_minutes"),
        ({"min_compressions": "0"}, "min_compressions"),
        ({"warning": 0.5, "alert": 0.2}, "warning"),
        ({"alert": 1.5}, "alert"),
        ({"min_severity": "urgent"}, "min_severity"),
    ],
)
def test_bad_values_are_refused_naming_the_field(acme, change, field) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        monitor(acme, **change)


def test_title_in_both_languages() -> None:
    assert window_title(
        metric="rule_losses", share=0.234, window_minutes=60, warning=0.1, alert=0.2, min_severity="critical"
    ) == (
        "23.4% of compressions in the last 60 min lost or weakened a critical rule (warning ≥ 10%, alert ≥ 20%)"
        " / 最近 60 分钟内 23.4% 的压缩丢失或削弱了 critical 级规则（警告 ≥ 10%，告警 ≥ 20%）"
    )


def test_self_resolve_resolves_the_pagerduty_incident(project) -> None:
    Channel.objects.create(project=project, kind="pagerduty", target="routing-key-1")
    losing(project, 5, T0 - timedelta(minutes=5))
    compressions(project, 5, at=T0 - timedelta(minutes=5))
    m = monitor(project)
    with time_machine.travel(T0, tick=False):
        monitor_evaluate(m)  # 50%: alert level
    with time_machine.travel(T0 + timedelta(minutes=56), tick=False):
        monitor_evaluate(m)  # the window is empty: under from here
    with time_machine.travel(T0 + timedelta(minutes=116), tick=False):
        monitor_evaluate(m)
    assert Alert.objects.get().status == "resolved"
    assert sorted(Delivery.objects.values_list("reason", flat=True)) == ["opened", "resolved"]
