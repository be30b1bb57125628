from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client

from ctxaudit.alerts.models import Alert
from ctxaudit.alerts.services import alerts_for_event
from tests.alerts.conftest import checked_event
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script><div hx-get="/x" hx-trigger="load">'


def login(client: Client, user) -> Client:
    assert client.login(username=user.username, password=PASSWORD)
    return client


@pytest.fixture
def alert(alice) -> Alert:
    ev = checked_event(
        findings=[("rule_missing", "high", "R1", f"Rule R1 is missing: {HOSTILE}")],
        rules=[{"id": "R1", "text": HOSTILE, "severity": "critical"}],
    )
    (a,) = alerts_for_event(ev.pk)
    return a


def test_it_lists_alerts(client, alice, alert) -> None:
    r = login(client, alice).get("/alerts/")
    assert r.status_code == 200
    assert f"/alerts/{alert.pk}/" in r.content.decode()
    assert 'hx-trigger="every 10s"' in r.content.decode()


def test_it_renders_the_list_partial_alone_for_htmx(client, alice, alert) -> None:
    r = login(client, alice).get("/alerts/?status=open&severity=critical", HTTP_HX_REQUEST="true")
    body = r.content.decode()
    assert r.status_code == 200
    assert "<html" not in body
    assert body.lstrip().startswith("{#") is False
    assert 'id="alert-rows"' in body
    assert 'hx-trigger="every 10s"' in body
    assert "status=open&amp;severity=critical" in body  # the poll keeps the filters
    assert f"/alerts/{alert.pk}/" in body


def test_it_filters(client, alice, alert) -> None:
    c = login(client, alice)
    assert f"/alerts/{alert.pk}/" not in c.get("/alerts/?status=resolved").content.decode()
    assert f"/alerts/{alert.pk}/" not in c.get("/alerts/?severity=low").content.decode()
    assert f"/alerts/{alert.pk}/" not in c.get("/alerts/?assignee=me").content.decode()
    assert (
        f"/alerts/{alert.pk}/"
        in c.get("/alerts/?rule=R1&kind=rule_missing&project=acme&assignee=none").content.decode()
    )


@pytest.mark.parametrize("url", ["/alerts/", "/alerts/{pk}/"])
def test_it_escapes_hostile_text(client, alice, alert, url) -> None:
    r = login(client, alice).get(url.format(pk=alert.pk))
    body = r.content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<script>alert" not in body
    assert '<div hx-get="/x"' not in body


def test_it_shows_the_alert_with_events_and_history(client, alice, alert) -> None:
    body = login(client, alice).get(f"/alerts/{alert.pk}/").content.decode()
    event_id = alert.events.get().pk
    assert f'href="/events/{event_id}/"' in body
    assert "Opened" in body
    assert "Acknowledge" in body


def test_it_checks_ownership(client, charlie, alert) -> None:
    c = login(client, charlie)
    assert c.get(f"/alerts/{alert.pk}/").status_code == 404
    assert c.post(f"/alerts/{alert.pk}/status/", {"action": "acknowledge"}).status_code == 404
    assert f"/alerts/{alert.pk}/" not in c.get("/alerts/?status=all").content.decode()


def test_it_lets_reviewers_read_but_not_change(client, bob, alert) -> None:
    c = login(client, bob)
    body = c.get(f"/alerts/{alert.pk}/").content.decode()
    assert "Acknowledge" not in body
    listing = c.get("/alerts/").content.decode()
    assert f"/alerts/{alert.pk}/" in listing
    assert "Acknowledge selected" not in listing and 'name="alert"' not in listing
    for url, data in [
        ("status", {"action": "acknowledge"}),
        ("assign", {"assignee": ""}),
        ("comments", {"text": "mine"}),
        ("mute", {"hours": "4"}),
    ]:
        assert c.post(f"/alerts/{alert.pk}/{url}/", data).status_code == 403, url
    assert c.post("/alerts/acknowledge/", {"alert": [alert.pk]}).status_code == 403
    # who may not change alerts is told so before anything about the input
    assert c.post("/alerts/acknowledge/", {}).status_code == 403
    assert c.post("/alerts/acknowledge/", {"alert": ["x"]}).status_code == 403
    alert.refresh_from_db()
    assert alert.status == "open"


def test_it_lets_ops_change_the_alert(client, olga, alert) -> None:
    c = login(client, olga)
    assert c.post(f"/alerts/{alert.pk}/status/", {"action": "acknowledge"}).status_code == 302
    assert c.post(f"/alerts/{alert.pk}/assign/", {"assignee": str(olga.pk)}).status_code == 302
    assert c.post(f"/alerts/{alert.pk}/comments/", {"text": f"looking: {HOSTILE}"}).status_code == 302
    assert c.post(f"/alerts/{alert.pk}/mute/", {"hours": "4"}).status_code == 302
    assert c.post(f"/alerts/{alert.pk}/status/", {"action": "resolve"}).status_code == 302
    alert.refresh_from_db()
    assert (alert.status, alert.assignee, alert.is_muted) == ("resolved", olga, True)
    history = list(alert.activities.values_list("kind", "user__username"))
    assert history == [
        ("opened", None),
        ("acknowledged", "olga"),
        ("assigned", "olga"),
        ("comment", "olga"),
        ("muted", "olga"),
        ("resolved", "olga"),
    ]
    body = c.get(f"/alerts/{alert.pk}/").content.decode()
    assert "looking: &lt;script&gt;" in body
    assert c.post(f"/alerts/{alert.pk}/status/", {"action": "reopen"}).status_code == 302
    alert.refresh_from_db()
    assert alert.status == "open"


def test_it_refuses_to_assign_outsiders(client, olga, charlie, alert) -> None:
    r = login(client, olga).post(f"/alerts/{alert.pk}/assign/", {"assignee": str(charlie.pk)})
    assert r.status_code == 400


def test_it_bulk_acknowledges_with_csrf(olga, alert) -> None:
    other = checked_event(findings=[("rule_missing", "high", "R2", "R2 gone")], sequence=2)
    (alert2,) = alerts_for_event(other.pk)
    c = login(Client(enforce_csrf_checks=True), olga)
    assert c.post("/alerts/acknowledge/", {"alert": [alert.pk, alert2.pk]}).status_code == 403  # no token
    page = c.get("/alerts/")
    token = page.cookies["csrftoken"].value
    r = c.post(
        "/alerts/acknowledge/",
        {"alert": [alert.pk, alert2.pk], "csrfmiddlewaretoken": token, "query": "status=open&x=1"},
    )
    assert r.status_code == 302
    assert r["Location"] == "/alerts/?status=open"
    assert set(Alert.objects.values_list("status", flat=True)) == {"acknowledged"}


def test_it_rejects_get_on_changes(client, olga, alert) -> None:
    c = login(client, olga)
    assert c.get(f"/alerts/{alert.pk}/status/").status_code == 405
    assert c.get("/alerts/acknowledge/").status_code == 405


def test_it_shows_open_alerts_by_severity_in_the_nav(client, alice, alert) -> None:
    c = login(client, alice)
    body = c.get("/").content.decode()
    assert 'id="alert-summary"' in body
    assert "1 critical" in body
    part = c.get("/alerts/summary/", HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in part
    assert "1 critical" in part


def test_it_requires_login(client, alert) -> None:
    assert client.get("/alerts/").status_code == 302


def test_it_mutes_until_a_time_and_unmutes(client, olga, alert) -> None:
    c = login(client, olga)
    assert c.post(f"/alerts/{alert.pk}/mute/", {"until": "2001-01-01T00:00"}).status_code == 400
    assert c.post(f"/alerts/{alert.pk}/mute/", {"until": "2099-12-01T09:30"}).status_code == 302
    alert.refresh_from_db()
    assert alert.muted_until.isoformat() == "2099-12-01T09:30:00+00:00"
    assert "muted until 2099-12-01 09:30" in c.get(f"/alerts/{alert.pk}/").content.decode()
    assert "critical" not in c.get("/alerts/summary/").content.decode()  # muted: out of the nav counts
    assert c.post(f"/alerts/{alert.pk}/mute/", {"hours": "unmute"}).status_code == 302
    alert.refresh_from_db()
    assert alert.muted_until is None
    assert list(alert.activities.values_list("kind", flat=True))[-2:] == ["muted", "unmuted"]


class _DisabledText(HTMLParser):
    """Collects text containing `needle` that is NOT inside an element with hx-disable."""

    VOID = {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    }

    def __init__(self, needle: str) -> None:
        super().__init__(convert_charrefs=True)
        self.needle, self.stack, self.exposed, self.seen = needle, [], [], 0

    def handle_starttag(self, tag, attrs) -> None:
        if tag not in self.VOID:
            self.stack.append((tag, any(k == "hx-disable" for k, _ in attrs)))

    def handle_endtag(self, tag) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data) -> None:
        if self.needle in data:
            self.seen += 1
            if not any(flag for _, flag in self.stack):
                self.exposed.append(data)


@pytest.mark.parametrize("url", ["/alerts/", "/alerts/{pk}/"])
def test_it_puts_foreign_text_inside_hx_disable(client, olga, alert, url) -> None:
    c = login(client, olga)
    c.post(f"/alerts/{alert.pk}/comments/", {"text": HOSTILE})
    parser = _DisabledText("<script>alert(1)</script>")
    parser.feed(c.get(url.format(pk=alert.pk)).content.decode())
    assert parser.seen
    assert parser.exposed == []
