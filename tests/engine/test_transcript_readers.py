"""Each transcript reader on files written here in its tool's format (tests/engine/transcripts/files,
sources in tests/engine/transcripts/README.md)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ctxaudit.engine.transcripts import (
    READERS,
    Instruction,
    TranscriptError,
    detect_format,
    read_transcript,
    transcript_files,
)

FILES = Path(__file__).parent / "transcripts" / "files"
CODEX = FILES / "rollout-2026-03-02T10-00-00-0197a1b2-7c3d-7e10-9a4b-5f6e7d8c9b0a.jsonl"
CODEX_PLAIN = FILES / "rollout-2026-03-03T08-00-00-0197b000-0000-7000-8000-000000000001.jsonl"
OPENHANDS = FILES / "openhands-trajectory-8f2e.json"
LETTA = FILES / "support-agent.af"
LANGGRAPH = FILES / "langgraph-thread-t-42-history.json"
DUMPD = FILES / "langchain-dumpd-log.json"
TO_DICT = FILES / "langchain-messages-to-dict.json"
GEMINI = FILES / "session-2026-03-02T10-00-a1b2c3d4.jsonl"
CHECKPOINT = FILES / "checkpoint-refactor.json"


def _roles(ctx) -> list[str]:
    return [m.role for m in ctx.messages]


def _kinds(ctx) -> list[str | None]:
    return [m.kind for m in ctx.messages]


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (CODEX, "codex"),
        (CODEX_PLAIN, "codex"),
        (OPENHANDS, "openhands"),
        (LETTA, "letta"),
        (LANGGRAPH, "langchain"),
        (DUMPD, "langchain"),
        (TO_DICT, "langchain"),
        (GEMINI, "gemini"),
        (CHECKPOINT, "gemini"),
        (FILES / "notes.txt", None),
    ],
)
def test_each_file_is_detected_as_its_format(path: Path, fmt: str | None) -> None:
    assert detect_format(path.name, path.read_text(encoding="utf-8")) == fmt


def test_a_codex_rollout_renamed_is_still_detected_by_content() -> None:
    assert detect_format("session.log", CODEX.read_text(encoding="utf-8")) == "codex"


def test_every_reader_names_itself_and_its_files() -> None:
    assert set(READERS) == {"claude-jsonl", "claude-md", "codex", "openhands", "letta", "langchain", "gemini"}
    assert all(r.label and r.extensions for r in READERS.values())


def test_codex_local_compaction_uses_the_replacement_history() -> None:
    t = read_transcript(CODEX)
    assert t.format == "codex"
    assert t.session_id == "0197a1b2-7c3d-7e10-9a4b-5f6e7d8c9b0a"
    assert len(t.compactions) == 2
    c = t.compactions[0]
    assert c.line == 11
    assert c.model == "gpt-5-codex"
    assert c.occurred_at == datetime(2026, 3, 2, 10, 20, 0, 500000, tzinfo=UTC)
    assert _roles(c.before) == ["user", "user", "user", "assistant", "tool", "assistant"]
    assert _kinds(c.before)[:2] == ["instructions", "environment"]
    assert c.before.messages[2].content == "Add a discount field to the checkout API."
    assert c.before.messages[3].content == '[tool call shell({"command":["rg","discount"]})]'
    # The summary turn's own answer is not context the model held.
    assert c.before.messages[-1].content == "I added the discount field and the tests pass."
    # AGENTS.md, which Codex injects again at the start of the next turn (after a manual or
    # pre-turn compaction), is part of what the model holds after it
    assert _kinds(c.after) == ["preserved", "compact_summary", "instructions"]
    assert c.after.messages[1].content.endswith("the tests pass.")
    assert c.after.messages[2].content.startswith("# AGENTS.md instructions for /home/dev/shop")
    assert c.metadata["reinjected_next_turn"] == 1


def test_codex_remote_compaction_is_unauditable_and_the_next_before_carries_the_replacement() -> None:
    t = read_transcript(CODEX)
    c = t.compactions[1]
    assert _kinds(c.before) == ["preserved", "compact_summary", "instructions", None, None]
    assert _kinds(c.after) == ["encrypted_compaction"]
    assert c.metadata["remote_compaction"] is True
    assert t.notes == ("1 remote compaction(s) hold only encrypted_content: unauditable",)


def test_codex_agents_md_is_an_instruction_file() -> None:
    t = read_transcript(CODEX)
    assert t.instructions == (
        Instruction(
            "/home/dev/shop/AGENTS.md", "Never push directly to main.\nAlways run pytest before committing."
        ),
    )


def test_codex_rollout_without_compaction_has_none() -> None:
    t = read_transcript(CODEX_PLAIN)
    assert t.format == "codex" and t.compactions == ()


def test_openhands_condensation_before_is_the_view_and_after_the_condensed_view() -> None:
    t = read_transcript(OPENHANDS)
    assert len(t.compactions) == 2
    c = t.compactions[0]
    assert c.metadata["forgotten_events"] == 2
    assert _roles(c.before) == ["system", "user", "user", "assistant", "tool", "assistant", "tool"]
    assert (
        c.before.messages[3].content
        == 'Run the tests first.\n[tool call run({"command": "pytest utils_test.py"})]'
    )
    assert _roles(c.after) == ["system", "user", "user", "user", "assistant", "tool"]
    assert _kinds(c.after)[2:4] == ["compact_summary", "instructions"]
    assert c.after.messages[2].content.startswith("The user asked to fix test_split")
    assert c.occurred_at == datetime(2026, 3, 2, 9, 1, tzinfo=UTC)


def test_openhands_second_condensation_keeps_the_earlier_summary() -> None:
    c = read_transcript(OPENHANDS).compactions[1]
    assert len(c.before.messages) == 8
    assert [m.content for m in c.after.messages][3:] == [
        "[tool call edit("
        + json.dumps(
            {
                "command": "str_replace",
                "end": -1,
                "new_str": "split(', ')",
                "old_str": "split(',')",
                "path": "/workspace/utils.py",
                "start": 1,
            },
            sort_keys=True,
        )
        + ")]",
        "The test passes now.",
        "Thanks",
    ]
    # the first summary's offset (2) counts events, the recall action among them: it sits
    # before the recall observation's instructions (View.from_events), not after
    assert _kinds(c.after)[:3] == [None, "compact_summary", "instructions"]
    assert c.metadata["summary_missing"] is True


def test_openhands_repository_instructions_are_found() -> None:
    assert read_transcript(OPENHANDS).instructions == (
        Instruction(
            "acme/tools: repository instructions",
            "Use tabs for indentation.\nAlways run make test before you finish.",
        ),
    )


def test_letta_summary_evicts_the_oldest_messages_and_is_a_user_role_summary() -> None:
    t = read_transcript(LETTA)
    assert t.session_id == "support-agent:agent-0"
    assert len(t.compactions) == 1
    c = t.compactions[0]
    assert _roles(c.before) == ["system", "user", "assistant", "tool", "assistant"]
    assert c.before.messages[1].content == "Where is my order 551?"
    assert (
        c.before.messages[2].content == 'Let me check order 551.\n[tool call lookup_order({"order_id": 551})]'
    )
    assert c.before.messages[3].content == "shipped on 2026-02-28"
    assert _roles(c.after) == ["system", "user", "tool", "assistant"]
    assert _kinds(c.after) == [None, "compact_summary", "preserved", "preserved"]
    assert c.after.messages[1].content.startswith("Note: prior messages (2 of 5 total messages)")
    assert c.metadata["evicted_messages"] == 2
    assert c.model == "gpt-4o-mini"


def _letta_with_summary(tmp_path: Path, *, role: str, note: str) -> Path:
    """The fixture's summary rewritten as a newer Letta writes it (letta-code compaction.ts)."""
    data = json.loads(LETTA.read_text(encoding="utf-8"))
    for m in data["agents"][0]["messages"]:
        text = "".join(p.get("text", "") for p in m.get("content") or [] if isinstance(p, dict))
        if "hidden from view" in text:
            packed = json.loads(text)
            packed["message"] = (
                note
                + "\nThe following is a summary of the previous messages:\n "
                + packed["message"].split(":\n ", 1)[1]
            )
            m["role"] = role
            m["content"] = [{"type": "text", "text": json.dumps(packed)}]
    out = tmp_path / "support-agent.af"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


@pytest.mark.parametrize(
    ("role", "note", "evicted"),
    [
        # sliding_window mode (the default from 0.16.5): how many were evicted
        (
            "user",
            "Note: 2 messages from the beginning of the conversation have been hidden from view due to memory constraints.",
            2,
        ),
        # "all" mode, stored in the summary role (a compaction asked for through the API)
        (
            "summary",
            "Note: prior messages have been hidden from view due to conversation memory constraints.",
            None,
        ),
    ],
    ids=["sliding-window", "summary-role"],
)
def test_letta_newer_summary_texts_and_the_summary_role_are_compactions(
    tmp_path: Path, role: str, note: str, evicted: int | None
) -> None:
    t = read_transcript(_letta_with_summary(tmp_path, role=role, note=note))
    assert len(t.compactions) == 1
    c = t.compactions[0]
    assert _kinds(c.after)[1] == "compact_summary"
    assert c.after.messages[1].content.startswith(note)
    assert _roles(c.before) == ["system", "user", "assistant", "tool", "assistant"]
    if evicted is not None:
        assert c.metadata["evicted_messages"] == evicted


def test_letta_system_prompt_and_memory_blocks_are_instructions() -> None:
    assert [i.source for i in read_transcript(LETTA).instructions] == [
        "system prompt",
        "memory block persona",
        "memory block human",
    ]


def test_langgraph_state_history_pairs_the_state_before_the_summary() -> None:
    t = read_transcript(LANGGRAPH)
    assert t.session_id == "t-42"
    assert len(t.compactions) == 1
    c = t.compactions[0]
    assert [m.content for m in c.before.messages][
        0
    ] == "Always deploy to the EU region only. Never store card numbers in logs."
    assert len(c.before.messages) == 4
    assert _kinds(c.after) == ["compact_summary", "preserved"]
    assert c.after.messages[1].content == "I'll use the EU region for the api service."


def test_langgraph_compaction_has_its_states_time_the_model_and_the_sdks_thread_id(tmp_path: Path) -> None:
    """The SDK's get_history answer (langgraph_sdk/schema.py ThreadState) names the thread in
    `checkpoint`, not `config`; each state has `created_at`; an AI message its model."""
    states = json.loads(LANGGRAPH.read_text(encoding="utf-8"))
    for st in states:
        st["checkpoint"] = {
            "thread_id": "t-99",
            "checkpoint_ns": "",
            "checkpoint_id": st["config"]["configurable"]["checkpoint_id"],
        }
        del st["config"]
        for m in st["values"]["messages"]:
            if m["type"] == "ai":
                m["response_metadata"] = {"model_name": "gpt-4.1-mini-2025-04-14"}
    sdk = tmp_path / "thread-history.json"
    sdk.write_text(json.dumps(states), encoding="utf-8")
    t = read_transcript(sdk)
    assert t.session_id == "t-99"
    c = t.compactions[0]
    assert c.occurred_at == datetime(2026, 3, 2, 12, 0, 3, tzinfo=UTC)
    assert c.model == "gpt-4.1-mini-2025-04-14"


def test_langchain_linear_dump_uses_the_messages_before_the_summary() -> None:
    c = read_transcript(DUMPD).compactions[0]
    assert [m.content for m in c.before.messages] == [
        "Reply in French only.",
        "D'accord.",
        "Résume le ticket 12.",
    ]
    assert _kinds(c.after) == ["compact_summary", "preserved"]


def test_langchain_state_saved_after_summarizing_says_so_instead_of_inventing_a_before() -> None:
    t = read_transcript(TO_DICT)
    assert t.compactions == ()
    assert len(t.notes) == 1 and "not auditable" in t.notes[0]


def test_gemini_set_with_a_state_snapshot_is_a_compaction() -> None:
    t = read_transcript(GEMINI)
    assert t.session_id == "a1b2c3d4-0000-4000-8000-00000000abcd"
    assert len(t.compactions) == 1
    c = t.compactions[0]
    assert c.line == 8
    assert _roles(c.before) == ["user", "assistant", "assistant", "tool", "user", "assistant"]
    assert c.before.messages[3].content == '[tool result read_file({"output": "def parse(): ..."})]'
    assert _kinds(c.after) == ["instructions", "compact_summary", None, "preserved", "preserved"]
    assert c.model == "gemini-2.5-pro"
    assert c.occurred_at == datetime(2026, 3, 2, 10, 30, tzinfo=UTC)
    assert t.instructions == (
        Instruction(
            "/home/dev/parser/GEMINI.md",
            "Use Python 3.12 features only.\nNever change the public API of parse().",
        ),
    )


def test_gemini_session_context_kept_across_a_compression_stays_the_instruction_file(tmp_path: Path) -> None:
    """Gemini CLI keeps its session-context turn (GEMINI.md inside) with the same id after a
    compression (utils/environmentContext.ts): it is the instruction file put back, not a turn
    the summary kept."""
    lines = GEMINI.read_text(encoding="utf-8").splitlines()
    env = next(m for m in json.loads(lines[7])["$set"]["messages"] if m["id"] == "env")
    lines.insert(1, json.dumps(env))  # the session started with it
    session = tmp_path / GEMINI.name
    session.write_text("\n".join(lines) + "\n", encoding="utf-8")
    c = read_transcript(session).compactions[0]
    assert _kinds(c.after)[0] == "instructions"


def test_gemini_saved_chat_holds_one_state_and_says_so() -> None:
    t = read_transcript(CHECKPOINT)
    assert t.compactions == ()
    assert "not auditable" in t.notes[0]
    assert t.instructions[0].source == "/home/dev/parser/GEMINI.md"


def test_a_bad_line_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "rollout-x.jsonl"
    bad.write_text(CODEX_PLAIN.read_text(encoding="utf-8") + "{oops\n", encoding="utf-8")
    with pytest.raises(TranscriptError, match=r"rollout-x\.jsonl:5: not valid JSON"):
        read_transcript(bad)


@pytest.mark.parametrize("path", [CODEX, GEMINI], ids=["codex", "gemini"])
def test_a_half_written_last_line_is_left_for_the_next_import(tmp_path: Path, path: Path) -> None:
    """A session still being written ends in a line cut short: the compactions before it are read,
    and the note says which line waits for the next import."""
    text = path.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    growing = tmp_path / path.name
    growing.write_text(text + '{"timestamp": "2026-03-02T11:00:00.000Z", "type": "respo', encoding="utf-8")
    t = read_transcript(growing)
    assert len(t.compactions) == len(read_transcript(path).compactions) > 0
    assert f"line {lines + 1} is incomplete" in " ".join(t.notes)


def test_a_line_separator_inside_a_json_string_is_no_line_break(tmp_path: Path) -> None:
    """serde_json writes U+2028 raw inside strings; str.splitlines() would cut the record there."""
    text = CODEX.read_text(encoding="utf-8").replace(
        "Add a discount field to the checkout API.", "Add a discount field\u2028to the checkout API."
    )
    assert "\u2028" in text
    odd = tmp_path / CODEX.name
    odd.write_text(text, encoding="utf-8")
    t = read_transcript(odd)
    assert t.compactions[0].before.messages[2].content == "Add a discount field\u2028to the checkout API."


def test_a_codex_rollout_compressed_with_zstd_is_read_and_a_plain_sibling_wins(tmp_path: Path) -> None:
    """Codex compresses older rollouts to rollout-….jsonl.zst and prefers the plain file when both
    exist (codex-rs/rollout/src/compression.rs)."""
    import zstandard

    packed = tmp_path / (CODEX.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(CODEX.read_bytes()))
    t = read_transcript(packed)
    assert t.format == "codex" and len(t.compactions) == 2
    assert t.session_id == "0197a1b2-7c3d-7e10-9a4b-5f6e7d8c9b0a"
    files, skipped = transcript_files([tmp_path])
    assert files == [packed] and skipped == []
    (tmp_path / CODEX.name).write_bytes(CODEX.read_bytes())
    files, skipped = transcript_files([tmp_path])  # the same session twice: the plain file only
    assert files == [tmp_path / CODEX.name] and skipped == []


def test_an_unknown_file_names_the_known_formats(tmp_path: Path) -> None:
    with pytest.raises(
        TranscriptError,
        match=r"notes\.txt: not a transcript format ctxaudit reads; known formats: codex, gemini",
    ):
        read_transcript(FILES / "notes.txt")


def test_openhands_compaction_names_the_model_of_the_events_before_it(tmp_path: Path) -> None:
    """Agent events carry `llm_metrics` (openhands/llm/metrics.py: accumulated_token_usage.model)."""
    events = json.loads(OPENHANDS.read_text(encoding="utf-8"))
    events[4]["llm_metrics"] = {
        "accumulated_cost": 0.01,
        "accumulated_token_usage": {"model": "anthropic/claude-sonnet-4-5"},
    }
    with_metrics = tmp_path / OPENHANDS.name
    with_metrics.write_text(json.dumps(events), encoding="utf-8")
    assert read_transcript(with_metrics).compactions[0].model == "anthropic/claude-sonnet-4-5"
    assert read_transcript(OPENHANDS).compactions[0].model is None


def test_openhands_trajectory_as_the_server_answers_it_is_read(tmp_path: Path) -> None:
    wrapped = tmp_path / "trajectory-response.json"
    wrapped.write_text(
        json.dumps({"trajectory": json.loads(OPENHANDS.read_text(encoding="utf-8"))}), encoding="utf-8"
    )
    t = read_transcript(wrapped)
    assert t.format == "openhands" and len(t.compactions) == len(read_transcript(OPENHANDS).compactions) == 2


def test_an_openhands_event_store_folder_is_one_conversation(tmp_path: Path) -> None:
    """The server stores a conversation as sessions/<id>/events/<n>.json, one event a file
    (openhands/storage/locations.py): the folder is read as the conversation's stream."""
    events_dir = tmp_path / "sessions" / "0d4f9e2a" / "events"
    events_dir.mkdir(parents=True)
    for e in json.loads(OPENHANDS.read_text(encoding="utf-8")):
        (events_dir / f"{e['id']}.json").write_text(json.dumps(e), encoding="utf-8")
    files, skipped = transcript_files([tmp_path / "sessions"])
    assert files == [events_dir] and skipped == []
    t = read_transcript(events_dir)
    assert t.format == "openhands" and t.session_id == "0d4f9e2a"
    assert len(t.compactions) == 2  # events 10.json and 11.json come after 2.json, by number


def test_one_openhands_event_file_is_not_read_as_a_stream(tmp_path: Path) -> None:
    one = tmp_path / "11.json"
    one.write_text(json.dumps(json.loads(OPENHANDS.read_text(encoding="utf-8"))[11]), encoding="utf-8")
    t = read_transcript(one)
    assert t.format == "openhands" and t.compactions == ()
    assert "single OpenHands event" in t.notes[0]


def test_the_readme_lists_every_format() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Importing transcripts", 1)[1].split("\n## ", 1)[0]
    for name in READERS:
        assert f"| `{name}` |" in section


def test_an_older_codex_compaction_without_replacement_history_is_rebuilt_as_codex_does() -> None:
    t = read_transcript(FILES / "rollout-2025-09-20T08-00-00-01995a00-1111-7222-8333-444455556666.jsonl")
    (c,) = t.compactions
    assert c.metadata["replacement_history_missing"] is True
    assert _kinds(c.after) == ["instructions", "environment", "preserved", "compact_summary"]
    assert c.after.messages[2].content == "Add an index on orders.created_at."
    # session_meta.instructions and the <user_instructions> message are one AGENTS.md.
    assert t.instructions == (
        Instruction("AGENTS.md", "Always answer in English.\nNever run migrations on production."),
    )
