"""Triage in a real browser: the alert list (most severe first, sort by a header, select all,
acknowledge, a row click opens the alert, dates on one line), the event list (what was lost, a
severity filter in the URL), a demoted rule never green, the symptom guide's matching findings,
and a real transcript's diff that starts at the lost rule. Screenshots: artifacts/screenshots/."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from ctxaudit.alerts.models import Alert
from ctxaudit.alerts.services import alerts_for_event
from ctxaudit.ingest.models import Event
from ctxaudit.ingest.services import transcript_import
from ctxaudit.projects.models import Project
from tests.alerts.conftest import checked_event
from tests.browser.conftest import ARTIFACTS, login
from tests.factories import PASSWORD, event, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RULE = "禁止删除任何业务数据，必须经过管理员二次确认。"
SYSTEM = f"你是运营助手。\n{RULE}"
HISTORY = [
    {"role": "user", "content": "查一下昨天的订单量"},
    {"role": "assistant", "content": "昨天共 1280 单。"},
]
REAL = Path(__file__).resolve().parents[2].parent / "shared" / "samples" / "real" / "claude-md-exports"


def shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _alert(kind: str, severity: str, rule: str | None, minutes_ago: int, session: str) -> Alert:
    ev = checked_event(findings=[(kind, severity, rule, f"{kind} {rule}")], session_id=session)
    (a,) = alerts_for_event(ev.pk)
    seen = timezone.now() - timedelta(minutes=minutes_ago)
    Alert.objects.filter(pk=a.pk).update(
        last_seen=seen, first_seen=seen - timedelta(hours=3), severity=severity
    )
    return a


def test_the_alert_list_triages_and_acts_in_bulk(page, live_server) -> None:
    member("olga", "acme", "ops")
    low = _alert("summary_elevated", "low", None, 1, "s1")
    crit_old = _alert("rule_missing", "critical", "R1", 50, "s2")
    high = _alert("rule_missing", "high", "R2", 20, "s3")
    crit_new = _alert("rule_missing", "critical", "R3", 10, "s4")
    # In a live-server test the engine also checks the default payload and raises its own alerts.
    Alert.objects.exclude(pk__in=[low.pk, crit_old.pk, high.pk, crit_new.pk]).delete()
    login(page, "olga", PASSWORD)
    page.goto("/alerts/")

    def ids():
        return [
            int(h.split("/")[2])
            for h in page.locator("tr.alert-row").evaluate_all("rs => rs.map(r => r.dataset.href)")
        ]

    assert ids() == [crit_new.pk, crit_old.pk, high.pk, low.pk]
    # Dates stay on one line: a date cell is as tall as a one-line cell of the same row.
    row = page.locator("tr.alert-row").first
    date_h = row.locator("td.when").first.evaluate("e => e.getBoundingClientRect().height")
    sev_h = row.locator("td").nth(1).evaluate("e => e.getBoundingClientRect().height")
    assert date_h <= sev_h + 1
    shot(page, "alerts-list-by-severity")

    page.locator("th a", has_text="Last seen").click()
    page.wait_for_url("**sort=-last_seen**")
    page.wait_for_function(f"document.querySelector('tr.alert-row').dataset.href.includes('/{low.pk}/')")
    assert ids() == [low.pk, crit_new.pk, high.pk, crit_old.pk]

    page.locator("#sel-all-alerts").check()
    assert page.locator('input[name="alert"]:checked').count() == 4
    page.locator("#bulk-ack button").click()
    page.wait_for_url("**/alerts/?**sort=-last_seen**")
    assert Alert.objects.filter(status="acknowledged").count() == 4

    page.locator("tr.alert-row").first.locator("td.num").first.click()  # a cell, not a link
    page.wait_for_url(f"**/alerts/{low.pk}/")
    shot(page, "alert-detail-after-row-click")


def test_the_event_list_says_what_was_lost_and_filters_by_severity(page, live_server) -> None:
    member("alice", "acme", "admin")
    lost = event(
        session_id="s-lost",
        before=[{"role": "system", "content": SYSTEM}, *HISTORY],
        after=[{"role": "system", "content": "你是运营助手。"}, *HISTORY],
        rules=[{"id": "R1", "text": RULE, "severity": "critical"}],
    )
    kept = event(
        session_id="s-kept",
        before=[{"role": "system", "content": SYSTEM}, *HISTORY],
        after=[{"role": "system", "content": SYSTEM}, *HISTORY],
        rules=[{"id": "R1", "text": RULE, "severity": "critical"}],
    )
    login(page, "alice", PASSWORD)
    page.goto("/")
    row = page.locator("tr.ev", has=page.locator(f'a[href="/events/{lost.pk}/"]'))
    assert "missing R1" in row.locator("td.what").inner_text()
    assert RULE in row.locator("td.what").inner_text()
    page.select_option("select[name=severity]", "critical")
    page.wait_for_url("**severity=critical**")
    page.locator(f'a[href="/events/{kept.pk}/"]').first.wait_for(state="detached")
    assert page.locator(f'a[href="/events/{lost.pk}/"]').count() >= 1
    assert "1 event matches the filters" in page.locator(".result-count").inner_text()
    page.wait_for_timeout(300)  # let htmx settle (the swapped rows fade in)
    shot(page, "event-list-lost-rules-critical")


def test_a_demoted_rule_is_never_green(page, live_server) -> None:
    member("alice", "acme", "admin")
    ev = event(
        session_id="s-demoted",
        before=[{"role": "system", "content": SYSTEM}, *HISTORY],
        after=[{"role": "system", "content": "你是运营助手。"}, {"role": "user", "content": RULE}, *HISTORY],
        rules=[{"id": "R1", "text": RULE, "severity": "critical"}],
    )
    login(page, "alice", PASSWORD)
    page.goto(f"/events/{ev.pk}/")
    chip = page.locator("table.rules .badge").first
    assert chip.inner_text() == "demoted"
    green = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--pass').trim()")
    colour = chip.evaluate("e => getComputedStyle(e).color")
    assert colour != page.evaluate(
        f"(() => {{ const s = document.createElement('span'); s.style.color = '{green}'; document.body.append(s); const c = getComputedStyle(s).color; s.remove(); return c }})()"
    )
    assert page.locator("meter.meter-demoted").count() == 1
    assert page.locator(".legend .hl-weakened", has_text="rule weakened").count() == 1
    shot(page, "event-demoted-rule")
    page.goto(f"/sessions/{ev.session_id}/")
    assert page.locator("svg.timeline-chart use.mk-demoted").count() == 1
    assert page.locator("svg.timeline-chart use.mk-retained").count() == 0
    shot(page, "session-timeline-demoted")


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/samples/real is not beside the repository")
def test_a_real_transcript_diff_starts_at_the_lost_rule(page, live_server) -> None:
    member("alice", "demo", "admin")
    project = Project.objects.get(name="demo")
    transcript_import(
        project=project, path=REAL / "implementing-wiki-mode-solutions-into-book-mode-2025-11-09.md"
    )
    ev = Event.objects.filter(project=project, sequence=2).get()
    assert ev.status == "checked"
    lost = [r for r in ev.report["rules"] if r["state"] != "retained"]
    login(page, "alice", PASSWORD)
    page.goto(f"/events/{ev.pk}/")
    height = page.evaluate("document.documentElement.scrollHeight")
    # Before this change the page was 15,371 px and its lost rule sat 10,373 px down (Chromium,
    # 1400 px wide); the diff now starts with where the rules went and folds the rewrite.
    assert height < 9000, height
    assert page.locator(".zones-summary").inner_text().startswith("No fixed rule zone")
    if lost:
        anchors = page.locator("#rule-anchors")
        assert lost[0]["id"] in anchors.inner_text()
        top = anchors.evaluate("e => e.getBoundingClientRect().top + scrollY")
        diff_top = page.locator("#diff").evaluate("e => e.getBoundingClientRect().top + scrollY")
        assert top - diff_top < 400
    assert page.locator(".dnote", has_text="compared section by section").count() >= 1
    shot(page, "real-transcript-diff")


def test_the_symptom_guide_shows_the_matching_finding(page, live_server) -> None:
    member("alice", "acme", "admin")
    ev = event(
        session_id="s-sym",
        before=[{"role": "system", "content": SYSTEM}, *HISTORY],
        after=[{"role": "system", "content": "你是运营助手。"}, *HISTORY],
        rules=[{"id": "R1", "text": RULE, "severity": "critical"}],
    )
    login(page, "alice", PASSWORD)
    page.goto("/symptoms/")
    item = page.locator(
        "#symptom-1 ul.incidents li", has=page.locator(f'a[href="/events/{ev.pk}/checklist/"]')
    )
    assert "rule_missing" in item.inner_text() and "missing after compression" in item.inner_text()
    assert "§" not in page.locator("main").inner_text()
    shot(page, "symptom-guide-matches")
