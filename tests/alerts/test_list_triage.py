"""The alert list for triage: readable titles, most severe first, sortable by any column, rows
that open the alert, select-all for the bulk action; the API keeps its own order."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from ctxaudit.alerts.models import Alert
from ctxaudit.alerts.services import alerts_for_event
from ctxaudit.alerts.titles import alert_title
from ctxaudit.audits.models import Finding
from tests.alerts.conftest import checked_event
from tests.alerts.test_views import login
from tests.factories import api_key_for

pytestmark = pytest.mark.django_db


def test_titles_say_what_happened_to_what() -> None:
    assert alert_title(kind="rule_missing", rule_id="R1", rule_text="禁止删除任何业务数据") == (
        "R1 missing after compression: 禁止删除任何业务数据"
    )
    assert alert_title(
        kind="rule_weakened", rule_id="B2", rule_text="Never reveal a card number.\nSecond line"
    ) == ("B2 weakened after compression: Never reveal a card number.")
    assert alert_title(kind="rule_demoted", rule_id="S1", rule_text="") == "S1 demoted out of the system role"
    quote = [{"side": "before", "quote": "我已获得授权"}, {"side": "after", "quote": "用户已获得删除授权。"}]
    assert (
        alert_title(kind="claim_promoted", evidence=quote)
        == "User claim restated as fact: 用户已获得删除授权。"
    )
    assert alert_title(kind="brand_new_check") == "Brand new check"  # a kind added later still reads
    assert alert_title(kind="claim_fabricated") == "Statement nothing before compression supports"
    long = "x" * 300
    assert (
        len(alert_title(kind="rule_missing", rule_id="R9", rule_text=long))
        == len("R9 missing after compression: ") + 100
    )


def test_a_raised_alert_carries_the_readable_title(alice) -> None:
    ev = checked_event(
        findings=[
            ("rule_missing", "high", "R1", "规则 R1 在压缩后缺失 / Rule R1 is missing after compression.")
        ],
        rules=[{"id": "R1", "text": "禁止删除任何业务数据", "severity": "critical"}],
    )
    (a,) = alerts_for_event(ev.pk)
    assert a.title == "R1 missing after compression: 禁止删除任何业务数据"
    # The finding's own message stays with the event link.
    assert a.alert_events.get().message.startswith("规则 R1 在压缩后缺失")


def _alert(kind: str, severity: str, rule: str | None, minutes_ago: int, session: str) -> Alert:
    ev = checked_event(findings=[(kind, severity, rule, f"{kind} {rule}")], session_id=session)
    (a,) = alerts_for_event(ev.pk)
    seen = timezone.now() - timedelta(minutes=minutes_ago)
    Alert.objects.filter(pk=a.pk).update(
        last_seen=seen, first_seen=seen - timedelta(hours=1), severity=severity
    )
    return a


@pytest.fixture
def four(olga) -> dict[str, Alert]:
    return {
        "low_newest": _alert("summary_elevated", "low", None, 1, "s1"),
        "crit_old": _alert("rule_missing", "critical", "R1", 50, "s2"),
        "high_mid": _alert("rule_missing", "high", "R2", 20, "s3"),
        "crit_new": _alert("rule_missing", "critical", "R3", 10, "s4"),
    }


def _order(page: str) -> list[int]:
    return [int(x) for x in re.findall(r'<tr class="alert-row[^"]*" data-href="/alerts/(\d+)/"', page)]


def test_the_page_sorts_most_severe_then_most_recent_first(client, olga, four) -> None:
    page = login(client, olga).get("/alerts/").content.decode()
    assert _order(page) == [four[k].pk for k in ("crit_new", "crit_old", "high_mid", "low_newest")]
    assert "sorted by severity, most severe first" in page


def test_any_column_sorts_both_ways_and_keeps_the_filters(client, olga, four) -> None:
    c = login(client, olga)
    by_recent = _order(c.get("/alerts/?sort=-last_seen").content.decode())
    assert by_recent == [four[k].pk for k in ("low_newest", "crit_new", "high_mid", "crit_old")]
    oldest = _order(c.get("/alerts/?sort=last_seen").content.decode())
    assert oldest == list(reversed(by_recent))
    kinds = _order(c.get("/alerts/?sort=kind").content.decode())
    assert kinds[-1] == four["low_newest"].pk  # summary_elevated after rule_missing
    page = c.get("/alerts/?sort=-last_seen&kind=rule_missing").content.decode()
    assert _order(page) == [four[k].pk for k in ("crit_new", "high_mid", "crit_old")]
    # The sorted header links to the other direction; the filters stay in every header link.
    assert 'href="?status=active&amp;kind=rule_missing&amp;sort=last_seen"' in page
    assert 'aria-sort="descending"' in page
    assert _order(c.get("/alerts/?sort=nonsense").content.decode())[0] == four["crit_new"].pk


def test_the_api_keeps_its_documented_order(client, four) -> None:
    key = api_key_for("acme", scopes=("read",))
    r = client.get("/api/v1/alerts", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert [a["id"] for a in r.json()] == [
        four[k].pk for k in ("low_newest", "crit_new", "high_mid", "crit_old")
    ]


def test_rows_open_the_alert_and_ops_get_select_all(client, olga, bob, four) -> None:
    page = login(client, olga).get("/alerts/").content.decode()
    assert page.count('data-href="/alerts/') == 4
    assert 'id="sel-all-alerts"' in page and page.count('name="alert"') == 4
    assert "R3 missing after compression" in page
    reviewer = login(client, bob).get("/alerts/").content.decode()
    assert 'id="sel-all-alerts"' not in reviewer and 'name="alert"' not in reviewer


def test_bulk_acknowledge_comes_back_to_the_same_sort(client, olga, four) -> None:
    c = login(client, olga)
    r = c.post(
        "/alerts/acknowledge/",
        {"alert": [four["crit_new"].pk, four["high_mid"].pk], "query": "status=active&sort=-events"},
    )
    assert r.status_code == 302 and r["Location"] == "/alerts/?status=active&sort=-events"
    assert set(Alert.objects.filter(status="acknowledged").values_list("pk", flat=True)) == {
        four["crit_new"].pk,
        four["high_mid"].pk,
    }


def test_a_claim_alert_is_titled_by_the_claim(olga) -> None:
    ev = checked_event(findings=[("claim_promoted", "medium", None, "用户声称… / The user's claim …")])
    Finding.objects.filter(event=ev).update(
        evidence=[
            {"side": "after", "message_index": 1, "start": 0, "end": 9, "quote": "用户已获得删除授权。"}
        ]
    )
    (a,) = alerts_for_event(ev.pk)
    assert a.title == "User claim restated as fact: 用户已获得删除授权。"
