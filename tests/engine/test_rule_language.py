"""The language pieces behind rules in every shape (issue 12 §2–§4): numbers in any script, rule
labels, quoted material; and the analysis a pair gets once for every check (issue 11)."""

from __future__ import annotations

import pytest

from ctxaudit.engine.analysis import analyse
from ctxaudit.engine.checks.retention import check_retention, check_rule_retention
from ctxaudit.engine.language.labels import label_regions
from ctxaudit.engine.language.numbers import number_values
from ctxaudit.engine.language.quotes import quoted_regions
from ctxaudit.engine.types import ContextPair, Rule, RuleState
from tests.engine.helpers import ctx


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("退款必须在十五个工作日内完成", ("15",)),
        ("覆盖率达到百分之八十以上", ("80%",)),
        ("Escalate any refund above two hundred dollars", ("200",)),
        ("above $1,000", ("1000",)),
        ("单笔转账超过两万元", ("20000",)),
        ("单笔转账超过5万元", ("50000",)),
        ("no calls after 8 pm", ("20",)),
        ("不要在 20:00 之后打电话", ("20",)),
        ("晚上8点以后", ("20",)),
        # half past: 点半 is :30 (the rule's "12:30" is the summary's "十二点半")
        ("午睡从十二点半开始", ("12:30",)),
        ("下午两点半以后", ("14:30",)),
        ("8点半准时开会", ("8:30",)),
        ("千万不要删除，十分重要", ()),  # words written with numerals
        ("一律使用中文，统一格式", ()),
        ("read ai.md and 0012_add_status.py, v2", ()),  # identifiers are not numbers
        ("no one may push", ()),
        # decimals in words: "point" and its digit words
        ("pause if the crash-free rate drops below ninety-nine point five percent", ("99.5%",)),
        ("keep the ratio above zero point seven five", ("0.75",)),
        ("at one point in time", ()),
    ],
)
def test_numbers_compare_as_values_in_any_script(text: str, values: tuple[str, ...]) -> None:
    assert number_values(text) == values


def test_rule_labels_govern_what_follows_them() -> None:
    text = "之前的对话摘要：已新建迁移文件。项目约定：提交信息使用 Conventional Commits 格式。下一步：部署。"
    assert [text[a:b] for a, b, _ in label_regions(text)] == ["提交信息使用 Conventional Commits 格式"]
    listed = "You are a config assistant.\nConventions:\n- No tabs in YAML files.\n- Two-space indents.\n\nHistory: none."
    [(a, b, _)] = label_regions(listed)
    assert (
        "No tabs in YAML files." in listed[a:b]
        and "Two-space" in listed[a:b]
        and "History" not in listed[a:b]
    )
    assert label_regions("用户要求：修复登录 bug。") == []  # a request, not a rule label
    as_json = '{"standing_rules": ["Every reply starts with the ticket ID."], "done": ["x"]}'
    [(a, b, _)] = label_regions(as_json)
    assert as_json[a:b].startswith('["Every reply') and "done" not in as_json[a:b]


def test_quoted_old_messages_and_quoted_questions_are_quoted_material() -> None:
    summary = (
        "1. Current work: fixing the login bug.\n2. All user messages:\n"
        '   - "Never push to main. Fix the login bug."\n3. Pending: none.'
    )
    [(a, b)] = quoted_regions(summary)
    assert "Never push to main" in summary[a:b] and "Pending" not in summary[a:b]
    asked = "【摘要】用户问过“提交信息必须用英文写吗？”，助手已解释。"
    assert [asked[a:b] for a, b in quoted_regions(asked)] == ["“提交信息必须用英文写吗？”"]
    assert quoted_regions("Rules: reply with “OK” when done.") == []


def test_a_rule_that_survives_only_in_the_quoted_list_is_not_retained() -> None:
    rule = Rule("R1", "Never push to main.")
    before = ctx(("user", "Never push to main. Fix the login bug."))
    quoted = ctx(
        (
            "user",
            'Summary:\n1. All user messages:\n   - "Never push to main. Fix the login bug."\n2. Pending: none.',
        )
    )
    stated = ctx(("user", "Summary: standing rule — never push to main. Pending: none."))
    # not retained: the copy is a record of what was said, no instruction. Weakened, not missing
    # (issue 12 §4: a rule that lost its force is missing only when nothing of it remains), with
    # the quote as evidence of where it went
    got = check_rule_retention(before, quoted, [rule])[0]
    assert got.state is RuleState.WEAKENED and got.strength <= 0.2
    assert any("quote" in item for item in got.lost)
    assert check_rule_retention(before, stated, [rule])[0].state is RuleState.RETAINED


def test_retention_reads_the_pair_through_the_shared_analysis() -> None:
    rules = (Rule("R1", "禁止删除任何订单。"), Rule("R2", "Always log every account change."))
    pair = ContextPair(
        ctx(("system", "规则：\n1. 禁止删除任何订单。\n2. Always log every account change.")),
        ctx(("system", "规则：\n1. 删除订单需谨慎。"), ("user", "Summary: the user asked about order 7.")),
        rules,
    )
    a = analyse(pair)
    first = check_retention(a)
    index = a.memo("retention", lambda: None)
    assert index is not None  # built once and kept for later checks
    assert check_retention(a) == first  # a second check reuses it
    assert first == check_rule_retention(pair.before, pair.after, rules)
    assert [r.state for r in first] == [RuleState.WEAKENED, RuleState.MISSING]
    assert (
        a.folded("after", 0) == "规则:\n1. 删除订单需谨慎。"
    )  # width folded, length kept and a.lowered("after", 1).startswith("summary:")
