"""`ctxaudit hook cursor` (Cursor's preCompact): the compaction is counted as unauditable with
its figures, since Cursor hands hooks no summary text."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ctxaudit.hooks.cli import run_hook
from ctxaudit.hooks.settings import HookSettings
from ctxaudit.ingest.models import Event

CONVERSATION = "3f2a9c1e-8b7d-4e6f-a5c4-1d2e3f4a5b6c"


def _payload(generation: str, transcript: Path | None) -> dict:
    """Cursor's preCompact stdin: the common fields and preCompact's own (see README sources)."""
    return {
        "conversation_id": CONVERSATION,
        "generation_id": generation,
        "model": "claude-4.5-sonnet",
        "hook_event_name": "preCompact",
        "cursor_version": "2.1.42",
        "workspace_roots": ["/home/user/shop"],
        "user_email": "dev@example.com",
        "transcript_path": str(transcript) if transcript else None,
        "trigger": "auto",
        "context_usage_percent": 91,
        "context_tokens": 182_400,
        "context_window_size": 200_000,
        "message_count": 64,
        "messages_to_compact": 52,
        "is_first_compaction": generation == "gen-1",
    }


def _transcript(tmp_path: Path) -> Path:
    """Cursor's agent transcript (`agent-transcripts/<conversation>.jsonl`): one line a message."""
    lines = [
        {
            "role": "user",
            "message": {
                "content": [
                    {
                        "type": "text",
                        "text": "<timestamp>Sunday, Nov 30, 2026, 10:00 AM</timestamp>\n"
                        "<user_query>\nNever delete customer records.\n</user_query>",
                    }
                ]
            },
        },
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "Understood."}]}},
        {
            "role": "assistant",
            "message": {
                "content": [{"type": "tool_use", "name": "Read", "input": {"path": "/home/user/shop/db.py"}}]
            },
        },
    ]
    path = tmp_path / "agent-transcripts" / f"{CONVERSATION}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _run(settings: HookSettings, payload: dict) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert run_hook("cursor", io.StringIO(json.dumps(payload)), out, err, settings) == 0
    assert err.getvalue() == ""
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_precompact_is_recorded_as_unauditable_with_its_figures(live_server, api_key, tmp_path) -> None:
    settings = HookSettings(url=live_server.url, api_key=api_key, timeout=5, home=tmp_path / ".ctxaudit")
    transcript = _transcript(tmp_path)
    assert _run(settings, _payload("gen-1", transcript)).strip() == "{}"
    _run(settings, _payload("gen-1", transcript))
    _run(settings, _payload("gen-2", None))

    first, second = Event.objects.order_by("sequence")
    assert Event.objects.count() == 2  # the same generation twice is one event
    assert (first.session.external_id, first.sequence, second.sequence) == (CONVERSATION, 1, 2)
    assert first.metadata["context_usage_percent"] == 91
    assert first.metadata["messages_to_compact"] == 52
    assert first.metadata["unauditable"] is True and first.metadata["trigger"] == "auto"
    assert first.before[0] == {"role": "user", "content": "Never delete customer records."}
    assert first.before[2]["content"].startswith("[tool call Read(")
    assert second.before == []
    first.refresh_from_db()
    assert first.status == "checked"
    assert first.report["unauditable_compactions"] == 1
