"""Rewording versus weakening (written before the engine ran on them): another verb for the same
act keeps a rule; one of two joined requirements dropped, or a universal rule kept for one named
instance, weakens it."""

from __future__ import annotations

import pytest

from ctxaudit.engine.types import RuleState
from tests.engine.helpers import one

REWORDED = [
    (
        "Never cancel a confirmed surgery slot without the ward manager's approval.",
        "A confirmed surgery slot is never called off unless the ward manager has approved it.",
    ),
    (
        "Do not forward a tenant's bank details to contractors.",
        "Contractors never receive a tenant's bank details.",
    ),
    pytest.param(
        "每张处方最多开具五天的抗生素。",
        "抗生素每张处方最多开五天。",
        marks=pytest.mark.xfail(
            strict=True, reason="开 alone is not read as 开具 (prescribe): read as missing"
        ),
    ),
    ("所有门店的收银记录都必须保存三年。", "【摘要】规定：门店收银记录一律保存三年。"),
    ("所有门店的收银记录都必须保存三年。", "【摘要】规定：每家门店的收银记录都须保存三年。"),
    (
        "Inspect the brakes of every tram before it leaves the depot.",
        "Every tram gets a brake inspection before leaving the depot; T14 was inspected at 06:10.",
    ),
]


@pytest.mark.parametrize(("rule", "after"), REWORDED)
def test_another_wording_of_the_same_rule_is_retained(rule: str, after: str) -> None:
    r = one(rule, after)
    assert r.state is RuleState.RETAINED, r.lost


WEAKENED = [
    # one of two joined requirements is gone
    (
        "Only release the payroll run after the finance lead approves and the bank file validates.",
        "Release the payroll run only after the bank file validates.",
        "",
    ),
    pytest.param(
        "上线前必须完成代码评审并通过安全扫描。",
        "上线前必须通过安全扫描。",
        "",
        marks=pytest.mark.xfail(
            strict=True,
            reason="安全扫描 is no word the lexicon knows: the kept requirement is not seen, read as missing",
        ),
    ),
    # a universal rule kept for one named instance
    (
        "Inspect the brakes of every tram before it leaves the depot.",
        "Rules: inspect the brakes of tram T14 before it leaves the depot.",
        "scope narrowed: every → T14",
    ),
    (
        "Never open any cash drawer without a supervisor present.",
        "At the Harbour Road store, never open a cash drawer without a supervisor present.",
        "scope narrowed: any → Harbour Road",
    ),
    (
        "所有门店的收银记录都必须保存三年。",
        "【摘要】规定：北京门店的收银记录须保存三年。",
        "范围缩小：所有 → 北京门店",
    ),
]


def test_what_a_department_mentioned_before_is_reported_speech_not_the_rule() -> None:
    """ "理赔部之前提过…要…" retells what someone once said; it binds nothing now (written after
    the change, from the blind case it came from)."""
    r = one(
        "理赔金额超过一万元的案件必须转交人工审核。", "【历史摘要】理赔部之前提过超过一万元的案件要人工审核。"
    )
    assert r.state is not RuleState.RETAINED


def test_another_identifier_is_no_rewording() -> None:
    """Found by the suite (tests/security/test_pii_redaction.py): two addresses redacted to
    different tags must not read as one rule reworded."""
    r = one("Only send reports to [EMAIL#a1b2c3].", "Only send reports to [EMAIL#d4e5f6].")
    assert r.state is not RuleState.RETAINED


_FORCE = "the text after states it without a force the lexicon reads, so nothing carries the rule"
MOVED_BOUNDS = [
    pytest.param(
        "Keep every exported CSV under 2,000 rows.",
        "Exported CSVs may hold up to 5,000 rows.",
        "threshold changed",
        marks=pytest.mark.xfail(strict=True, reason="a permission ('may hold up to') carries no rule"),
    ),
    pytest.param(
        "每张订单的退款不得超过500元。",
        "每张订单的退款一般不超过2000元。",
        "",
        marks=pytest.mark.xfail(strict=True, reason=_FORCE + " (一般 as a hedge)"),
    ),
    pytest.param(
        "Delete chat logs older than 30 days.",
        "Chat logs are deleted once they are older than 60 days.",
        "threshold changed: 30 days → 60 days",
        marks=pytest.mark.xfail(strict=True, reason=_FORCE + " (a present statement without every/all)"),
    ),
    # written after those three failed, the force kept on both sides
    (
        "Never export more than 2,000 rows in one CSV.",
        "Never export more than 5,000 rows in one CSV.",
        "threshold changed: 2,000 → 5,000",
    ),
    (
        "Delete chat logs older than 30 days.",
        "Always delete chat logs older than 60 days.",
        "threshold changed: 30 days → 60 days",
    ),
]


@pytest.mark.parametrize(("rule", "after", "lost"), [*WEAKENED, *MOVED_BOUNDS])
def test_a_lost_requirement_a_narrowed_scope_or_a_moved_bound_weakens(
    rule: str, after: str, lost: str
) -> None:
    """One of two requirements gone, a universal rule kept for one instance, or a cap or window
    loosened (MOVED_BOUNDS, written before that change): the rule weakened, not gone."""
    r = one(rule, after)
    assert r.state is RuleState.WEAKENED, (r.state, r.lost)
    assert not lost or any(lost in item for item in r.lost), r.lost


@pytest.mark.parametrize(
    ("rule", "after"),
    [
        ("Retry a failed payment at most 3 times.", "Retry a failed webhook at most 5 times."),
        ("Never open gate 4 without a supervisor.", "Never open gate 6 without a supervisor."),
    ],
)
def test_another_number_about_another_thing_is_another_rule(rule: str, after: str) -> None:
    assert one(rule, after).state is RuleState.MISSING


def test_a_cap_stated_as_keep_within_is_the_same_prohibition() -> None:
    """ "不得超过8000字" kept as "控制在8000字以内" is the bound turned, not the rule reversed (it read
    'reversed: prohibition → obligation'); with another value, the threshold changed."""
    assert (
        one("每位译员每天的翻译量不得超过8000字。", "每位译员每天的翻译量控制在8000字以内。").state
        is RuleState.RETAINED
    )
    r = one("每位译员每天的翻译量不得超过8000字。", "每位译员每天的翻译量一般控制在1.5万字以内。")
    assert r.state is RuleState.WEAKENED
    assert r.lost == ("阈值改变：8000 → 1.5万 / threshold changed: 8000 → 1.5万",)
