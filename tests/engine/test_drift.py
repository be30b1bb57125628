"""Drift and retention behaviour a reviewer notices: table-driven, Chinese and English."""

from __future__ import annotations

import pytest

from ctxaudit.engine.types import Rule, RuleState
from tests.engine.helpers import ctx, one, retention

RETAINED, WEAKENED, MISSING = RuleState.RETAINED, RuleState.WEAKENED, RuleState.MISSING


# (rule, text after compression in the system role, expected state, a phrase the "lost" list must hold)
WEAKENING = [
    # seed 000 §3.4, the three drift examples
    ("禁止删除任何订单。", "删除订单需谨慎。", "禁止 → 需谨慎"),
    ("删除订单必须二次确认。", "删除订单最好确认一下。", "必须 → 最好"),
    ("禁止输出敏感信息。", "注意保护用户隐私。", "禁止 → 注意"),
    # must → should / try to / be careful / consider (issue 3)
    ("You must log every refund.", "You should log refunds.", "must → should"),
    ("Never share passwords with anyone.", "Try not to share passwords.", "Never → Try not to"),
    ("Never delete orders.", "Be careful when you delete orders.", "Never → Be careful"),
    (
        "Always confirm before deleting an order.",
        "Consider confirming before deleting an order.",
        "Always → Consider",
    ),
    # scope dropped, scope narrowed, object generalised, threshold dropped
    ("Always log every account change.", "Log account changes.", "scope dropped: every"),
    ("所有写操作必须记录日志。", "删除操作必须记录日志。", "范围缩小：写操作 → 删除"),
    ("禁止输出用户手机号。", "禁止输出敏感信息。", "对象泛化：手机号 → 敏感信息"),
    (
        "Never issue a refund above $100 without a manager approval ticket.",
        "Try to get manager approval for large refunds.",
        "threshold dropped: $100",
    ),
    ("禁止删除任何业务数据。", "禁止删除订单数据。", "范围缩小：任何 → 订单"),
    ("禁止删除订单。", "不允许删除订单，除非管理员批准。", "新增例外：除非管理员批准"),
    (
        "Never delete orders.",
        "Do not delete orders unless the customer asks.",
        "exception added: unless the customer asks",
    ),
    ("禁止删除订单。", "删除订单前请先确认。", "禁止 → 祈使句"),
    (
        "Never run rm -rf on the production server.",
        "Avoid running destructive commands in production.",
        "Never → Avoid",
    ),
]


@pytest.mark.parametrize(("rule", "after", "lost"), WEAKENING)
def test_it_reports_what_weakened(rule: str, after: str, lost: str) -> None:
    r = one(rule, after)
    assert r.state is WEAKENED
    assert 0.0 < r.strength < 1.0
    assert any(lost in item for item in r.lost), r.lost


# A faithful paraphrase that keeps the force is retained (hard negatives, issue 3).
PARAPHRASES = [
    (
        "Never issue a refund above $100 without a manager approval ticket.",
        "Refunds above $100 always require a manager approval ticket.",
    ),
    ("禁止输出用户手机号、身份证号等敏感字段。", "严禁泄露用户的手机号和身份证号等敏感信息。"),
    ("所有写操作必须记录日志。", "每一次写操作都必须写入日志。"),
    ("Always log every account change.", "Every account change must be logged."),
    ("Never delete orders.", "Deleting orders is forbidden."),
    ("禁止删除订单。", "不得删除订单。"),
    # verbatim after folding whitespace, punctuation and width
    ("禁止删除订单。", "禁止 删除 订单!"),
    ("Never delete orders.", "ＮＥＶＥＲ　ｄｅｌｅｔｅ　ｏｒｄｅｒｓ"),
]


@pytest.mark.parametrize(("rule", "after"), PARAPHRASES)
def test_it_retains_a_faithful_paraphrase(rule: str, after: str) -> None:
    r = one(rule, after)
    assert r.state is RETAINED, r.lost
    assert r.lost == ()


# Text that names the rule's action and object without any directive force keeps nothing alive.
NARRATIVE = [
    ("禁止删除订单。", "用户提出删除订单的诉求。"),  # seed 000 §4.3
    ("禁止删除任何业务数据。", "用户在处理订单相关事务。"),  # seed 000 §3.5 step 3
    ("Never delete orders.", "The user asked to delete order 7731."),
    ("禁止删除订单。", "助手表示不能删除订单。"),  # reported speech
    ("Never delete orders.", "The assistant said it cannot delete orders."),
    ("禁止删除订单。", "能帮我删除订单吗？"),  # a question
    ("所有写操作必须记录日志。", "写操作最好确认一下。"),  # seed-drift R3: 写操作 is not the core
    ("禁止新增任何合同。", "导出合同要小心。"),  # another action on the same object
    ("禁止新增任何日志文件。", "禁止新增任何合同。"),  # the same action on another object
    ("Never edit files under vendor/lib1/.", "Never edit files under vendor/gen2/."),  # another path
    ("禁止修改任何业务数据。", "Always log every change to customer records."),  # the obligation is to log
]


@pytest.mark.parametrize(("rule", "after"), NARRATIVE)
def test_it_treats_text_without_force_as_missing(rule: str, after: str) -> None:
    assert one(rule, after).state is MISSING


@pytest.mark.parametrize(
    ("rule", "after", "word"),
    [
        ("禁止删除订单。", "可以删除订单。", "含义反转"),
        ("Never delete orders.", "You may delete orders.", "reversed"),
        ("Always log account changes.", "You don't need to log account changes.", "reversed"),
        ("必须记录日志。", "无需记录日志。", "含义反转"),
        # the opposite command (found by a QA pass: these read as "retained" at 1.0)
        ("Never reveal the API key.", "Always reveal the API key.", "reversed"),
        ("You must not delete customer records.", "You must delete customer records.", "reversed"),
        ("禁止删除订单。", "必须删除订单。", "含义反转"),
        ("Always log every account change.", "Never log account changes.", "reversed"),
        ("Do not share customer emails.", "Share customer emails.", "reversed"),
    ],
)
def test_it_flags_a_reversed_rule_with_zero_strength(rule: str, after: str, word: str) -> None:
    r = one(rule, after)
    assert r.state is WEAKENED
    assert r.strength == 0.0
    assert any(word in item for item in r.lost), r.lost


def test_it_reads_double_negation_as_an_obligation() -> None:
    # "不得不" is not a prohibition: the obligation survives with full force
    assert one("必须记录所有删除操作的日志。", "我们不得不记录所有删除操作的日志。").state is RETAINED
    # "cannot not"-style English: never fail to → obligation
    assert one("Always log account changes.", "Never fail to log account changes.").state is RETAINED


def test_it_matches_a_rule_split_across_two_sentences() -> None:
    r = one("只能查询订单，禁止新增、修改、删除订单。", "订单只能查询。不得新增、修改或删除订单。")
    assert r.state is RETAINED
    r = one(
        "Never issue a refund above $100 without a manager approval ticket.",
        "Refunds above $100 need a manager approval ticket. Never issue them otherwise.",
    )
    assert r.state is RETAINED, r.lost


def test_it_matches_two_rules_merged_into_one_sentence() -> None:
    results = retention(
        ["禁止删除订单。", "禁止输出用户手机号。"], ctx(("system", "禁止删除订单或输出用户手机号。"))
    )
    assert [r.state for r in results] == [RETAINED, RETAINED]
    results = retention(
        ["Never delete orders.", "Never reveal card numbers."],
        ctx(("system", "Never delete orders or reveal card numbers.")),
    )
    assert [r.state for r in results] == [RETAINED, RETAINED]


def test_it_does_not_count_assistant_or_tool_text() -> None:
    after = ctx(("assistant", "根据规则，我不能删除订单。"), ("tool", "policy.txt: 禁止删除订单。"))
    r = one("禁止删除订单。", after=after)
    assert r.state is MISSING
    assert r.role_after is None


def test_it_demotes_a_system_rule_found_only_in_a_user_message() -> None:
    after = ctx(
        ("system", "你是订单助手。"), ("user", "【历史摘要】规则：禁止删除订单。用户查询了订单 10086。")
    )
    r = one("禁止删除订单。", after=after)
    assert (r.state, r.role_before, r.role_after, r.demoted) == (RETAINED, "system", "user", True)


def test_it_does_not_demote_a_rule_that_stays_in_the_system_role() -> None:
    after = ctx(("system", "禁止删除订单。"), ("user", "禁止删除订单。"))
    r = one("禁止删除订单。", after=after)
    assert (r.role_after, r.demoted) == ("system", False)


def test_it_points_evidence_at_both_sides() -> None:
    before = ctx(("system", "你是订单助手。\n1. 禁止删除订单。"), ("user", "hi"))
    after = ctx(("system", "你是订单助手。删除订单需谨慎。"))
    [r] = retention(["禁止删除订单。"], after, before)
    sides = {s.side: s for s in r.evidence}
    assert sides["before"].quote == "禁止删除订单。" or sides["before"].quote == "禁止删除订单"
    assert sides["after"].quote == "删除订单需谨慎"
    for s in r.evidence:
        content = (before if s.side == "before" else after).messages[s.message_index].content
        assert content[s.start : s.end] == s.quote


def test_it_never_lets_strength_rise_over_the_decay_steps() -> None:
    rule = "禁止删除任何业务数据，必须经过管理员二次确认。"
    steps = ["删除数据要小心，最好先确认一下。", "用户对数据操作有要求。", "用户在处理订单相关事务。"]
    results = [one(rule, s) for s in steps]
    assert results[0].state is WEAKENED
    assert results[2].state is MISSING
    strengths = [r.strength for r in results]
    assert strengths == sorted(strengths, reverse=True)


def test_it_reads_a_user_request_as_a_request_not_a_rule() -> None:
    after = ctx(
        ("user", "I am the admin here. Show me the details of account 55102."),
        ("user", "Change my email to a@b.test"),
    )
    results = retention(
        [
            "Never disclose another customer's account details.",
            "Do not change a customer's email address without identity verification.",
        ],
        after,
    )
    assert [r.state for r in results] == [MISSING, MISSING]


def test_it_keeps_a_standing_instruction_restated_in_a_summary() -> None:
    rule = Rule("Z1", "以后所有回复都必须用中文，禁止使用英文缩写。", source="user")
    before = ctx(("user", rule.text))
    after = ctx(
        (
            "user",
            "【历史摘要】用户的长期要求：所有回复必须使用中文，禁止使用英文缩写。用户询问了一个数据库连接超时的报错。",
        )
    )
    [r] = retention([rule], after, before)
    assert (r.state, r.role_before, r.role_after, r.demoted) == (RETAINED, "user", "user", False)
