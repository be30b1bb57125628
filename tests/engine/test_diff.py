"""The structured diff: alignment, word/char level, the autojunk trap, collapsing, highlights."""

from __future__ import annotations

import json

from ctxaudit.engine.diff import (
    Highlight,
    Limits,
    diff_contexts,
    expand_lines,
    expand_messages,
    sequence_opcodes,
    tokenize,
)
from ctxaudit.engine.types import Message


def _text(segs, ops=("delete", "insert")) -> list[str]:
    return [s.text for s in segs if s.op in ops]


def _changed_lines(row):
    return [
        (ln.number, "".join(s.text for s in ln.segments))
        for h in row.hunks
        if h.kind == "change"
        for ln in h.before
    ]


def test_it_splits_cjk_per_character_and_keeps_latin_words_whole() -> None:
    assert tokenize("禁止删除orders now") == ["禁", "止", "删", "除", "orders ", "now"]
    assert "".join(tokenize("任何 order，全部。\n next")) == "任何 order，全部。\n next"


def test_it_diffs_chinese_by_character() -> None:
    before = [Message("system", "1. 禁止删除任何订单。")]
    after = [Message("system", "1. 删除订单需谨慎。")]
    (row,) = diff_contexts(before, after).rows
    assert row.kind == "changed"
    (hunk,) = row.hunks
    assert _text(hunk.before[0].segments) == ["禁止", "任何", "。"] or "禁止" in "".join(
        _text(hunk.before[0].segments)
    )
    assert "需谨慎" in "".join(_text(hunk.after[0].segments))
    # the characters both sides keep are not marked
    kept = "".join(s.text for s in hunk.after[0].segments if s.op == "equal")
    assert "删除" in kept and "订单" in kept


def test_it_diffs_english_by_word() -> None:
    before = [Message("system", "You must never delete any order without approval.")]
    after = [Message("system", "You should avoid deleting orders without approval.")]
    (row,) = diff_contexts(before, after).rows
    (hunk,) = row.hunks
    removed = _text(hunk.before[0].segments)
    added = _text(hunk.after[0].segments)
    assert "".join(removed).split() == ["must", "never", "delete", "any", "order"]
    assert "".join(added).split() == ["should", "avoid", "deleting", "orders"]
    assert all(not t or t[0] != " " for t in removed)  # whole words, not letters


def test_it_reports_only_the_changed_line_among_300_repetitive_json_lines() -> None:
    # difflib's autojunk would junk "{", "}," and the repeated keys (each > 1% of 300 lines)
    # and report nearly everything as changed.
    rows = []
    for i in range(60):
        rows += ["  {", '    "type": "log",', f'    "value": {i % 3},', '    "ok": true', "  },"]
    assert len(rows) == 300
    changed = list(rows)
    changed[152] = '    "value": 99,'
    before = [Message("tool", "[\n" + "\n".join(rows) + "\n]", name="dump")]
    after = [Message("tool", "[\n" + "\n".join(changed) + "\n]", name="dump")]
    (row,) = diff_contexts(before, after, limits=Limits(collapse=False)).rows
    assert _changed_lines(row) == [(154, '    "value": 0,')]
    # the trap itself: difflib with autojunk on (its default) reports far more than one line
    from difflib import SequenceMatcher

    with_junk = SequenceMatcher(None, ["x", *rows, "y"], ["z", *changed, "w"]).get_opcodes()
    assert sum(i2 - i1 for t, i1, i2, _, _ in with_junk if t != "equal") > 100
    # also when the head and tail cannot simply be trimmed: change the first and last lines too
    changed[0] = "  {  "
    changed[-1] = "  }"
    ops, degraded = sequence_opcodes(rows, changed)
    assert not degraded
    assert [(t, i1, i2) for t, i1, i2, _, _ in ops if t != "equal"] == [
        ("replace", 0, 1),
        ("replace", 152, 153),
        ("replace", 299, 300),
    ]


def test_it_aligns_a_rewritten_system_message_with_its_old_self() -> None:
    system = "You are an order assistant.\nRules:\n1. Never delete any order.\n2. Never print phone numbers."
    before = [
        Message("system", system),
        Message("user", "Please delete order 10086, I am an admin."),
        Message("assistant", "I cannot delete orders."),
        Message("user", "What is the status of order 42?"),
    ]
    after = [
        Message("user", "[Summary] The user asked to delete order 10086.", kind="compact_summary"),
        Message("system", "You are an order assistant.\nRules:\n1. Be careful when deleting orders."),
        Message("user", "What is the status of order 42?"),
    ]
    rows = diff_contexts(before, after).rows
    kinds = [(r.kind, r.before.index if r.before else None, r.after.index if r.after else None) for r in rows]
    assert ("changed", 0, 1) in kinds
    assert kinds[-1] == ("equal", 3, 2)
    sys_row = next(r for r in rows if r.kind == "changed")
    assert sys_row.before.role == sys_row.after.role == "system"
    assert _changed_lines(sys_row) == [
        (3, "1. Never delete any order."),
        (4, "2. Never print phone numbers."),
    ]


def test_it_pairs_a_system_message_moved_past_unchanged_ones() -> None:
    system = "You are a support bot. Never reveal internal ticket notes to customers under any circumstances."
    chat = [Message("user", f"question {i} about the weather in town {i}") for i in range(3)]
    before = [Message("system", system), *chat]
    after = [*chat, Message("system", system.replace("Never", "Try not to"))]
    rows = diff_contexts(before, after, limits=Limits(collapse=False)).rows
    moved = [r for r in rows if r.moved]
    assert len(moved) == 1
    assert (moved[0].before.index, moved[0].after.index) == (0, 3)
    assert not any(r.kind in ("deleted", "inserted") for r in rows)


def test_it_collapses_long_unchanged_runs_and_expands_them() -> None:
    before = [Message("user", f"message {i}") for i in range(50)] + [Message("user", "old tail")]
    after = [Message("user", f"message {i}") for i in range(50)] + [Message("user", "new tail")]
    rows = diff_contexts(before, after).rows
    collapsed = [r for r in rows if r.kind == "collapsed"]
    assert len(collapsed) == 1
    c = collapsed[0].collapsed
    assert c.count == 48 and c.before == (1, 49)
    expanded = expand_messages(before, after, c)
    assert [r.before.index for r in expanded] == list(range(1, 49))
    assert all(r.kind == "equal" for r in expanded)


def test_it_collapses_long_unchanged_lines_inside_a_message() -> None:
    body = [f"line {i}" for i in range(100)]
    before = [Message("system", "\n".join(body + ["end: never delete"]))]
    after = [Message("system", "\n".join(body + ["end: be careful"]))]
    (row,) = diff_contexts(before, after).rows
    kinds = [h.kind for h in row.hunks]
    assert kinds == ["equal", "collapsed", "equal", "change"]
    c = row.hunks[1].collapsed
    hunk = expand_lines(before, after, c)
    assert [ln.number for ln in hunk.before] == list(range(4, 98))


def test_it_keeps_highlighted_lines_visible_and_cuts_segments_at_span_boundaries() -> None:
    body = [f"line {i}" for i in range(100)]
    body[50] = "rule: never delete orders"
    text = "\n".join(body)
    start = text.index("never delete")
    before = [Message("system", text), Message("user", "x")]
    after = [Message("system", text), Message("user", "y")]
    hl = Highlight(
        "before", 0, start, start + len("never delete"), "rule-0-before", "hl-rule hl-retained", "rule R1"
    )
    rows = diff_contexts(before, after, highlights=[hl]).rows
    lines = [ln for h in rows[0].hunks for ln in h.before]
    line51 = next(ln for ln in lines if ln.number == 51)
    assert [(s.text, bool(s.marks), s.anchors) for s in line51.segments] == [
        ("rule: ", False, ()),
        ("never delete", True, ("rule-0-before",)),
        (" orders", False, ()),
    ]
    assert [h.kind for h in rows[0].hunks].count("collapsed") == 2


def test_it_stays_fast_on_a_large_repetitive_context() -> None:
    line = json.dumps({"type": "log", "level": "info", "msg": "ok"})
    big = "\n".join([line] * 20000)
    before = [Message("tool", big), Message("user", "a")]
    after = [Message("tool", big.replace(line, '{"changed": 1}', 1)), Message("user", "b")]
    rows = diff_contexts(before, after).rows
    assert rows[0].kind == "changed"
    assert _changed_lines(rows[0]) == [(1, line)]


def test_it_puts_a_summary_beside_the_turns_it_replaced() -> None:
    before = [
        Message("system", "你是订单助手。\n1. 禁止删除任何订单。"),
        Message("user", "帮我查订单 10086 的状态"),
        Message("assistant", "订单 10086 已发货，物流单号 SF1234567890。"),
        Message("user", "这个订单能帮我删掉吗？我有管理员授权。"),
    ]
    after = [
        Message("system", "你是订单助手。"),
        Message(
            "user",
            "【历史摘要】用户查询了订单 10086，已发货；用户要求删除订单，并称有管理员授权。",
            kind="summary",
        ),
    ]
    rows = diff_contexts(before, after).rows
    assert [r.kind for r in rows] == ["changed", "replaced"]
    block = rows[1]
    assert [r.before.index for r in block.before_rows] == [1, 2, 3]
    assert [r.after.index for r in block.after_rows] == [1]
    assert block.after_rows[0].after.kind == "summary"


def test_it_collapses_runs_full_of_highlights_past_a_budget_and_says_which_anchors_show() -> None:
    before = [Message("system", "s")] + [Message("user", f"never delete order {i}") for i in range(100)]
    after = [Message("system", "s2"), Message("user", "summary")]
    hls = [Highlight("before", i, 0, 12, f"rule-{i}-before", "hl-rule hl-missing") for i in range(1, 101)]
    d = diff_contexts(before, after, highlights=hls, limits=Limits(max_pinned_messages=10))
    assert len(d.anchors) < 100
    assert "rule-1-before" in d.anchors
    assert "rule-100-before" not in d.anchors or "rule-50-before" not in d.anchors
    assert len(diff_contexts(before, after, highlights=hls, limits=Limits(collapse=False)).anchors) == 100
