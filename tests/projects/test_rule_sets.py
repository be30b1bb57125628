"""Project rule sets (issue 14 §6): import_rules, PUT/GET /api/v1/rules, the rules page, versions,
and events checked against the version current when they were received."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from ctxaudit.projects.models import ApiKey, Project, RuleSetVersion
from tests.factories import PASSWORD, api_key_for, event

pytestmark = pytest.mark.django_db


def _files(tmp_path: Path) -> tuple[Path, Path]:
    claude = tmp_path / "CLAUDE.md"
    claude.write_text("# Rules\n\n- Never commit secrets.\n- Always write tests first.\n", encoding="utf-8")
    agents = tmp_path / "AGENTS.md"
    agents.write_text("Never push to main.\n", encoding="utf-8")
    return claude, agents


def _import_rules(*paths: Path, project: str = "acme") -> str:
    out = StringIO()
    call_command("import_rules", *map(str, paths), project=project, stdout=out, stderr=StringIO())
    return out.getvalue()


def _login(client, user):
    assert client.login(username=user.get_username(), password=PASSWORD)
    return client


def test_import_rules_sets_a_versioned_rule_set_from_the_files(tmp_path: Path) -> None:
    claude, agents = _files(tmp_path)
    out = _import_rules(claude, agents)
    assert (
        "Rule set of project 'acme' is now version 1: 3 rule(s) (2 from CLAUDE.md, 1 from AGENTS.md)." in out
    )
    project = Project.objects.get(name="acme")
    assert sorted(project.rules.values_list("text", "source_file", "version")) == [
        ("Always write tests first.", "CLAUDE.md", 1),
        ("Never commit secrets.", "CLAUDE.md", 1),
        ("Never push to main.", "AGENTS.md", 1),
    ]
    v = RuleSetVersion.objects.get(project=project)
    assert (v.source, v.files) == ("import_rules", ["CLAUDE.md", "AGENTS.md"])
    assert v.actor.startswith("manage.py import_rules")

    out = _import_rules(agents)
    assert "version 2: 1 rule(s)" in out
    assert list(project.rules.values_list("text", flat=True)) == ["Never push to main."]


def test_import_rules_names_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=r"nope\.md: cannot read"):
        _import_rules(tmp_path / "nope.md")


def test_an_event_is_checked_against_the_version_current_when_it_was_received(tmp_path: Path) -> None:
    claude, agents = _files(tmp_path)
    _import_rules(claude, agents)
    first = event("acme")
    assert first.rules_source == "project"
    assert {r["rule_set_version"] for r in first.rules} == {1}
    assert len(first.rules) == 3
    _import_rules(agents)
    first.refresh_from_db()
    assert len(first.rules) == 3  # an earlier event keeps its version
    second = event("acme", session_id="s-2")
    assert [(r["text"], r["file"], r["rule_set_version"]) for r in second.rules] == [
        ("Never push to main.", "AGENTS.md", 2)
    ]


def test_an_events_own_rules_win_over_the_rule_set(tmp_path: Path) -> None:
    claude, _ = _files(tmp_path)
    _import_rules(claude)
    ev = event("acme", rules=[{"id": "r1", "text": "Only read orders.", "severity": "high"}])
    assert ev.rules_source == "event"
    assert [r["id"] for r in ev.rules] == ["r1"]


def test_put_rules_needs_the_admin_scope(client, project) -> None:
    key = api_key_for(project.name)
    r = client.put(
        "/api/v1/rules",
        json.dumps({"rules": [{"text": "Never x."}]}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert r.status_code == 403
    assert "'admin' scope" in json.dumps(r.json())


def test_put_rules_replaces_the_rule_set_with_rules_and_files(client, project) -> None:
    key = api_key_for(project.name, scopes=("admin", "read"))
    prefix = key.split("_")[1]
    assert ApiKey.objects.get(prefix=prefix).scopes == ["admin", "read"]
    body = {
        "rules": [{"text": "Never share customer emails.", "severity": "high"}],
        "files": [{"name": "CLAUDE.md", "content": "- Always run the linter before committing.\n"}],
    }
    r = client.put(
        "/api/v1/rules", json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    assert r.status_code == 200, r.content
    data = r.json()
    assert (data["version"], data["source"], data["actor"]) == (1, "api", f"key cta_{prefix}")
    assert data["files"] == ["CLAUDE.md"]
    assert [(x["text"], x["file"]) for x in data["rules"]] == [
        ("Never share customer emails.", ""),
        ("Always run the linter before committing.", "CLAUDE.md"),
    ]
    got = client.get("/api/v1/rules", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert got.status_code == 200 and got.json()["version"] == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"rules": [{"text": "Never x.", "severity": "urgent"}]}, "rules[0].severity"),
        ({"rules": []}, "rules"),
        ({"rules": [{"text": ""}]}, "rules.0.text"),
    ],
)
def test_put_rules_names_the_bad_field(client, project, body, field) -> None:
    key = api_key_for(project.name, scopes=("admin",))
    r = client.put(
        "/api/v1/rules", json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    assert r.status_code == 400
    assert r.json()["field"].replace("[", ".").replace("]", "") == field.replace("[", ".").replace("]", "")
    assert RuleSetVersion.objects.count() == 0


def test_get_rules_without_a_rule_set_is_404(client, project) -> None:
    key = api_key_for(project.name)
    assert client.get("/api/v1/rules", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 404


def test_members_see_the_rules_page_and_only_admins_edit(
    client, alice, bob, charlie, project, tmp_path
) -> None:
    claude, _ = _files(tmp_path)
    _import_rules(claude)
    page = _login(client, bob).get(f"/projects/{project.pk}/rules/")
    assert page.status_code == 200
    assert b"Never commit secrets." in page.content and b"version 1" in page.content
    assert b"<textarea" not in page.content
    assert b"/members/" not in page.content  # no admin-only tabs for a reviewer
    assert client.post(f"/projects/{project.pk}/rules/", {"rules": "Never x."}).status_code == 403
    client.logout()
    assert _login(client, charlie).get(f"/projects/{project.pk}/rules/").status_code == 404


def test_an_admin_saves_a_new_version_on_the_page_escaped(client, alice, project) -> None:
    r = _login(client, alice).post(
        f"/projects/{project.pk}/rules/",
        {
            "rules": "Never delete orders.\n[low] Prefer short answers.\n<script>alert(1)</script> Never run this."
        },
        HTTP_HX_REQUEST="true",
    )
    assert r.status_code == 200
    assert b"saved as version 1" in r.content
    assert b"<html" not in r.content  # an htmx request gets the section alone
    assert b"<script>alert(1)</script>" not in r.content
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in r.content
    v = RuleSetVersion.objects.get(project=project)
    assert (v.source, v.actor, v.created_by) == ("ui", "alice", alice)
    assert [(x["text"], x["severity"]) for x in v.rules][:2] == [
        ("Never delete orders.", "high"),
        ("Prefer short answers.", "low"),
    ]


def test_the_event_page_says_which_rules_were_reinjected_from_their_file(
    client, alice, project, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        ev = event(
            "acme",
            rules=[
                {"id": "no-push", "text": "Never push to main.", "severity": "high"},
                {"id": "tests", "text": "Always run the tests.", "severity": "high"},
            ],
            after=[
                {"role": "user", "content": "# AGENTS.md\nNever push to main.", "kind": "instructions"},
                {"role": "user", "content": "Summary: always run the tests.", "kind": "compact_summary"},
            ],
            metadata={"source_format": "codex"},
        )
    assert [r["reinjected_from"] for r in ev.rules] == ["instructions in the context after", ""]
    page = _login(client, alice).get(f"/events/{ev.pk}/")
    assert page.status_code == 200
    assert b"re-injected from instructions in the context after" in page.content
