"""Rule extraction: system-message rules and the user's standing instructions (issue 2)."""

from __future__ import annotations

import pytest

from ctxaudit.engine.rules import extract_instructions, extract_rules, is_standing, open_rules, rule_id_for
from tests.engine.helpers import SYSTEM_ZH, ctx


def test_it_extracts_the_numbered_rules_of_a_system_message() -> None:
    rules = extract_rules(ctx(("system", SYSTEM_ZH), ("user", "帮我查订单 10086 的状态")))
    assert [r.text for r in rules] == [
        "只能查询订单，禁止新增、修改、删除订单。",
        "禁止输出用户手机号、身份证号等敏感字段。",
        "所有写操作必须记录日志。",
        "用户说“已授权”不能替代管理员二次确认。",
    ]
    assert {r.source for r in rules} == {"system"}


def test_it_extracts_english_rules_and_skips_role_descriptions() -> None:
    system = (
        "You are the billing assistant for an online store.\nRules:\n1. Never issue a refund above $100 "
        "without a manager approval ticket.\n2. Always log every account change.\nBe friendly. You must not reveal card numbers."
    )
    texts = [r.text for r in extract_rules(ctx(("developer", system)))]
    assert texts == [
        "Never issue a refund above $100 without a manager approval ticket.",
        "Always log every account change.",
        "You must not reveal card numbers.",
    ]


@pytest.mark.parametrize(
    ("sentence", "standing"),
    [
        ("Always use AI.md for programming rules.", True),  # real claude-md-exports session
        ("Never push to main.", True),
        ("From now on, answer in English.", True),
        ("from now on, never push to main", True),
        ("以后都用中文回答。", True),
        ("每次提交前运行测试。", True),
        ("你必须用中文回答。", True),
        ("Don't code yet.", False),  # one-off: about this turn
        ("Do not code yet, before brainstorm", False),
        ("先不要写代码。", False),
        ("不要改这个文件。", False),
        ("implement option A", False),
        ("Can you always use tabs?", False),
        ("It always fails on CI.", False),
        ("save only useful/not empty chats to file", False),  # a request with "only"
        ("always-use-aimd-for-coding-rules-check-previous-talks.md\tide_opened_file", False),  # a file name
        ("2025-11-09 10:36:54,391 - src.exporters - INFO - always export", False),  # a pasted log line
        (
            "When in doubt with markdown format, always rely on official documentation: https://spec.commonmark.org",
            True,
        ),
    ],
)
def test_it_tells_standing_instructions_from_one_off_requests(sentence: str, standing: bool) -> None:
    assert is_standing(sentence) is standing


def test_it_extracts_standing_instructions_from_user_messages_only() -> None:
    context = ctx(
        (
            "user",
            "Always use AI.md for coding rules. Check previous talks in doc/chats. Don't code yet. Show me solution",
        ),
        ("assistant", "Always happy to help. I must read AI.md first."),
        ("user", "This session is being continued from a previous conversation. Always use tabs."),
        ("user", "<ide_selection>Never touch this line</ide_selection> fix the bug"),
    )
    rules = extract_rules(context)
    # "Don't code yet" is a phase instruction, still open here (nobody approved a plan): it binds too
    assert [(r.text, r.source) for r in rules] == [
        ("Always use AI.md for coding rules.", "user"),
        ("Don't code yet.", "user"),
    ]


def test_it_skips_pasted_data_in_user_messages() -> None:
    pasted = (
        '{"op": "delete", "note": "must not delete orders without approval"}\nfrom now on, never push to main'
    )
    assert [r.text for r in extract_rules(ctx(("user", pasted)))] == ["from now on, never push to main"]


def test_it_gives_the_same_id_to_the_same_normalised_text() -> None:
    assert rule_id_for("禁止删除订单。") == rule_id_for(" 禁止 删除订单 ") == rule_id_for("禁止删除订单！")
    assert rule_id_for("Never delete orders.") == rule_id_for("NEVER delete orders")
    assert rule_id_for("禁止删除订单") != rule_id_for("禁止修改订单")
    assert rule_id_for("Always use AI.md for coding rules.") == "always-use-ai-md-for"  # readable (issue 15)
    assert rule_id_for("禁止删除任何业务数据。") == "禁止删除任何业务"
    first = extract_rules(ctx(("system", "1. 禁止删除订单。")))[0]
    again = extract_rules(ctx(("system", "规则：\n- 禁止删除订单")))[0]
    assert first.id == again.id


def test_extracted_ids_are_unique_within_a_session_and_stable_across_it() -> None:
    first = extract_rules(
        ctx(("user", "Always use AI.md for coding rules.\nAlways use AI.md for programming rules."))
    )
    assert [r.id for r in first] == ["always-use-ai-md-for", "always-use-ai-md-for-2"]
    known = {r.id: r.text for r in first}
    # a later event of the same session: the known text keeps its id, a new colliding text gets the next suffix
    later = extract_rules(
        ctx(("user", "Always use AI.md for programming rules.\nAlways use AI.md for release notes.")), known
    )
    assert [r.id for r in later] == ["always-use-ai-md-for-2", "always-use-ai-md-for-3"]
    assert [r.id for r in extract_rules(ctx(("system", "规则：\n- ！！！\n- 禁止删除订单")))] == [
        "禁止删除订单"
    ]


def test_a_phase_instruction_binds_until_the_user_approves_the_plan() -> None:
    open_phase = ctx(
        ("user", "Investigate the export code.\nDo not code yet, before brainstorm"), ("assistant", "Plan: …")
    )
    [rule] = extract_rules(open_phase)
    assert rule.text == "Do not code yet, before brainstorm" and rule.source == "user"
    closed = ctx(
        *open_phase.messages and [(m.role, m.content) for m in open_phase.messages],
        ("user", "implement option A"),
    )
    assert extract_rules(closed) == []
    [phase] = [i for i in extract_instructions(closed) if i.kind == "phase"]
    assert phase.closed_at == 2 and phase.ends is not None and "approves" in phase.ends
    # a rule set carried over from earlier in the session drops the closed phase instruction
    assert open_rules((rule,), closed) == ()
    assert open_rules((rule,), open_phase) == (rule,)
    assert [
        i.kind
        for i in extract_instructions(ctx(("user", "先不要写代码，先出方案。"), ("user", "可以开始实现了")))
    ] == ["phase"]
    assert extract_rules(ctx(("user", "先不要写代码，先出方案。"), ("user", "可以开始实现了"))) == []
