"""The compare page (issue 15): two `ctxaudit check --json` uploads, regressions first, escaped,
members only."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.engine.test_compare import line

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script><a hx-get="/evil">x</a>'


def upload(name: str, *lines: dict) -> SimpleUploadedFile:
    body = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
    return SimpleUploadedFile(name, body.encode("utf-8"), content_type="application/json")


def runs() -> tuple[SimpleUploadedFile, SimpleUploadedFile]:
    base = [line("steady", "pass", {"R1": "retained"}), line("broken", "pass", {"R1": "retained"})]
    cand = [line("steady", "pass", {"R1": "retained"}), line("broken", "fail", {"R1": "missing"})]
    for x in (base[1], cand[1]):
        x["report"]["rules"][0]["text"] = HOSTILE
    return upload("a.json", *base), upload("b.json", *cand)


def test_a_member_sees_regressions_first_escaped(client, bob, project) -> None:
    client.force_login(bob)
    assert client.get(f"/projects/{project.pk}/compare/").status_code == 200
    baseline, candidate = runs()
    r = client.post(f"/projects/{project.pk}/compare/", {"baseline": baseline, "candidate": candidate})
    body = r.content.decode()
    assert r.status_code == 200
    assert "Regressions found" in body
    assert "1 regressed" in body and "1 unchanged" in body
    assert body.index("<code>broken</code>") < body.index("<code>steady</code>")
    assert "pass → fail" in body and "retained → missing" in body
    assert "<script>alert(1)" not in body and "&lt;script&gt;alert(1)" in body
    section = body[body.index('<section class="comparison"') :]
    assert section.startswith('<section class="comparison" hx-disable>')


def test_bad_uploads_are_400_naming_the_field(client, alice, project) -> None:
    client.force_login(alice)
    baseline, _ = runs()
    bad = SimpleUploadedFile("b.json", b'{"id": "x", "report": {}}\n')
    r = client.post(f"/projects/{project.pk}/compare/", {"baseline": baseline, "candidate": bad})
    assert r.status_code == 400
    assert "candidate line 1 (case x): report.verdict" in r.content.decode()
    r = client.post(f"/projects/{project.pk}/compare/", {})
    assert r.status_code == 400 and "baseline: choose" in r.content.decode()


def test_outsiders_and_anonymous_users_get_nothing(client, charlie, project) -> None:
    assert client.get(f"/projects/{project.pk}/compare/").status_code == 302  # to the login page
    client.force_login(charlie)
    baseline, candidate = runs()
    assert client.get(f"/projects/{project.pk}/compare/").status_code == 404
    r = client.post(f"/projects/{project.pk}/compare/", {"baseline": baseline, "candidate": candidate})
    assert r.status_code == 404
