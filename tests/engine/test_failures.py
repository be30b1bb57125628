"""Compaction failure modes: error/refusal/empty summaries, wiped history, broken tool pairs, loops, encrypted items."""

from __future__ import annotations

from ctxaudit.engine import ContextPair, parse_context, run_checks
from ctxaudit.engine.analysis import analyse
from ctxaudit.engine.checks.failures import check_failures
from ctxaudit.engine.tokens import CharCounter

SYSTEM = {"role": "system", "content": "You are a coding agent. Never push to main."}
HISTORY = [
    {"role": "user", "content": "Fix the flaky test."},
    {"role": "assistant", "content": "Looking at tests/test_api.py now."},
]


def kinds(after: list[dict], before: list[dict] | None = None, **kw: object) -> list[str]:
    before = before if before is not None else [SYSTEM, *HISTORY]
    return [
        f.kind
        for f in check_failures(analyse(ContextPair(parse_context(before), parse_context(after), **kw)))
    ]  # type: ignore[arg-type]


def test_it_flags_an_error_or_refusal_committed_as_the_summary() -> None:
    assert kinds(
        [SYSTEM, {"role": "user", "content": "Error: 429 Too Many Requests"}], strategy="summary"
    ) == ["summary_is_error"]
    assert kinds(
        [SYSTEM, {"role": "user", "content": "【历史摘要】摘要生成失败：上游超时"}], strategy="summary"
    ) == ["summary_is_error"]
    assert kinds(
        [SYSTEM, {"role": "user", "content": "I'm sorry, but I can't summarize this conversation."}],
        strategy="summary",
    ) == ["summary_is_refusal"]


def test_it_flags_empty_and_placeholder_summaries() -> None:
    for text in ("", "   ", "[History summary] ...", "{{summary}}", "【历史摘要】", "TODO"):
        assert kinds([SYSTEM, {"role": "user", "content": text}], strategy="summary") == ["summary_empty"], (
            text
        )


def test_it_flags_a_wiped_history_but_not_a_summary() -> None:
    assert kinds([SYSTEM]) == ["history_wiped"]
    assert (
        kinds(
            [
                SYSTEM,
                {
                    "role": "user",
                    "content": "[History summary] The user asked to fix a flaky test in tests/test_api.py.",
                },
            ],
            strategy="summary",
        )
        == []
    )


def test_it_flags_a_tool_result_cut_from_its_call() -> None:
    before = [
        SYSTEM,
        {"role": "user", "content": "Run the tests."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "run", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "3 passed"},
        {"role": "assistant", "content": "All green."},
    ]
    assert kinds([SYSTEM, before[3], before[4]], before) == ["tool_pair_broken"]
    assert kinds([SYSTEM, before[2], before[4]], before) == ["tool_pair_broken"]
    assert kinds([SYSTEM, *before[2:]], before) == []


def test_it_flags_a_compaction_loop_from_metadata() -> None:
    after = [SYSTEM, *HISTORY]
    assert kinds(after, metadata={"recent_compactions": 4, "recent_turns": 5}) == ["compaction_loop"]
    assert kinds(after, metadata={"recent_compactions": 3, "recent_turns": 40}) == []
    assert kinds(after, metadata={"turns_since_last_compaction": 0}) == ["compaction_loop"]


def test_it_reports_and_counts_an_encrypted_compaction() -> None:
    after = {
        "system": "You are a coding agent. Never push to main.",
        "messages": [{"role": "user", "content": [{"type": "compaction", "encrypted_content": "gAAAA..."}]}],
    }
    pair = ContextPair(parse_context([SYSTEM, *HISTORY]), parse_context(after))
    report = run_checks(pair, counter=CharCounter())
    assert [f.kind for f in report.findings if f.kind == "unauditable_compaction"] == [
        "unauditable_compaction"
    ]
    assert report.unauditable_compactions == 1
    assert "history_wiped" not in [f.kind for f in report.findings]
