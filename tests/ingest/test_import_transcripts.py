from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from ctxaudit.ingest.models import Event

pytestmark = pytest.mark.django_db

SUMMARY = "This session is being continued from a previous conversation that ran out of context. Summary: {}"


def _import(*paths, project: str = "imports", **opts) -> str:
    out = StringIO()
    call_command(
        "import_transcripts", *map(str, paths), project=project, stdout=out, stderr=StringIO(), **opts
    )
    return out.getvalue()


def _session(tmp_path, name: str = "abc.jsonl"):
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "claude-7",
            "timestamp": "2025-07-01T10:00:00Z",
            "message": {"role": "user", "content": "Never delete anything under data/."},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": "claude-7",
            "timestamp": "2025-07-01T10:01:00Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Noted."}],
            },
        },
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "b1",
            "parentUuid": None,
            "logicalParentUuid": "a1",
            "sessionId": "claude-7",
            "timestamp": "2025-07-01T10:05:00Z",
            "compactMetadata": {"trigger": "auto", "preTokens": 160000},
        },
        {
            "type": "user",
            "uuid": "s1",
            "parentUuid": "b1",
            "isCompactSummary": True,
            "sessionId": "claude-7",
            "timestamp": "2025-07-01T10:05:01Z",
            "message": {"role": "user", "content": SUMMARY.format("the user set up data/.")},
        },
        {
            "type": "user",
            "uuid": "u2",
            "parentUuid": "s1",
            "sessionId": "claude-7",
            "message": {"role": "user", "content": "Go on"},
        },
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "b2",
            "parentUuid": None,
            "logicalParentUuid": "u2",
            "sessionId": "claude-7",
            "timestamp": "2025-07-01T11:00:00Z",
            "compactMetadata": {"trigger": "manual"},
        },
        {
            "type": "user",
            "uuid": "s2",
            "parentUuid": "b2",
            "isCompactSummary": True,
            "sessionId": "claude-7",
            "message": {"role": "user", "content": SUMMARY.format("work continued.")},
        },
    ]
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_it_creates_one_event_per_compaction_in_session_order(
    tmp_path, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        out = _import(_session(tmp_path))
    events = list(Event.objects.order_by("sequence"))
    assert [(e.sequence, e.strategy, e.session.external_id) for e in events] == [
        (1, "summary", "claude-7"),
        (2, "summary", "claude-7"),
    ]
    first, second = events
    assert first.occurred_at.isoformat() == "2025-07-01T10:05:00+00:00"
    assert first.model == "claude-sonnet-4-5"
    assert [m["content"] for m in first.before] == ["Never delete anything under data/.", "Noted."]
    assert first.after == [
        {"role": "user", "content": SUMMARY.format("the user set up data/."), "kind": "compact_summary"}
    ]
    assert second.before[0]["kind"] == "compact_summary" and second.before[1]["content"] == "Go on"
    assert first.metadata["source_file"] == "abc.jsonl" and first.metadata["trigger"] == "auto"
    assert first.status == "checked"
    # The user's standing instruction is the session's rule, and the summary lost it.
    assert [r["text"] for r in first.rules] == ["Never delete anything under data/."]
    assert first.verdict == "fail"
    assert "2 new event(s)" in out


def test_it_adds_nothing_on_reimport(tmp_path) -> None:
    path = _session(tmp_path)
    _import(path)
    out = _import(path)
    assert Event.objects.count() == 2
    assert "0 new event(s), 2 already there" in out


def test_it_names_the_file_and_line_of_a_bad_file(tmp_path) -> None:
    good = _session(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user"}\n{"type": oops}\n', encoding="utf-8")
    with pytest.raises(CommandError, match=r"bad\.jsonl:2: not valid JSON"):
        _import(good, bad)
    assert Event.objects.count() == 2  # the good file still imported


def test_it_rejects_an_unknown_file_type(tmp_path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"notes\.txt; known formats: codex, ") as exc:
        _import(path)
    assert exc.value.returncode == 2


def test_it_imports_every_real_transcript(shared_dir, django_capture_on_commit_callbacks) -> None:
    real = shared_dir / "samples" / "real"
    with django_capture_on_commit_callbacks(execute=True):
        out = _import(real)
    assert "Imported 5 of 5 file(s)" in out
    assert "SOURCES.md: skipped" in out
    per_session = {}
    for e in Event.objects.select_related("session"):
        per_session.setdefault(e.metadata["source_file"], []).append(e.sequence)
    assert {k: sorted(v) for k, v in per_session.items()} == {
        "dag_compact_after_rewind.jsonl": [1],
        "dag_compact_after_rewind_preserved.jsonl": [1],
        "implementing-wiki-mode-solutions-into-book-mode-2025-11-09.md": [1, 2],
        "refactoring-monolithic-python-script-into-production-ready-codebase-2025-11-04.md": [1],
        "sanitizing-sensitive-information-in-chat-export-formats-2025-12-26.md": [1],
    }
    assert not Event.objects.exclude(status="checked").exists()
    rewind = Event.objects.get(metadata__source_file="dag_compact_after_rewind.jsonl")
    before = [m["content"] for m in rewind.before]
    assert "Second attempt" in before and "First attempt" not in before
    assert rewind.session.external_id == "s1" and rewind.model == "claude-sonnet-4-20250514"
    for e in Event.objects.all():
        assert e.after[0]["content"].startswith("This session is being continued")
    assert "0 new event(s), 6 already there" in _import(real)
