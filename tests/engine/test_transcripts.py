"""Transcript parsers on small inputs written here, and on the real files in ../shared/samples/real."""

from __future__ import annotations

import json

import pytest

from ctxaudit.engine.transcripts import TranscriptError, detect_format, parse_transcript, read_transcript

SUMMARY = "This session is being continued from a previous conversation that ran out of context. Summary: {}"


def _jsonl(*entries: dict) -> str:
    return "\n".join(json.dumps(e) for e in entries) + "\n"


def _msg(uuid: str, parent: str | None, role: str, content, **extra) -> dict:
    message = {"role": role, "content": content}
    if role == "assistant":
        message.update(
            {"id": extra.pop("mid", f"msg_{uuid}"), "model": extra.pop("model", "claude-opus-4-1")}
        )
    return {
        "type": role,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "sess-9",
        "timestamp": "2025-07-01T10:00:00Z",
        "message": message,
        **extra,
    }


def _boundary(uuid: str, logical: str, **meta) -> dict:
    return {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": uuid,
        "parentUuid": None,
        "logicalParentUuid": logical,
        "sessionId": "sess-9",
        "timestamp": "2025-07-01T11:00:00Z",
        "compactMetadata": {"trigger": "manual", "preTokens": 1234, **meta},
    }


def _texts(ctx) -> list[str]:
    return [m.content for m in ctx.messages]


def test_it_follows_the_branch_the_model_saw_after_a_rewind() -> None:
    text = _jsonl(
        _msg("u1", None, "user", "Never push to main without review."),
        _msg("a1", "u1", "assistant", [{"type": "text", "text": "Understood."}]),
        _msg("x1", "a1", "user", "Delete the old branch"),  # abandoned by the rewind
        _msg("x2", "x1", "assistant", [{"type": "text", "text": "Deleted."}]),
        _msg("y1", "a1", "user", "Rename the old branch"),
        _msg("y2", "y1", "assistant", [{"type": "text", "text": "Renamed."}]),
        _boundary("b1", "y2"),
        _msg(
            "s1",
            "b1",
            "user",
            [{"type": "text", "text": SUMMARY.format("renamed a branch")}],
            isCompactSummary=True,
        ),
        _msg("n1", "s1", "user", "Thanks"),
    )
    t = parse_transcript(text, name="rewind.jsonl")
    assert t.session_id == "sess-9"
    [c] = t.compactions
    assert _texts(c.before) == [
        "Never push to main without review.",
        "Understood.",
        "Rename the old branch",
        "Renamed.",
    ]
    assert [(m.role, m.kind) for m in c.after.messages] == [("user", "compact_summary")]
    assert c.model == "claude-opus-4-1"
    assert c.occurred_at.isoformat() == "2025-07-01T11:00:00+00:00"
    assert c.metadata["trigger"] == "manual" and c.line == 7


def test_it_keeps_preserved_messages_after_the_boundary() -> None:
    text = _jsonl(
        _msg("u1", None, "user", "Only read files under src/."),
        _msg("a1", "u1", "assistant", "Ok."),
        _msg("u2", "a1", "user", "Look at src/app.py"),
        _boundary(
            "b1",
            "a2",
            preservedSegment={"headUuid": "u2", "anchorUuid": "s1", "tailUuid": "a2"},
            preservedMessages={"anchorUuid": "s1", "uuids": ["u2", "a2"]},
        ),
        _msg("s1", "b1", "user", SUMMARY.format("the user asked about src/app.py"), isCompactSummary=True),
        _msg("a2", "s1", "assistant", "It defines main()."),  # relinked under the summary
        _msg("u3", "a2", "user", "And tests?"),
    )
    [c] = parse_transcript(text, name="p.jsonl").compactions
    assert _texts(c.before) == [
        "Only read files under src/.",
        "Ok.",
        "Look at src/app.py",
        "It defines main().",
    ]
    assert [(m.kind, m.content) for m in c.after.messages][1:] == [
        ("preserved", "Look at src/app.py"),
        ("preserved", "It defines main()."),
    ]
    assert c.after.messages[0].kind == "compact_summary"


def test_it_splits_two_compactions_and_carries_the_summary_forward() -> None:
    text = _jsonl(
        _msg("u1", None, "user", "Always run the tests."),
        _msg(
            "a1",
            "u1",
            "assistant",
            [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}},
            ],
        ),
        _msg("r1", "a1", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "3 passed"}]),
        _boundary("b1", "r1"),
        _msg("s1", "b1", "user", SUMMARY.format("one"), isCompactSummary=True),
        _msg("u2", "s1", "user", "Now lint"),
        _boundary("b2", "u2"),
        _msg("s2", "b2", "user", SUMMARY.format("two"), isCompactSummary=True),
    )
    first, second = parse_transcript(text, name="two.jsonl").compactions
    assert [(m.role, m.content) for m in first.before.messages] == [
        ("user", "Always run the tests."),
        ("assistant", '[tool call Bash({"command": "pytest"})]'),
        ("tool", "3 passed"),
    ]
    assert [m.kind for m in second.before.messages] == ["compact_summary", None]
    assert _texts(second.before)[1] == "Now lint"
    assert _texts(second.after) == [SUMMARY.format("two")]
    assert (first.index, second.index) == (0, 1)


def test_it_merges_assistant_entries_of_one_message() -> None:
    text = _jsonl(
        _msg("u1", None, "user", "Hi"),
        _msg("a1", "u1", "assistant", [{"type": "text", "text": "Part one."}], mid="m1"),
        _msg("a2", "a1", "assistant", [{"type": "text", "text": "Part two."}], mid="m1"),
        _boundary("b1", "a2"),
        _msg("s1", "b1", "user", SUMMARY.format("x"), isCompactSummary=True),
    )
    [c] = parse_transcript(text, name="m.jsonl").compactions
    assert _texts(c.before) == ["Hi", "Part one.\nPart two."]


def test_it_names_the_file_and_line_of_bad_json() -> None:
    text = _jsonl(_msg("u1", None, "user", "Hi")) + "{not json\n"
    with pytest.raises(TranscriptError) as err:
        parse_transcript(text, name="broken.jsonl")
    assert str(err.value).startswith("broken.jsonl:2: not valid JSON")


MD = """# Claude Chat Export
**Generated: 2025-11-09 11:12:34**

---

👤 **USER:**
> Always use AI.md for coding rules.
Don't code yet.

I'll read AI.md first.

Here is the exporter's format:
```markdown
---

👤 **USER:**
> How do I implement authentication?
```

---

👤 **USER:**
> This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:
Summary:
1. The user asked to always use AI.md.

Please continue the conversation from where we left it off without asking the user any further questions. Continue with the last task that you were asked to work on.

I'll continue with the task.

---

👤 **USER:**
> implement option A

Done.

---

👤 **USER:**
> This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:
Summary: option A implemented.
Please continue the conversation from where we left it off without asking the user any further questions.

Continuing.
"""


def test_it_reads_a_markdown_export_with_two_compactions() -> None:
    t = parse_transcript(MD, name="/x/my-session-2025-11-09.md")
    assert t.session_id == "my-session-2025-11-09"
    assert t.occurred_at.isoformat() == "2025-11-09T11:12:34+00:00"
    first, second = t.compactions
    # The quoted "👤 **USER:**" inside the fenced block is not a turn.
    assert [m.role for m in first.before.messages] == ["user", "assistant"]
    assert first.before.messages[0].content == "Always use AI.md for coding rules.\nDon't code yet."
    assert "How do I implement authentication?" in first.before.messages[1].content
    assert [(m.role, m.kind) for m in first.after.messages] == [("user", "compact_summary")]
    assert first.after.messages[0].content.endswith(
        "Continue with the last task that you were asked to work on."
    )
    assert [(m.role, m.kind, m.content[:20]) for m in second.before.messages] == [
        ("user", "compact_summary", "This session is bein"),
        ("assistant", None, "I'll continue with t"),
        ("user", None, "implement option A"),
        ("assistant", None, "Done."),
    ]
    assert second.after.messages[0].content.startswith("This session is being continued")
    assert "Continuing." not in second.after.messages[0].content
    assert (first.line, second.line) == (22, 40)


def test_it_keeps_pasted_terminal_output_in_the_user_turn() -> None:
    md = "---\n\n👤 **USER:**\n> it still shows the menu\nFound 2 chats:\n\n 1) a.jsonl\n 2) b.jsonl\n\nEnter choice: q\n\nYou're right, let me fix it.\n"
    t = parse_transcript(md + "\n---\n\n👤 **USER:**\n> " + SUMMARY.format("x") + "\n", name="t.md")
    [c] = t.compactions
    user, assistant = c.before.messages
    assert user.content.endswith("Enter choice: q") and assistant.content == "You're right, let me fix it."


def test_it_rejects_markdown_without_turns() -> None:
    with pytest.raises(TranscriptError, match="no '👤 \\*\\*USER:\\*\\*' turn found"):
        parse_transcript("# Notes\n\nnothing here\n", name="notes.md", format="claude-md")


def test_it_detects_formats() -> None:
    # An empty .jsonl is no known format: the importer must say so, not report 0 compactions.
    assert detect_format("a.jsonl", "") is None
    assert detect_format("a.md", MD) == "claude-md"
    assert detect_format("README.md", "# Readme") is None
    assert detect_format("session.log", '{"type": "user"}') == "claude-jsonl"


# --- the real files ------------------------------------------------------------------------

REAL_COUNTS = {
    "claude-code-jsonl/dag_compact_after_rewind.jsonl": 1,
    "claude-code-jsonl/dag_compact_after_rewind_preserved.jsonl": 1,
    "claude-md-exports/implementing-wiki-mode-solutions-into-book-mode-2025-11-09.md": 2,
    "claude-md-exports/refactoring-monolithic-python-script-into-production-ready-codebase-2025-11-04.md": 1,
    "claude-md-exports/sanitizing-sensitive-information-in-chat-export-formats-2025-12-26.md": 1,
}


@pytest.mark.parametrize(("name", "count"), REAL_COUNTS.items())
def test_it_finds_every_compaction_in_the_real_files(shared_dir, name: str, count: int) -> None:
    t = read_transcript(shared_dir / "samples" / "real" / name)
    assert len(t.compactions) == count
    for c in t.compactions:
        assert c.after.messages[0].kind == "compact_summary"
        assert c.after.messages[0].content.startswith("This session is being continued")
        assert c.before.messages, "an empty before-context"
    for prev, nxt in zip(t.compactions, t.compactions[1:], strict=False):
        # The context after one compaction is where the next one's before-context starts.
        assert nxt.before.messages[0] == prev.after.messages[0]


def test_it_rebuilds_the_rewound_branch_of_the_real_jsonl(shared_dir) -> None:
    real = shared_dir / "samples" / "real" / "claude-code-jsonl"
    [c] = read_transcript(real / "dag_compact_after_rewind.jsonl").compactions
    before = _texts(c.before)
    assert "Second attempt" in before and "First attempt" not in before and "First answer" not in before
    assert before[-1] == "Kept going"
    assert "After compaction" not in _texts(c.after)
    [p] = read_transcript(real / "dag_compact_after_rewind_preserved.jsonl").compactions
    assert "Second attempt" in _texts(p.before) and "First attempt" not in _texts(p.before)
    assert [(m.kind, m.content) for m in p.after.messages[1:]] == [
        ("preserved", "Second answer"),
        ("preserved", "Keep going"),
        ("preserved", "Kept going"),
    ]


def test_it_reads_the_standing_instruction_of_a_real_markdown_export(shared_dir) -> None:
    path = (
        shared_dir
        / "samples"
        / "real"
        / "claude-md-exports"
        / "refactoring-monolithic-python-script-into-production-ready-codebase-2025-11-04.md"
    )
    [c] = read_transcript(path).compactions
    assert c.before.messages[0].content.startswith("Always use AI.md for programming rules.")
    # The user's next request ends where the assistant's reply begins.
    assert c.before.messages[1].role == "assistant"
    assert (
        c.after.messages[0]
        .content.rstrip()
        .endswith("Continue with the last task that you were asked to work on.")
    )


def test_it_reads_older_logs_without_a_boundary_entry() -> None:
    # Before compact_boundary existed, the summary itself started a new chain (parentUuid null).
    text = _jsonl(
        _msg("u1", None, "user", "Always answer in English."),
        _msg("a1", "u1", "assistant", "Sure."),
        {**_msg("side", "a1", "assistant", "subagent chatter"), "isSidechain": True},
        _msg("s1", None, "user", SUMMARY.format("the user wants English."), isCompactSummary=True),
        _msg("u2", "s1", "user", "Next?"),
    )
    [c] = parse_transcript(text, name="old.jsonl").compactions
    assert _texts(c.before) == ["Always answer in English.", "Sure."]
    assert c.after.messages[0].kind == "compact_summary"
    assert c.metadata["rebuilt_from_file_order"] is True


def test_it_walks_through_non_message_entries_in_the_chain() -> None:
    text = _jsonl(
        _msg("u1", None, "user", "Hi"),
        {
            "type": "system",
            "subtype": "local_command",
            "uuid": "sys1",
            "parentUuid": "u1",
            "content": "/model",
        },
        _msg("a1", "sys1", "assistant", "Hello"),
        {"type": "summary", "summary": "Greeting", "leafUuid": "a1"},
        _boundary("b1", "a1"),
        _msg("s1", "b1", "user", SUMMARY.format("greeted"), isCompactSummary=True),
    )
    [c] = parse_transcript(text, name="x.jsonl").compactions
    assert _texts(c.before) == ["Hi", "Hello"]
