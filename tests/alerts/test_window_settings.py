"""The windowed policies on a project's alert settings page: ops/admin change them, others read
or get 404, bad values come back as a 400 naming the field, foreign text is escaped."""

from __future__ import annotations

import pytest

from ctxaudit.alerts.models import WindowMonitor
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script><b hx-get="/x">'
FORM = {
    "metric": "rule_losses",
    "rule_id": "R1",
    "min_severity": "critical",
    "window_minutes": "60",
    "min_compressions": "20",
    "warning_percent": "12.5",
    "alert_percent": "20",
}


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


def test_ops_add_edit_and_delete_a_windowed_policy(client, olga, project) -> None:
    c = login(client, olga)
    r = c.post(f"/alerts/projects/{project.pk}/windows/", FORM)
    assert r.status_code == 302
    m = WindowMonitor.objects.get()
    assert (m.metric, m.rule_id, m.min_severity, m.window_minutes, m.min_compressions) == (
        "rule_losses",
        "R1",
        "critical",
        60,
        20,
    )
    assert (m.warning_threshold, m.alert_threshold, m.enabled) == (0.125, 0.2, True)
    body = c.get(f"/alerts/projects/{project.pk}/").content.decode()
    assert f'name="warning_percent" form="window-{m.pk}"' in body
    assert 'value="12.5"' in body
    r = c.post(
        f"/alerts/windows/{m.pk}/", {**FORM, "window_minutes": "30", "alert_percent": "40", "enabled": "off"}
    )
    assert r.status_code == 302
    m.refresh_from_db()
    assert (m.window_minutes, m.alert_threshold, m.enabled) == (30, 0.4, False)
    assert c.post(f"/alerts/windows/{m.pk}/delete/").status_code == 302
    assert not WindowMonitor.objects.exists()


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"warning_percent": "abc"}, "warning_percent"),
        ({"warning_percent": "50", "alert_percent": "20"}, "warning:"),
        ({"alert_percent": "150"}, "alert:"),
        ({"window_minutes": "-5"}, "window_minutes"),
        ({"metric": HOSTILE}, "metric"),
    ],
)
def test_bad_values_come_back_as_400_naming_the_field(client, olga, project, change, named) -> None:
    r = login(client, olga).post(f"/alerts/projects/{project.pk}/windows/", {**FORM, **change})
    assert r.status_code == 400
    body = r.content.decode()
    assert named in body
    assert "<script>alert(1)" not in body
    assert not WindowMonitor.objects.exists()


def test_a_hostile_rule_id_is_escaped(client, olga, project) -> None:
    c = login(client, olga)
    assert c.post(f"/alerts/projects/{project.pk}/windows/", {**FORM, "rule_id": HOSTILE}).status_code == 302
    body = c.get(f"/alerts/projects/{project.pk}/").content.decode()
    assert "<script>alert(1)" not in body and "&lt;script&gt;" in body


def test_reviewers_read_but_cannot_change(client, bob, olga, project) -> None:
    m = WindowMonitor.objects.create(project=project, metric="failing_events")
    c = login(client, bob)
    body = c.get(f"/alerts/projects/{project.pk}/").content.decode()
    assert "Failing compressions" in body
    assert "Add windowed policy" not in body
    assert c.post(f"/alerts/projects/{project.pk}/windows/", FORM).status_code == 403
    assert c.post(f"/alerts/windows/{m.pk}/", FORM).status_code == 403
    assert c.post(f"/alerts/windows/{m.pk}/delete/").status_code == 403
    assert WindowMonitor.objects.get().metric == "failing_events"


def test_outsiders_get_404(client, charlie, project) -> None:
    m = WindowMonitor.objects.create(project=project, metric="failing_events")
    c = login(client, charlie)
    assert c.post(f"/alerts/projects/{project.pk}/windows/", FORM).status_code == 404
    assert c.post(f"/alerts/windows/{m.pk}/", FORM).status_code == 404
    assert c.post(f"/alerts/windows/{m.pk}/delete/").status_code == 404
    assert c.post("/alerts/windows/99999999999999999999999/delete/").status_code == 404
    assert WindowMonitor.objects.count() == 1
