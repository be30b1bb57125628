"""An event that feeds many alerts at once (a 50-rule check drops dozens of rules) is evaluated
with a fixed number of queries (issue 13: it was ~13 per alert, 458 for one event), and every
alert still counts, groups by session, reopens and notifies as one at a time did."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ctxaudit.alerts.models import Alert, AlertActivity
from ctxaudit.alerts.services import alert_resolve, alerts_for_event
from tests.alerts.conftest import checked_event

pytestmark = pytest.mark.django_db


def _missing(n: int) -> list[tuple[str, str, str | None, str]]:
    return [
        ("rule_missing", "high", f"R{i}", f"Rule R{i} is missing after compression.") for i in range(1, n + 1)
    ]


def _queries(event_id: int) -> int:
    with CaptureQueriesContext(connection) as q:
        alerts_for_event(event_id)
    return len(q.captured_queries)


def test_thirty_alerts_cost_the_queries_of_three(alice) -> None:
    alerts_for_event(checked_event(findings=_missing(30), session_id="s-0").pk)  # the alerts exist now
    three = _queries(checked_event(findings=_missing(3), session_id="s-1").pk)
    thirty = _queries(checked_event(findings=_missing(30), session_id="s-2").pk)
    assert thirty == three
    assert thirty <= 25


def test_a_batch_counts_groups_and_reopens_like_single_raises(alice) -> None:
    e1 = checked_event(findings=_missing(30), session_id="s-1", sequence=1)
    assert len(alerts_for_event(e1.pk)) == 30
    assert Alert.objects.count() == 30
    assert AlertActivity.objects.filter(kind="opened").count() == 30

    e2 = checked_event(findings=_missing(30), session_id="s-1", sequence=2)
    assert len(alerts_for_event(e2.pk)) == 30
    assert alerts_for_event(e2.pk) == []  # evaluated again: nothing changes
    assert set(Alert.objects.values_list("count", "session_count")) == {(2, 1)}

    r5 = Alert.objects.get(rule_id="R5")
    alert_resolve(alert=r5, user=alice)
    e3 = checked_event(findings=_missing(30), session_id="s-2", sequence=1)
    assert len(alerts_for_event(e3.pk)) == 30
    assert set(Alert.objects.values_list("count", "session_count")) == {(3, 2)}
    r5.refresh_from_db()
    assert (r5.status, r5.is_regression, r5.resolved_at) == ("open", True, None)
    assert AlertActivity.objects.filter(kind="regression").count() == 1
    assert Alert.objects.filter(is_regression=True).count() == 1
    assert AlertActivity.objects.filter(kind="opened").count() == 30


def test_opening_thirty_new_alerts_costs_the_queries_of_opening_three(alice) -> None:
    # the first evaluation of a project creates its policy: both counts come after it
    alerts_for_event(checked_event(findings=_missing(1), session_id="s-0").pk)
    three = _queries(checked_event(findings=_missing(4)[1:], session_id="s-1").pk)
    fresh = [("rule_missing", "high", f"N{i}", f"Rule N{i} is missing after compression.") for i in range(30)]
    thirty = _queries(checked_event(findings=fresh, session_id="s-2").pk)
    assert thirty == three
    assert Alert.objects.count() == 34
    assert AlertActivity.objects.filter(kind="opened").count() == 34  # each opened once


def test_an_alert_is_opened_once_when_two_events_feed_it() -> None:
    e1 = checked_event(findings=_missing(2), session_id="s-1")
    e2 = checked_event(findings=_missing(2), session_id="s-2")
    alerts_for_event(e1.pk)
    alerts_for_event(e2.pk)
    assert AlertActivity.objects.filter(kind="opened").count() == 2
    assert set(Alert.objects.values_list("count", flat=True)) == {2}
