"""Hierarchy and failure findings read in English for a Chinese context ("中文 / English", as rule
findings do), in English alone for an English one, and say what they mean (no "seed §6.1")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxaudit.engine import ContextPair, parse_context, run_checks
from ctxaudit.engine.evaluate import load
from ctxaudit.engine.language.clauses import has_cjk
from ctxaudit.engine.tokens import CharCounter

CASES = Path(__file__).resolve().parents[1] / "cases"
# The kinds hierarchy.py and failures.py write (claim kinds are the claims check's, elsewhere).
KINDS = {
    "summary_elevated",
    "system_rewritten",
    "system_truncated",
    "system_dropped",
    "invented_directive",
    "summary_unmarked",
    "summary_no_disclaimer",
    "structured_summary_invalid",
    "structured_operation_field",
    "structured_fact_unlabeled",
    "summary_empty",
    "summary_is_error",
    "summary_is_refusal",
    "history_wiped",
    "tool_pair_broken",
    "compaction_loop",
    "unauditable_compaction",
}


def _messages() -> list[tuple[str, str, str]]:
    cases, _ = load([CASES])
    out = []
    for case in cases:
        for f in run_checks(case.pair, counter=CharCounter()).findings:
            if f.kind in KINDS:
                out.append((case.id, f.kind, f.message))
    return out


def test_every_chinese_message_carries_an_english_reading() -> None:
    messages = _messages()
    chinese = [(cid, kind, msg) for cid, kind, msg in messages if has_cjk(msg)]
    assert len({kind for _, kind, _ in chinese}) >= 8  # the labelled cases reach most kinds
    for cid, kind, msg in chinese:
        zh, sep, en = msg.partition(" / ")
        assert sep, (cid, kind, msg)
        assert has_cjk(zh), (cid, kind, msg)
        # The English half has English words; Chinese in it can only be a quote of the context.
        unquoted = re.sub(r"“[^”]*”", "", en)
        assert re.search(r"[A-Za-z]{4,} [a-z]{2,}", unquoted), (cid, kind, msg)
        assert not has_cjk(unquoted), (cid, kind, msg)


def test_no_message_points_at_the_seed_instead_of_saying_what_it_means() -> None:
    for cid, kind, msg in _messages():
        assert "§" not in msg and "seed" not in msg.lower(), (cid, kind, msg)


SYSTEM_ZH = {"role": "system", "content": "你是订单助手。\n禁止删除任何业务数据。"}
HISTORY_ZH = [
    {"role": "user", "content": "帮我查一下订单 10086 的状态"},
    {"role": "assistant", "content": "订单 10086 已发货。"},
]


@pytest.mark.parametrize(
    ("after", "metadata", "kind", "english"),
    [
        (
            [{"role": "user", "content": "【历史摘要】用户查询了订单 10086，已发货。"}],
            {},
            "system_dropped",
            "The after-context has no system message",
        ),
        ([SYSTEM_ZH, {"role": "user", "content": ""}], {}, "summary_empty", "is empty or a placeholder"),
        (
            [SYSTEM_ZH, *HISTORY_ZH],
            {"recent_compactions": 4, "recent_turns": 5},
            "compaction_loop",
            "4 compressions in 5 turns",
        ),
    ],
)
def test_a_chinese_context_gets_chinese_then_english(after, metadata, kind, english) -> None:  # type: ignore[no-untyped-def]
    pair = ContextPair(
        parse_context([SYSTEM_ZH, *HISTORY_ZH]), parse_context(after), strategy="summary", metadata=metadata
    )
    found = [f for f in run_checks(pair, counter=CharCounter()).findings if f.kind == kind]
    assert len(found) == 1
    zh, _, en = found[0].message.partition(" / ")
    assert has_cjk(zh) and english in en


def test_an_english_context_gets_english_only() -> None:
    system = {"role": "system", "content": "You are the order assistant. Never delete business data."}
    history = [
        {"role": "user", "content": "Where is order 10086?"},
        {"role": "assistant", "content": "Shipped."},
    ]
    pair = ContextPair(
        parse_context([system, *history]),
        parse_context([system, *history]),
        metadata={"recent_compactions": 4, "recent_turns": 5},
    )
    (loop,) = [f for f in run_checks(pair, counter=CharCounter()).findings if f.kind == "compaction_loop"]
    # Before, an English context's loop finding ended in a Chinese sentence.
    assert not has_cjk(loop.message)
    assert loop.message.startswith("Compaction is looping (4 compressions in 5 turns)")
