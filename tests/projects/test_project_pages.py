"""Project pages: settings, members, API keys (shown once), audit log; admin only (403 for others)."""

from __future__ import annotations

import re

import pytest

from ctxaudit.projects.models import ApiKey, AuditLogEntry, Membership, Project
from tests.factories import PASSWORD, event

pytestmark = pytest.mark.django_db


def _login(client, user):
    assert client.login(username=user.get_username(), password=PASSWORD)
    return client


def test_it_lists_my_projects_with_my_role(client, alice, bob, charlie) -> None:
    r = _login(client, bob).get("/projects/")
    assert r.status_code == 200
    assert b"acme" in r.content and b"reviewer" in r.content
    assert b"other" not in r.content
    assert b"/members/" not in r.content  # reviewers get no admin links


@pytest.mark.parametrize("path", ["settings/", "members/", "keys/", "audit-log/"])
def test_it_requires_the_admin_role(client, bob, project, path) -> None:
    assert _login(client, bob).get(f"/projects/{project.pk}/{path}").status_code == 403


@pytest.mark.parametrize("path", ["settings/", "members/", "keys/", "audit-log/"])
def test_it_checks_ownership(client, charlie, project, path) -> None:
    assert _login(client, charlie).get(f"/projects/{project.pk}/{path}").status_code == 404


def test_it_updates_settings(client, alice, project) -> None:
    r = _login(client, alice).post(
        f"/projects/{project.pk}/settings/", {"retention_days": "30", "decay_compressions": "3"}
    )
    assert r.status_code == 200
    assert b"Settings saved." in r.content
    project.refresh_from_db()
    assert (project.redact_pii, project.retention_days, project.decay_compressions) == (False, 30, 3)


def test_it_rejects_bad_settings(client, alice, project) -> None:
    r = _login(client, alice).post(
        f"/projects/{project.pk}/settings/",
        {"redact_pii": "on", "retention_days": "-1", "decay_compressions": "3"},
    )
    assert b"Settings saved." not in r.content
    project.refresh_from_db()
    assert project.retention_days == 90


def test_it_adds_changes_and_removes_members(client, alice, project, charlie) -> None:
    c = _login(client, alice)
    r = c.post(f"/projects/{project.pk}/members/", {"username": "charlie", "role": "ops"})
    assert r.status_code == 302
    m = Membership.objects.get(project=project, user=charlie)
    assert m.role == "ops"
    c.post(f"/projects/{project.pk}/members/{m.pk}/role/", {"role": "reviewer"})
    m.refresh_from_db()
    assert m.role == "reviewer"
    c.post(f"/projects/{project.pk}/members/{m.pk}/remove/")
    assert not Membership.objects.filter(pk=m.pk).exists()


def test_it_names_an_unknown_user(client, alice, project) -> None:
    r = _login(client, alice).post(f"/projects/{project.pk}/members/", {"username": "mallory", "role": "ops"})
    assert r.status_code == 400
    assert b"no user named &#x27;mallory&#x27;" in r.content


def test_it_keeps_the_last_admin(client, alice, project) -> None:
    m = Membership.objects.get(project=project, user=alice)
    c = _login(client, alice)
    r = c.post(f"/projects/{project.pk}/members/{m.pk}/role/", {"role": "ops"})
    assert r.status_code == 400
    assert b"at least one admin" in r.content
    assert c.post(f"/projects/{project.pk}/members/{m.pk}/remove/").status_code == 400
    m.refresh_from_db()
    assert m.role == "admin"


def test_it_does_not_touch_another_projects_membership(client, alice, project, charlie) -> None:
    theirs = Membership.objects.get(user=charlie)
    c = _login(client, alice)
    assert c.post(f"/projects/{project.pk}/members/{theirs.pk}/remove/").status_code == 404
    assert c.post(f"/projects/{project.pk}/members/{theirs.pk}/role/", {"role": "ops"}).status_code == 404
    assert Membership.objects.filter(pk=theirs.pk, role="admin").exists()


def test_it_shows_a_new_key_once(client, alice, project) -> None:
    c = _login(client, alice)
    r = c.post(f"/projects/{project.pk}/keys/", {"name": "ci", "scopes": ["ingest"]})
    assert r.status_code == 200
    assert "no-store" in r["Cache-Control"]
    raw = re.search(rb"cta_[0-9a-f]{8}_[A-Za-z0-9_\-]{20,}", r.content).group().decode()
    key = ApiKey.objects.get(project=project, name="ci")
    assert key.scopes == ["ingest"]
    assert key.key_hash == ApiKey.hash_key(raw)
    again = c.get(f"/projects/{project.pk}/keys/")
    assert raw.encode() not in again.content
    assert f"cta_{key.prefix}_".encode() in again.content
    assert b"never" in again.content  # last used


def test_it_requires_a_scope(client, alice, project) -> None:
    r = _login(client, alice).post(f"/projects/{project.pk}/keys/", {"name": "none"})
    assert r.status_code == 400
    assert not ApiKey.objects.filter(name="none").exists()


def test_it_revokes_a_key(client, alice, project, api_key) -> None:
    key = ApiKey.objects.get(project=project)
    c = _login(client, alice)
    assert c.post(f"/projects/{project.pk}/keys/{key.pk}/revoke/").status_code == 302
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert client.get("/api/v1/events/1", HTTP_AUTHORIZATION=f"Bearer {api_key}").status_code == 401


def test_it_does_not_revoke_another_projects_key(client, alice, project, other_api_key) -> None:
    theirs = ApiKey.objects.get(project__name="other")
    assert _login(client, alice).post(f"/projects/{project.pk}/keys/{theirs.pk}/revoke/").status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


def test_it_logs_who_viewed_an_event_and_shows_it_to_admins(client, alice, bob, project) -> None:
    ev = event("acme")
    assert _login(client, bob).get(f"/events/{ev.pk}/", REMOTE_ADDR="203.0.113.7").status_code == 200
    entry = AuditLogEntry.objects.get()
    assert (
        entry.project_id,
        entry.user,
        entry.username,
        entry.action,
        entry.object_type,
        entry.object_id,
        entry.ip,
    ) == (
        project.pk,
        bob,
        "bob",
        "view",
        "event",
        str(ev.pk),
        "203.0.113.7",
    )
    client.logout()
    page = _login(client, alice).get(f"/projects/{project.pk}/audit-log/")
    assert page.status_code == 200
    assert b"bob" in page.content and b"203.0.113.7" in page.content and b"Viewed" in page.content


def test_it_logs_api_reads_with_the_key_prefix(client, project, api_key) -> None:
    ev = event("acme")
    assert client.get(f"/api/v1/events/{ev.pk}", HTTP_AUTHORIZATION=f"Bearer {api_key}").status_code == 200
    entry = AuditLogEntry.objects.get()
    assert entry.action == "api_read"
    assert entry.api_key_prefix == api_key.split("_")[1]
    assert entry.user is None


def test_it_does_not_log_refused_access(client, charlie) -> None:
    ev = event("acme")
    assert _login(client, charlie).get(f"/events/{ev.pk}/").status_code == 404
    assert not AuditLogEntry.objects.exists()


def test_it_escapes_names_in_project_pages(client, alice, project) -> None:
    Project.objects.filter(pk=project.pk).update(name='<script>alert(1)</script><b hx-get="/x">')
    r = _login(client, alice).get(f"/projects/{project.pk}/members/")
    assert b"<script>alert(1)" not in r.content
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in r.content


def test_it_logs_downloads_and_exports(client, bob, project) -> None:
    ev = event("acme")
    c = _login(client, bob)
    assert c.get(f"/events/{ev.pk}/export.json?side=after").status_code == 200
    assert c.get(f"/events/{ev.pk}/session.json").status_code == 200
    assert c.get(f"/projects/{project.pk}/regression.jsonl").status_code == 200
    got = list(AuditLogEntry.objects.order_by("id").values_list("action", "object_type", "object_id"))
    assert got == [
        ("download", "event", str(ev.pk)),
        ("download", "event", str(ev.pk)),
        ("export", "project", str(project.pk)),
    ]
