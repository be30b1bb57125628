"""`ctxaudit hook claude-code` against a real ctxaudit server (live_server), a dead port and a
slow server: one event per compaction whichever of PostCompact, SessionStart and a later
import arrives first; the lost rule comes back as additionalContext; the agent is never held up."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from ctxaudit.hooks import claude_code
from ctxaudit.hooks.cli import run_hook
from ctxaudit.hooks.settings import HookSettings
from ctxaudit.ingest.models import Event
from tests.hooks import transcripts as T
from tests.hooks.fakeserver import dead_url, fake_server

REPO = Path(__file__).resolve().parents[2]


def _settings(tmp_path: Path, url: str | None, key: str | None = None, timeout: float = 3.0) -> HookSettings:
    return HookSettings(url=url, api_key=key, timeout=timeout, home=tmp_path / "home" / ".ctxaudit")


def _run(settings: HookSettings, payload: dict) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    assert run_hook("claude-code", io.StringIO(json.dumps(payload)), out, err, settings) == 0
    return out.getvalue(), err.getvalue()


def _session_file(tmp_path: Path) -> Path:
    return T.write(tmp_path / "projects" / "-home-user-billing" / f"{T.SESSION}.jsonl", T.before_compaction())


@pytest.mark.django_db(transaction=True)
def test_postcompact_sessionstart_and_import_make_one_event_and_remind_the_lost_rule(
    live_server, api_key, project, tmp_path
) -> None:
    path = _session_file(tmp_path)
    settings = _settings(tmp_path, live_server.url, api_key)

    _run(settings, T.payload("PreCompact", path, trigger="auto", custom_instructions=""))
    assert Event.objects.count() == 0  # PreCompact only records

    T.append(path, [T.boundary(), T.summary_entry()])  # what Claude Code writes
    _run(settings, T.payload("PostCompact", path, trigger="auto", compact_summary=T.HOOK_SUMMARY))
    assert Event.objects.count() == 1
    event = Event.objects.get()
    assert (event.session.external_id, event.sequence, event.strategy) == (T.SESSION, 1, "summary")
    assert event.after[0]["content"] == T.SUMMARY  # the file's summary line wins over compact_summary

    out, err = _run(settings, T.payload("SessionStart", path, source="compact", model="claude-sonnet-4-5"))
    assert Event.objects.count() == 1, err
    hook_output = json.loads(out)["hookSpecificOutput"]
    assert hook_output["hookEventName"] == "SessionStart"
    context = hook_output["additionalContext"]
    assert T.RULE_MAIN in context  # lost in the summary: given back in its own words
    assert T.RULE_TESTS not in context  # kept by the summary: not repeated
    state = tmp_path / "home" / ".ctxaudit" / "state" / "claude-code"
    assert [p.name for p in state.rglob("*") if p.is_file()] == ["precompact.json"]  # no text kept

    out = io.StringIO()
    call_command("import_transcripts", str(path), "--project", project.name, stdout=out)
    assert "0 new event(s), 1 already imported" in out.getvalue()
    assert Event.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_compaction_not_yet_in_the_file_is_posted_from_compact_summary(
    live_server, api_key, tmp_path
) -> None:
    path = _session_file(tmp_path)
    settings = _settings(tmp_path, live_server.url, api_key)
    _run(settings, T.payload("PreCompact", path, trigger="manual", custom_instructions="keep the plan"))
    _run(settings, T.payload("PostCompact", path, trigger="manual", compact_summary=T.HOOK_SUMMARY))
    event = Event.objects.get()
    assert [m["content"] for m in event.after] == [T.HOOK_SUMMARY]
    assert event.metadata["summary_source"] == "hook:compact_summary"
    assert event.metadata["trigger"] == "manual"
    assert T.RULE_MAIN in event.before[0]["content"]
    # SessionStart has no summary of its own: it sends what PostCompact sent, no conflict.
    out, err = _run(settings, T.payload("SessionStart", path, source="compact"))
    assert Event.objects.count() == 1, err
    assert "refused" not in err
    assert T.RULE_MAIN in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_a_boundary_without_its_summary_line_takes_compact_summary(tmp_path) -> None:
    path = _session_file(tmp_path)
    settings = _settings(tmp_path, "http://127.0.0.1:9")
    T.append(path, [T.boundary()])
    prepared = claude_code.prepare_event(
        settings, T.payload("PostCompact", path, trigger="auto", compact_summary=T.HOOK_SUMMARY)
    )
    assert prepared is not None
    assert prepared.body["after"] == [{"role": "user", "content": T.HOOK_SUMMARY, "kind": "compact_summary"}]
    assert "summary_missing" not in prepared.body["metadata"]
    assert prepared.body["metadata"]["preTokens"] == 154210


def test_precompact_keeps_the_before_context_when_the_file_is_rewritten(tmp_path) -> None:
    path = _session_file(tmp_path)
    settings = _settings(tmp_path, "http://127.0.0.1:9")
    claude_code.record_position(settings, T.payload("PreCompact", path, trigger="auto"))
    T.write(path, [T.boundary(), T.summary_entry()])  # the old turns are gone from the file
    prepared = claude_code.prepare_event(settings, T.payload("PostCompact", path, trigger="auto"))
    assert prepared is not None
    contents = [m["content"] for m in prepared.body["before"]]
    assert contents[0].endswith(T.RULE_TESTS) and "Split invoice.py into three files." in contents
    assert prepared.body["after"][0]["content"] == T.SUMMARY


def test_without_ctxaudit_url_nothing_is_sent_or_written(tmp_path) -> None:
    path = _session_file(tmp_path)
    settings = _settings(tmp_path, None)
    out, err = _run(settings, T.payload("PostCompact", path, trigger="auto", compact_summary="x"))
    assert out == "" and "CTXAUDIT_URL is not set" in err
    assert not (tmp_path / "home").exists()


def test_bad_stdin_exits_zero_with_a_note(tmp_path) -> None:
    settings = _settings(tmp_path, dead_url())
    out, err = io.StringIO(), io.StringIO()
    assert run_hook("claude-code", io.StringIO("{not json"), out, err, settings) == 0
    assert "not JSON" in err.getvalue() and out.getvalue() == ""
    assert run_hook("claude-code", io.StringIO('{"hook_event_name": "PostCompact"}'), out, err, settings) == 0
    assert "session_id" in err.getvalue()


def _hook_process(payload: dict, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    proc = subprocess.run(  # noqa: S603 - our own module, fixed arguments
        [sys.executable, "-m", "ctxaudit.engine", "hook", "claude-code"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=30,
    )
    return proc, time.monotonic() - start


def _env(tmp_path: Path, url: str, timeout: str = "1") -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("CTXAUDIT_")},
        "HOME": str(tmp_path / "home"),
        "CTXAUDIT_URL": url,
        "CTXAUDIT_API_KEY": "k",
        "CTXAUDIT_HOOK_TIMEOUT": timeout,
    }


def test_a_dead_port_spools_and_a_slow_server_is_given_up_in_time(tmp_path) -> None:
    path = _session_file(tmp_path)
    T.append(path, [T.boundary(), T.summary_entry()])
    post = T.payload("PostCompact", path, trigger="auto", compact_summary=T.HOOK_SUMMARY)

    proc, _ = _hook_process(post, _env(tmp_path, dead_url()))
    assert proc.returncode == 0 and proc.stdout == ""
    spool = tmp_path / "home" / ".ctxaudit" / "spool"
    assert len(list(spool.glob("*.json"))) == 1
    assert oct(spool.stat().st_mode & 0o777) == "0o700"

    with fake_server((202, {"id": 1, "status": "pending", "url": "", "ui_url": ""}, {}, 10.0)) as (
        url,
        script,
    ):
        start = (tmp_path / "home" / ".ctxaudit" / "spool").glob("*.json")
        assert len(list(start)) == 1
        proc, seconds = _hook_process(
            T.payload("SessionStart", path, source="compact"), _env(tmp_path, url, timeout="1.5")
        )
    assert proc.returncode == 0 and proc.stdout == ""
    assert seconds < 5  # 1.5 s budget + interpreter start-up; the server would take 10 s
    assert "spooled" in proc.stderr
    assert script.seen[0].path == "/api/v1/gate"


@pytest.mark.django_db(transaction=True)
def test_the_next_run_sends_what_was_spooled(live_server, api_key, tmp_path) -> None:
    path = _session_file(tmp_path)
    T.append(path, [T.boundary(), T.summary_entry()])
    down = _settings(tmp_path, dead_url(), api_key, timeout=1)
    _run(down, T.payload("PostCompact", path, trigger="auto", compact_summary=T.HOOK_SUMMARY))
    spool = tmp_path / "home" / ".ctxaudit" / "spool"
    assert len(list(spool.glob("*.json"))) == 1
    assert Event.objects.count() == 0

    up = _settings(tmp_path, live_server.url, api_key)
    _run(up, {"hook_event_name": "Stop", "session_id": T.SESSION, "transcript_path": str(path)})
    assert Event.objects.count() == 1
    assert list(spool.glob("*.json")) == []
    assert Event.objects.get().session.external_id == T.SESSION


@pytest.mark.django_db(transaction=True)
def test_an_import_first_then_the_hooks_still_make_one_event(live_server, api_key, project, tmp_path) -> None:
    path = _session_file(tmp_path)
    T.append(path, [T.boundary(), T.summary_entry()])
    call_command("import_transcripts", str(path), "--project", project.name, stdout=io.StringIO())
    assert Event.objects.count() == 1
    settings = _settings(tmp_path, live_server.url, api_key)
    _, err = _run(settings, T.payload("PostCompact", path, trigger="auto", compact_summary=T.HOOK_SUMMARY))
    assert err == ""  # 200 for the key the import used, not 422
    out, err = _run(settings, T.payload("SessionStart", path, source="compact"))
    assert err == "" and Event.objects.count() == 1
    assert T.RULE_MAIN in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_the_spool_keeps_at_most_max_spooled_events(tmp_path, monkeypatch) -> None:
    from ctxaudit.hooks import spool

    monkeypatch.setattr(spool, "MAX_SPOOLED", 2)
    settings = _settings(tmp_path, dead_url())
    for n in range(3):
        spool.spool_event(settings, f"key-{n}", {"session_id": "s", "before": "a", "after": "b"})
        time.sleep(0.002)  # file names start with the time in ms: keep them apart
    kept = [json.loads(p.read_text())["idempotency_key"] for p in spool.spooled(settings)]
    assert kept == ["key-1", "key-2"]
    spool.spool_event(settings, "key-2", {"session_id": "s", "before": "a", "after": "b"})
    assert len(spool.spooled(settings)) == 2  # the same key twice is one file


@pytest.mark.django_db(transaction=True)
def test_a_failing_run_still_sends_the_spool_but_precompact_does_not(live_server, api_key, tmp_path) -> None:
    from ctxaudit.hooks import spool

    settings = _settings(tmp_path, live_server.url, api_key)
    spool.spool_event(settings, "earlier-1", {"session_id": "s-old", "before": "hello", "after": "hello"})
    path = _session_file(tmp_path)
    _run(settings, T.payload("PreCompact", path, trigger="auto"))
    assert Event.objects.count() == 0 and len(spool.spooled(settings)) == 1
    _, err = _run(settings, T.payload("PostCompact", str(tmp_path / "missing.jsonl"), trigger="auto"))
    assert "cannot read" in err
    assert [e.session.external_id for e in Event.objects.all()] == ["s-old"]
    assert spool.spooled(settings) == []
