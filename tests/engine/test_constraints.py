"""The constraint model reads force, scope, condition and thresholds the way a reviewer would."""

from __future__ import annotations

import pytest

from ctxaudit.engine.language.constraints import fold, parse
from ctxaudit.engine.language.lexicon import Force


def _force(text: str) -> Force:
    forced = [c.force for c in parse(text) if c.force is not Force.NONE]
    return forced[0] if forced else Force.NONE


@pytest.mark.parametrize(
    ("text", "force"),
    [
        ("禁止删除订单", Force.PROHIBITION),
        ("不得输出手机号", Force.PROHIBITION),
        ("不得不记录日志", Force.OBLIGATION),  # double negation: not a prohibition
        ("不能不确认", Force.OBLIGATION),
        ("无需记录日志", Force.PERMISSION),
        ("可以删除订单", Force.PERMISSION),
        ("不可以删除订单", Force.PROHIBITION),
        ("最好不要删除订单", Force.ADVICE),  # a hedge before a prohibition
        ("删除订单需谨慎", Force.CAUTION),
        ("只能查询订单", Force.RESTRICTION),
        ("You must not delete orders.", Force.PROHIBITION),
        ("Never fail to log account changes.", Force.OBLIGATION),
        ("You don't need to log refunds.", Force.PERMISSION),
        ("You may only read orders.", Force.RESTRICTION),
        ("Try not to share passwords.", Force.ADVICE),
        ("Log account changes.", Force.IMPERATIVE),
        ("请记录所有写操作的日志", Force.IMPERATIVE),
        ("Deleted the file.", Force.NONE),
        ("删除了订单", Force.NONE),
        ("这个订单能帮我删掉吗？", Force.NONE),  # a question
        ("Can you delete this order?", Force.NONE),
        ("助手表示不能删除订单", Force.NONE),  # reported speech
        ("The assistant said it cannot delete orders.", Force.NONE),
        ("所有回复都必须用中文", Force.OBLIGATION),  # 回复 here is a noun, not "replied"
        ("用户说“已授权”不能替代管理员二次确认", Force.PROHIBITION),  # the quote is reported, the rule is not
        ("用户可能会删除订单", Force.NONE),  # 可能 is not 可
        ("用户需要查询订单", Force.NONE),  # a need of the user, not an obligation
    ],
)
def test_it_reads_the_force_of_a_clause(text: str, force: Force) -> None:
    assert _force(text) is force


def test_it_reads_the_governed_part_scope_condition_and_threshold() -> None:
    [c] = parse("所有写操作必须记录日志。")
    assert c.core == {"log"} and set(c.concepts) == {"write", "log"} and c.scope == ("所有",)
    [c] = parse("Never issue a refund above $100 without a manager approval ticket.")
    assert c.force is Force.PROHIBITION
    # the bound ("above") is governed too: "不得超过三十行" = "最多 30 行" (lexicon "exceed"/"limit")
    assert c.core == {"refund", "exceed"} and c.condition == {"admin", "confirm", "ticket"}
    assert c.condition_text == "without a manager approval ticket" and c.numbers == (
        "100",
    )  # numbers compare as values


def test_it_splits_a_rule_into_clauses_and_lets_an_enumeration_inherit_force() -> None:
    clauses = parse("只能查询订单，禁止新增、修改、删除订单。")
    assert [c.force for c in clauses] == [Force.RESTRICTION, Force.PROHIBITION]
    clauses = parse("Never reveal card numbers, phone numbers, or passwords.")
    assert all(c.force is Force.PROHIBITION for c in clauses)
    assert any(c.inherited for c in clauses)


def test_it_folds_width_and_case_without_moving_offsets() -> None:
    text = "禁止ＤＥＬＥＴＥ，Orders！"
    assert fold(text) == "禁止delete,orders!"
    assert len(fold(text)) == len(text)
