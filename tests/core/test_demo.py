from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from ctxaudit.core.demo.load import SCENARIOS
from ctxaudit.core.management.commands.demo import DEMO_PASSWORD, DEMO_USER, REVIEWER_PASSWORD, REVIEWER_USER
from ctxaudit.engine.transcripts import read_transcript, transcript_files
from ctxaudit.ingest.models import Event

pytestmark = pytest.mark.django_db

SCENARIO_COUNT = sum(1 for line in SCENARIOS.read_text(encoding="utf-8").splitlines() if line.strip())


def _demo() -> str:
    out = StringIO()
    call_command("demo", "--no-serve", stdout=out)
    return out.getvalue()


def test_it_loads_our_scenarios_and_every_shared_sample_once(
    shared_dir, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    samples = shared_dir / "samples"
    monkeypatch.setenv("CTXAUDIT_SAMPLES_DIR", str(samples))
    seeds = sum(
        1 for line in (samples / "seed_cases.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()
    )
    decay = len(json.loads((samples / "seed_decay_session.json").read_text(encoding="utf-8"))["events"])
    transcripts = sum(len(read_transcript(f).compactions) for f in transcript_files([samples / "real"])[0])
    assert transcripts >= 6  # today: 1 + 1 Claude Code JSONL, 2 + 1 + 1 claude-chat-manager Markdown

    with django_capture_on_commit_callbacks(execute=True):
        out = _demo()
    total = SCENARIO_COUNT + seeds + decay + transcripts
    assert f"Demo data: {total} new events" in out
    assert "user: demo  password: demo-password" in out
    assert Event.objects.filter(project__name="demo").count() == total
    assert not Event.objects.exclude(status="checked").exists()
    assert Event.objects.filter(metadata__imported_from="transcript").count() == transcripts

    assert "Demo data: 0 new events" in _demo()
    assert Event.objects.count() == total


def test_it_loads_the_scenarios_without_shared_samples(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CTXAUDIT_SAMPLES_DIR", str(tmp_path / "absent"))
    out = _demo()
    assert f"Demo data: {SCENARIO_COUNT} new events" in out and "no ../shared/samples found" in out
    assert 8 <= SCENARIO_COUNT <= 12


def test_it_ships_varied_scenarios() -> None:
    scenarios = [
        json.loads(line) for line in SCENARIOS.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    strategies = {s["strategy"] for s in scenarios}
    assert {
        "summary",
        "structured",
        "retrieval",
        "key_messages",
        "role_separated",
        "truncation",
    } <= strategies
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in s["description"]) for s in scenarios)
    sessions = [s["session"] for s in scenarios]
    assert max(sessions.count(x) for x in sessions) >= 3  # one multi-step session


def test_demo_rows_carry_the_times_of_their_samples(
    shared_dir, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    """The event list showed every demo row in the minute the demo loaded; now each row has the
    time its sample carries (scenarios, transcripts), or a fixed one spread over a day."""
    monkeypatch.setenv("CTXAUDIT_SAMPLES_DIR", str(shared_dir / "samples"))
    with django_capture_on_commit_callbacks(execute=True):
        _demo()
    ours = Event.objects.exclude(metadata__imported_from="transcript")
    minutes = {e.occurred_at.replace(second=0, microsecond=0) for e in ours}
    assert len(minutes) == ours.count()  # no two of our rows in the same minute
    # Transcripts keep the times they carry (two compactions of one dated export share its time).
    said = sorted(
        c.occurred_at or t.occurred_at
        for f in transcript_files([shared_dir / "samples" / "real"])[0]
        for t in [read_transcript(f)]
        for c in t.compactions
    )
    got = sorted(
        Event.objects.filter(metadata__imported_from="transcript").values_list("occurred_at", flat=True)
    )
    assert None not in said and got == said
    first = Event.objects.get(session__external_id="research-7f3a")
    assert first.occurred_at.isoformat() == "2026-11-24T09:12:41+00:00"  # as scenarios.jsonl says
    decay = list(
        Event.objects.filter(session__external_id="ops-agent-decay")
        .order_by("sequence")
        .values_list("occurred_at", flat=True)
    )
    assert decay == sorted(decay) and len(set(decay)) == 3  # a session's compressions in order


def test_the_demo_logins_are_members_with_roles(tmp_path, monkeypatch, client) -> None:
    from ctxaudit.projects.models import Membership

    monkeypatch.setenv("CTXAUDIT_SAMPLES_DIR", str(tmp_path / "absent"))
    out = _demo()
    assert "a reviewer: reviewer / reviewer-password" in out
    roles = {
        m.user.username: m.role
        for m in Membership.objects.filter(project__name="demo").select_related("user")
    }
    assert roles == {"demo": "admin", "reviewer": "reviewer"}
    assert client.login(username=REVIEWER_USER, password=REVIEWER_PASSWORD)
    assert client.get("/").status_code == 200
    client.logout()
    assert client.login(username=DEMO_USER, password=DEMO_PASSWORD)
    project_id = Membership.objects.get(user__username="demo").project_id
    members = client.get(f"/projects/{project_id}/members/").content.decode()
    assert "reviewer" in members and "demo" in members


def test_notification_links_default_to_the_address_the_demo_serves(tmp_path, monkeypatch) -> None:
    from django.conf import settings

    monkeypatch.setenv("CTXAUDIT_SAMPLES_DIR", str(tmp_path / "absent"))
    monkeypatch.delenv("CTXAUDIT_BASE_URL", raising=False)
    monkeypatch.setattr(settings, "CTXAUDIT_BASE_URL", settings.CTXAUDIT_BASE_URL)  # restored after the test
    call_command("demo", "--no-serve", "--addrport", "127.0.0.1:8123", stdout=StringIO())
    assert settings.CTXAUDIT_BASE_URL == "http://127.0.0.1:8123"
