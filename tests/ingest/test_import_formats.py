"""End to end: `manage.py import_transcripts` on one file of each format (tests/engine/transcripts/files)."""

from __future__ import annotations

import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from ctxaudit.ingest.event_rules import event_own_rules
from ctxaudit.ingest.models import Event
from ctxaudit.projects.models import Project, RuleSetVersion

pytestmark = pytest.mark.django_db

FILES = Path(__file__).parents[1] / "engine" / "transcripts" / "files"
CODEX = FILES / "rollout-2026-03-02T10-00-00-0197a1b2-7c3d-7e10-9a4b-5f6e7d8c9b0a.jsonl"


def _import(*paths, project: str = "fmt", **opts) -> str:
    out = StringIO()
    call_command(
        "import_transcripts", *map(str, paths), project=project, stdout=out, stderr=StringIO(), **opts
    )
    return out.getvalue()


def _events() -> list[Event]:
    return list(Event.objects.order_by("sequence"))


def test_codex_import_makes_agents_md_the_rule_set_and_marks_its_rules_reinjected() -> None:
    out = _import(CODEX)
    assert "codex, session '0197a1b2-7c3d-7e10-9a4b-5f6e7d8c9b0a', 2 compaction(s): 2 new event(s)" in out
    assert "joined the project's rule set (version 1)" in out
    assert "note: 1 remote compaction(s) hold only encrypted_content: unauditable" in out
    project = Project.objects.get(name="fmt")
    assert sorted(project.rules.values_list("text", flat=True)) == [
        "Always run pytest before committing.",
        "Never push directly to main.",
    ]
    version = RuleSetVersion.objects.get(project=project)
    assert (version.number, version.source, version.files) == (
        1,
        "import_transcripts",
        ["/home/dev/shop/AGENTS.md"],
    )
    first, second = _events()
    assert first.rules_source == "project"
    assert {r["file"] for r in first.rules} == {"/home/dev/shop/AGENTS.md"}
    assert {r["rule_set_version"] for r in first.rules} == {1}
    # Codex reads AGENTS.md again after a compaction: those rules were re-injected, not summarised.
    assert {r["reinjected_from"] for r in first.rules} == {"/home/dev/shop/AGENTS.md"}
    assert second.metadata["remote_compaction"] is True


def test_reimporting_adds_no_event_and_no_rule_set_version() -> None:
    _import(CODEX)
    out = _import(CODEX)
    assert "0 new event(s), 2 already there" in out
    assert "joined the project's rule set" not in out
    assert RuleSetVersion.objects.count() == 1


def test_a_file_without_compaction_says_so() -> None:
    out = _import(FILES / "rollout-2026-03-03T08-00-00-0197b000-0000-7000-8000-000000000001.jsonl")
    assert "codex, session '0197b000-0000-7000-8000-000000000001': no compaction in this file" in out
    assert Event.objects.count() == 0


def test_openhands_import_uses_repository_instructions() -> None:
    _import(FILES / "openhands-trajectory-8f2e.json")
    events = _events()
    assert len(events) == 2
    texts = {r["text"] for r in events[0].rules}
    # What counts as a rule in the file is the engine extractor's call (engine.rules).
    assert "Always run make test before you finish." in texts
    assert {r["file"] for r in events[0].rules} == {"acme/tools: repository instructions"}
    # The condensed view still holds the recall observation: the rules came back from the file.
    assert {r["reinjected_from"] for r in events[0].rules} == {"acme/tools: repository instructions"}


def test_letta_import_reads_system_prompt_and_memory_blocks_as_rules() -> None:
    _import(FILES / "support-agent.af")
    (event,) = _events()
    texts = {r["text"] for r in event.rules}
    assert "Never share a customer's address with anyone." in texts
    assert "Always answer in English." in texts
    assert event.after[1]["kind"] == "compact_summary"
    # Letta's summary replaces messages; nothing re-reads the memory blocks into the after context
    # as a separate file message, so no rule is marked re-injected.
    assert {r["reinjected_from"] for r in event.rules} == {""}


def test_langgraph_import_without_instruction_files_extracts_rules_not_from_the_summary() -> None:
    _import(FILES / "langgraph-thread-t-42-history.json")
    (event,) = _events()
    assert event.rules_source == "extracted"
    rules = event_own_rules(event)  # extracted by its check; what its pages show until then
    assert any("EU region" in r["text"] for r in rules)
    assert not any(r["text"].startswith("Here is a summary") for r in rules)


def test_langchain_state_after_summarizing_is_reported_not_imported_silently() -> None:
    out = _import(FILES / "langchain-messages-to-dict.json")
    assert "no compaction in this file" in out
    assert "note: 1 summary message(s) without the messages before them" in out


def test_gemini_import_uses_gemini_md_and_sees_it_reinjected() -> None:
    out = _import(FILES / "session-2026-03-02T10-00-a1b2c3d4.jsonl")
    assert "gemini, session 'a1b2c3d4-0000-4000-8000-00000000abcd', 1 compaction(s)" in out
    (event,) = _events()
    assert {r["text"] for r in event.rules} == {
        "Use Python 3.12 features only.",
        "Never change the public API of parse().",
    }
    assert {r["reinjected_from"] for r in event.rules} == {"/home/dev/parser/GEMINI.md"}


def test_format_can_be_forced() -> None:
    with pytest.raises(CommandError, match=r"could not be read"):
        _import(CODEX, format="letta")


def test_an_unknown_file_named_exits_2_but_inside_a_folder_is_skipped_and_listed(tmp_path: Path) -> None:
    with pytest.raises(
        CommandError, match=r"notes\.txt; known formats: codex, gemini, openhands, letta, langchain"
    ) as exc:
        _import(FILES / "notes.txt")
    assert exc.value.returncode == 2
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(FILES / "notes.txt", folder)
    shutil.copy(CODEX, folder)
    out = _import(folder)
    assert "notes.txt: skipped (not a transcript format ctxaudit reads)" in out
    assert "Imported 1 of 1 file(s)" in out


def test_help_names_every_format() -> None:
    from ctxaudit.ingest.management.commands.import_transcripts import Command

    parser = Command().create_parser("manage.py", "import_transcripts")
    text = parser.format_help()
    for name in ("codex", "openhands", "letta", "langchain", "gemini", "claude-jsonl", "claude-md"):
        assert name in text


def test_a_folder_of_every_format_imports_each_file_once() -> None:
    out = _import(FILES)
    assert "notes.txt: skipped (not a transcript format ctxaudit reads)" in out
    assert "Imported 10 of 10 file(s) into project 'fmt': 9 new event(s), 0 already there." in out
    formats = sorted({e.metadata["source_format"] for e in Event.objects.all()})
    assert formats == ["codex", "gemini", "langchain", "letta", "openhands"]


def test_codex_rules_injected_again_after_a_compaction_are_retained(
    django_capture_on_commit_callbacks,
) -> None:
    """End to end: AGENTS.md, which Codex injects again at the next turn, keeps its rules (the
    event read them as missing and failed while the context after was the replacement alone)."""
    with django_capture_on_commit_callbacks(execute=True):
        _import(CODEX)
    first = _events()[0]
    first.refresh_from_db()
    assert {r["id"]: r["state"] for r in first.report["rules"]} == dict.fromkeys(
        [r["id"] for r in first.rules], "retained"
    )


def test_an_empty_file_in_a_folder_is_skipped_as_empty(tmp_path: Path) -> None:
    shutil.copy(CODEX, tmp_path / CODEX.name)
    (tmp_path / "rollout-2026-03-04T08-00-00-just-started.jsonl").write_text("", encoding="utf-8")
    out = _import(tmp_path)
    assert "rollout-2026-03-04T08-00-00-just-started.jsonl: skipped (empty file)" in out
