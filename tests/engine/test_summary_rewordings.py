"""Faithful rewordings that summaries write, and what still reads as another rule.

Each case is a rewording a compressor makes in good faith (a hyphenated or abbreviated unit, an
inflected phrase, a synonym verb, a JSON array of constraints, a cap stated as a value); the
expected states were written before the engine was run on them.
"""

from __future__ import annotations

import pytest

from ctxaudit.engine.language.numbers import number_values
from ctxaudit.engine.types import RuleState
from tests.engine.helpers import ctx, retention


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("Keep every query under a 30-second timeout.", ("30s",)),
        ("queries must finish within a 30 s timeout", ("30s",)),
        ("a 5-minute window", ("300s",)),
        ("a 30-sec grace period", ("30s",)),
        ("rows 30-40 of the export", ()),  # a range inside one token, not a duration
        ("灰度发布第一天的比例", ()),  # which day, not how long
        ("第 3 周", ()),
        ("把前一天的数据汇总", ()),
        ("提前一天通知", ("86400s",)),
        ("一天内回复", ("86400s",)),
    ],
)
def test_units_joined_by_a_hyphen_or_abbreviated_and_ordinals(text: str, values: tuple[str, ...]) -> None:
    assert number_values(text) == values


def _summary(rules: list[str], summary: str) -> list[RuleState]:
    before = ctx(("system", "You are the assistant."), ("user", "\n".join(rules)))
    after = ctx(("system", "You are the assistant."), ("user", summary))
    return [r.state for r in retention(rules, after, before)]


@pytest.mark.parametrize(
    ("rules", "summary", "states"),
    [
        (
            ["Keep every query under a 30-second timeout."],
            "Summary. Constraint: queries must finish within a 30 s timeout.",
            [RuleState.RETAINED],
        ),
        (
            ["Roll back the release if the success rate drops below 98%."],
            "Summary: standing rule — roll back the release whenever the success rate falls under 98%.",
            [RuleState.RETAINED],
        ),
        (
            ["所有安全事件必须在 2 小时内上报安全团队。"],
            "【历史摘要】用户要求：任何安全事件都须在两小时之内报告安全团队。",
            [RuleState.RETAINED],
        ),
        (
            ["Report every data breach to the DPO within 72 hours."],
            "Summary: the user's standing rule is that any data breach must be notified to the DPO within 72 hours.",
            [RuleState.RETAINED],
        ),
        (
            ["生产数据库禁止执行 DROP 语句。", "每次发布前必须通知测试组。"],
            '{"type": "摘要", "约束": ["生产库禁止执行 DROP 语句", "发布前必须先通知测试组"], "进展": "灰度已完成"}',
            [RuleState.RETAINED, RuleState.RETAINED],
        ),
        (
            ["单笔退款金额不得超过 500 元。"],
            "【历史摘要】用户规定：单笔退款金额上限为 500 元。",
            [RuleState.RETAINED],
        ),
        (
            ["Never export more than 1000 rows at a time."],
            "Summary: exports are capped at 1000 rows at a time.",
            [RuleState.RETAINED],
        ),
        (
            ["灰度发布第一天的比例不得超过 5%。"],
            "【历史摘要】用户规定：首日灰度放量上限为 5%。",
            [RuleState.RETAINED],
        ),
        # an act named by its noun: shipment, deployments, deletion
        (
            ["Never ship lithium batteries by air."],
            "Summary: per the user's standing rule, air freight is off-limits for any lithium battery shipment.",
            [RuleState.RETAINED],
        ),
        (
            ["Never deploy on Fridays."],
            "Summary. Standing rule: no deployments on Fridays.",
            [RuleState.RETAINED],
        ),
        (
            ["Do not delete customer records."],
            "Summary: deletion of customer records is forbidden.",
            [RuleState.RETAINED],
        ),
        # Chinese rewordings: 只 + a verb restricts, 改约 is 改期, 未经…的 names the thing governed,
        # 注明 is 标注, 立即/马上 say how soon, 八成 is 80%
        # a one-character verb (发 for 发送) names no concept: the rest of the rule holds it
        (
            ["对外邮件必须用公司邮箱发送。"],
            "【历史摘要】约定：对外邮件只用公司邮箱发。",
            [RuleState.RETAINED],
        ),
        pytest.param(
            ["预约改期必须提前两天通知。"],
            "【历史摘要】用户要求：改约至少提前两天通知。",
            [RuleState.RETAINED],
            marks=pytest.mark.xfail(
                strict=True,
                reason="a bare imperative after 用户要求： in a user-role summary reads as a one-off request",
            ),
        ),
        (["未经审核的稿件不得发布。"], "【历史摘要】约定：稿件未审核不能发布。", [RuleState.RETAINED]),
        (["所有引用必须标注出处。"], "【历史摘要】约定：引用都要注明出处。", [RuleState.RETAINED]),
        (
            ["发现漏洞必须立即上报安全组。"],
            "【历史摘要】用户要求：发现漏洞须马上报告安全组。",
            [RuleState.RETAINED],
        ),
        (
            ["磁盘使用率超过八成必须告警。"],
            "【历史摘要】约定：磁盘使用率超过 80% 须告警。",
            [RuleState.RETAINED],
        ),
        # 儿童 = 孩子 = minor; 规矩 labels rules
        (["每个教练最多带六个孩子。"], "【历史摘要】约定：一名教练所带儿童不超过6人。", [RuleState.RETAINED]),
        (["废液桶满八成必须更换。"], "【历史摘要】实验室规矩：废液桶装到80%即更换。", [RuleState.RETAINED]),
        (
            ["Never let a minor board without a guardian."],
            "Summary: standing rule — children may not board without a guardian.",
            [RuleState.RETAINED],
        ),
    ],
)
def test_faithful_rewordings_keep_the_rule(rules: list[str], summary: str, states: list[RuleState]) -> None:
    assert _summary(rules, summary) == states


def test_a_permission_for_something_else_does_not_turn_a_bound_round() -> None:
    # "may operate the canary console" permits nothing about the canary's share: the rule is gone,
    # not reversed
    [r] = retention(["灰度比例不得超过 10%。"], ctx(("system", "你是发布助手，可以操作灰度平台。")))
    assert r.state is RuleState.MISSING


def test_a_permission_for_the_rules_own_act_still_reverses_it() -> None:
    [r] = retention(["禁止删除订单。"], ctx(("system", "你是订单助手。可以删除订单。")))
    assert r.state is RuleState.WEAKENED
    assert r.strength == 0.0
    assert any("反转" in item or "reversed" in item for item in r.lost)


def test_a_word_with_two_senses_is_named_once_when_dropped() -> None:
    # 发布 names both "deploy" and "reveal"; losing it is one loss, listed once
    [r] = retention(["禁止在周五发布新版本。"], ctx(("system", "周五注意新版本。")))
    assert r.state is RuleState.WEAKENED
    assert "内容丢失：发布 / dropped: 发布" in r.lost


def test_what_the_speaker_can_do_permits_nothing() -> None:
    # "so I can send the card" is the user's own ability, no permission to reveal the address
    before = ctx(("system", "Never reveal a patient's home address."))
    after = ctx(("user", "Tell me where she lives so I can send the card."))
    [r] = retention(["Never reveal a patient's home address."], after, before)
    assert r.state is RuleState.MISSING
    granted = ctx(("system", "You can reveal a patient's home address to couriers."))
    [r] = retention(["Never reveal a patient's home address."], granted, before)
    assert r.state is RuleState.WEAKENED and r.strength == 0.0
