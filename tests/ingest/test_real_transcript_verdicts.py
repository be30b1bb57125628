"""The real Claude Code exports in samples/real, imported as a user would (`import_transcripts`, the
server path where the session's rules stay in force): what each compaction did to the user's
standing rule "always use AI.md" (issue 12 "Measured accuracy", §4 retellings and quotes)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from ctxaudit.ingest.models import Event

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True, params=["off", "all"])
def semantic(request, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each export both ways: the lexicon alone, and with rules looked for by meaning in every path."""
    monkeypatch.setenv("CTXAUDIT_SEMANTIC", request.param)
    return str(request.param)


EXPORTS = "samples/real/claude-md-exports"


def _import(shared_dir, project, name: str, capture) -> list[Event]:
    path = next((shared_dir / EXPORTS).glob(f"{name}*.md"))
    with capture(execute=True):
        call_command("import_transcripts", str(path), project=project.name, stdout=StringIO())
    return list(Event.objects.filter(project=project).order_by("sequence"))


def _ai_md(event: Event):
    [outcome] = [o for o in event.rule_outcomes.all() if "AI.md" in o.text]
    return outcome


def test_the_wiki_mode_export_weakens_then_loses_the_ai_md_rule_with_a_decay_finding(
    shared_dir, project, django_capture_on_commit_callbacks
) -> None:
    first, second = _import(shared_dir, project, "implementing-wiki-mode", django_capture_on_commit_callbacks)
    # compaction 1 retells "always use AI.md" as "User asked me to read AI.md" and keeps the
    # sentence only in the quoted "All User Messages" list: not an instruction any more
    assert _ai_md(first).state == "weakened"
    assert 0.0 < _ai_md(first).strength < 0.5
    assert first.verdict == "fail"
    weakened = first.findings.get(kind="rule_weakened")
    assert "retold as narrative" in weakened.message
    # compaction 2 drops it entirely; two falls in a row make a decay finding
    assert _ai_md(second).state == "missing"
    assert second.findings.filter(kind="rule_missing", rule_id=_ai_md(second).rule_id).exists()
    assert second.findings.filter(kind="rule_decay", rule_id=_ai_md(second).rule_id).exists()


def test_the_refactoring_export_weakens_the_ai_md_rule(
    shared_dir, project, django_capture_on_commit_callbacks
) -> None:
    [event] = _import(shared_dir, project, "refactoring-monolithic", django_capture_on_commit_callbacks)
    assert _ai_md(event).state == "weakened"
    assert event.verdict == "fail"


def test_the_sanitizing_export_reports_no_rule_lost(
    shared_dir, project, django_capture_on_commit_callbacks
) -> None:
    [event] = _import(shared_dir, project, "sanitizing-sensitive", django_capture_on_commit_callbacks)
    # its only instruction, "Do not code yet, before brainstorm", closed when the user approved the
    # plan before the compaction: neither reported lost nor enforced
    assert event.status == "checked"
    assert event.verdict in ("pass", "no_rules")
    assert not event.findings.filter(kind__in=["rule_missing", "rule_weakened", "rule_demoted"]).exists()
    assert not event.findings.filter(kind__startswith="claim_").exists()
