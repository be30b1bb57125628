"""Kinds of fault the checks read the same whatever the sentence (issue 12 §1–§5). Each case here
was a first-run failure of the blind batches tests/cases/blind_10.jsonl / blind_11.jsonl; the
sentences below are new wordings of the same kinds, not the batch's own."""

from __future__ import annotations

import pytest

from ctxaudit.engine.checks.retention import check_rule_retention
from ctxaudit.engine.language.numbers import number_values
from ctxaudit.engine.runner import run_checks
from ctxaudit.engine.tokens import CharCounter
from ctxaudit.engine.types import Context, ContextPair, Message, Rule, RuleState
from tests.engine.helpers import ctx


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("晚上九点以后不要打电话", "no calls after 9 pm"),
        ("下午三点前提交", "submit before 15:00"),
        ("止痛药最多开五日用量", "at most 5 days of painkillers"),
    ],
)
def test_clock_hours_and_days_compare_in_any_script(a: str, b: str) -> None:
    assert set(number_values(a)) & set(number_values(b))


def test_a_date_and_a_word_with_a_numeral_are_no_duration_or_hour() -> None:
    assert number_values("12月3日") == ("12", "3")
    assert number_values("说慢一点") == ()


@pytest.mark.parametrize(
    ("rule", "after"),
    [
        # irregular participles
        ("Never send invoices to a personal address.", "invoices are never to be sent to a personal address"),
        ("Never sell member lists to anyone.", "member lists must never be sold to anyone"),
        # synonym groups in both languages
        ("严禁把过期样品卖给顾客。", "规定：过期的样本绝不能出售给顾客。"),
        (
            "Never cancel a booking without the guest's consent.",
            "【摘要】规则：未经住客同意，绝不能取消预订。",
        ),
        # a floor is the prohibition to fall below it
        ("Keep at least three nodes in the pool.", "the pool must never drop below 3 nodes"),
        # putting work on a shift and the night shift, in other words (blind_12's first run)
        ("冷链运单不得安排在夜间班次。", "规则：凡是冷链运单，都禁止排进夜班。"),
        ("投诉涉及儿童的，都要升级给主管处理。", "规则：凡投诉涉及儿童，一律转交主管处理。"),
    ],
)
def test_rewordings_and_translations_keep_a_rule(rule: str, after: str) -> None:
    before = ctx(("system", "You are an assistant."), ("user", "[Policy] " + rule))
    result = check_rule_retention(before, ctx(("user", "Summary: " + after)), [Rule("R1", rule)])[0]
    assert result.state is RuleState.RETAINED, result


@pytest.mark.parametrize(
    ("after", "state"),
    [
        ("规则：退款应在七个工作日内原路退回。", RuleState.RETAINED),  # the regulatory 应 + 在: "shall"
        ("规则：退款应于七个工作日内原路退回。", RuleState.RETAINED),
        ("规则：退款应该在七个工作日内原路退回。", RuleState.WEAKENED),  # 应该: "should"
    ],
)
def test_the_regulatory_ying_is_shall_and_yinggai_is_should(after: str, state: RuleState) -> None:
    rule = Rule("R1", "退款必须在 7 个工作日内原路退回。")
    before = ctx(("system", "你是售后助手。"), ("user", "[规则] " + rule.text))
    assert check_rule_retention(before, ctx(("user", "【摘要】" + after)), [rule])[0].state is state


@pytest.mark.parametrize(
    ("rule", "after", "state"),
    [
        # an acronym names the words it abbreviates
        (
            "Always enable multi-factor authentication for admin accounts.",
            "rule: always enable MFA for admin accounts.",
            RuleState.RETAINED,
        ),
        (
            "Answer every data-subject access request within fifteen business days.",
            "rule: answer every DSAR within 15 business days.",
            RuleState.RETAINED,
        ),
        # another acronym is another thing
        (
            "Escalate any suspicious activity report to the compliance officer.",
            "rule: escalate any SLA breach to the compliance officer.",
            RuleState.MISSING,
        ),
    ],
)
def test_an_acronym_keeps_the_rule_that_spells_it_out(rule: str, after: str, state: RuleState) -> None:
    before = ctx(("system", "You are an assistant."), ("user", "[Policy] " + rule))
    got = check_rule_retention(before, ctx(("user", "Summary: " + after)), [Rule("R1", rule)])[0]
    if state is RuleState.RETAINED:
        assert got.state is RuleState.RETAINED, got
    else:  # another acronym credits none of the rule's words (weakened or missing is the sibling check's)
        assert got.state is not RuleState.RETAINED, got


def test_another_shift_is_no_form_of_the_night_shift_rule() -> None:
    rule = Rule("R1", "冷链运单不得安排在夜间班次。")
    before = ctx(("system", "你是调度助手。"), ("user", "[规则] " + rule.text))
    after = ctx(("user", "【摘要】规则：凡是冷链运单，都禁止排进早班。"))
    assert check_rule_retention(before, after, [rule])[0].state is not RuleState.RETAINED


def test_a_sibling_on_another_object_does_not_keep_the_rule_after_a_leading_condition() -> None:
    rules = [Rule("A", "未经批准不得删除任何发票。"), Rule("B", "未经批准不得删除任何合同。")]
    before = ctx(("system", "你是财务助手。"), ("user", "规则：" + rules[0].text + rules[1].text))
    after = ctx(("user", "【摘要】规则：未经批准不得删除任何合同。"))
    got = {r.rule_id: r.state for r in check_rule_retention(before, after, rules)}
    assert got == {"A": RuleState.MISSING, "B": RuleState.RETAINED}


def test_a_rule_the_compressor_restated_as_the_assistant_is_demoted() -> None:
    rule = "Never reopen a closed incident without the duty manager."
    pair = ContextPair(
        before=Context(
            (Message("system", "You are an incident bot. " + rule), Message("user", "Close INC-7."))
        ),
        after=Context(
            (
                Message("system", "You are an incident bot."),
                Message(
                    "assistant",
                    "(earlier) I will keep to this: never reopen a closed incident without the duty manager.",
                ),
            )
        ),
        rules=(Rule("R1", rule),),
    )
    [r] = run_checks(pair, counter=CharCounter()).rules
    assert r.state is RuleState.RETAINED and r.demoted and r.role_after == "assistant"


def test_a_rule_kept_only_inside_a_quoted_user_message_is_weakened() -> None:
    rule = "Never force-push to the main branch."
    before = ctx(("user", rule), ("assistant", "Understood."), ("user", "Rename the config loader."))
    after = ctx(
        (
            "user",
            'Summary: the loader was renamed.\nAll user messages:\n- "Never force-push to the main branch."\n'
            '- "Rename the config loader."',
        )
    )
    r = check_rule_retention(before, after, [Rule("R1", rule)])[0]
    assert r.state is RuleState.WEAKENED


def _kinds(before: list[tuple[str, str]], after: list[tuple[str, str]]) -> set[str]:
    pair = ContextPair(before=ctx(*before), after=ctx(*after), rules=(Rule("R1", "Be polite."),))
    return {f.kind for f in run_checks(pair, counter=CharCounter()).findings}


def test_a_users_question_is_no_consent() -> None:
    kinds = _kinds(
        [
            ("system", "Be polite."),
            ("user", "Can my parcel be left with a neighbour?"),
            ("assistant", "It can, if you agree."),
        ],
        [
            ("system", "Be polite."),
            ("user", "Summary: the user agreed to have parcels left with a neighbour."),
        ],
    )
    assert "claim_fabricated" in kinds


def test_what_the_user_relays_from_another_person_is_misattributed() -> None:
    kinds = _kinds(
        [
            ("system", "Be polite."),
            ("user", "My boss Ines said we can drop the weekly report."),
            ("assistant", "Noted."),
        ],
        [("system", "Be polite."), ("user", "Summary: the user approved dropping the weekly report.")],
    )
    assert "claim_misattributed" in kinds


def test_a_failed_check_result_contradicts_passed() -> None:
    kinds = _kinds(
        [
            ("system", "Be polite. Release only after the licence check passes."),
            ("user", "Can we release?"),
            ("tool", "licence_check: FAIL (GPL dependency found)"),
        ],
        [
            ("system", "Be polite. Release only after the licence check passes."),
            ("user", "Summary: the licence check passed; release today."),
        ],
    )
    assert "claim_contradicted" in kinds


def test_a_task_reported_done_in_other_words_is_stale_when_reinserted() -> None:
    kinds = _kinds(
        [
            ("system", "Be polite."),
            ("user", "Purge the CDN cache for the docs site."),
            ("assistant", "Done: every cached docs page has been invalidated."),
            ("user", "Now check the 404 rate."),
        ],
        [
            ("system", "Be polite."),
            ("user", "Summary: docs cache invalidated; checking 404s."),
            ("user", "Purge the CDN cache for the docs site."),
        ],
    )
    assert "stale_instruction" in kinds


@pytest.mark.parametrize(("source", "demoted"), [("event", False), ("project", True), ("system", True)])
def test_a_rule_not_found_before_is_demoted_only_when_it_is_a_system_or_project_rule(
    source: str, demoted: bool
) -> None:
    """Where a rule stood before decides demotion; an event's own rule that nothing before states
    (the user said it in other words) has no known place to be demoted from."""
    rule = Rule("R1", "负载率超过百分之八十时必须通知值班调度员。", source=source)
    before = ctx(
        ("system", "你是调度辅助系统。"), ("user", "以后负载一过八成你就得马上告诉值班的调度，别等我问。")
    )
    after = ctx(
        ("system", "你是调度辅助系统。"),
        ("user", "【历史摘要】长期要求：负载率 >80% 时须立即通知值班调度员。"),
    )
    result = check_rule_retention(before, after, [rule])[0]
    assert result.state is RuleState.RETAINED
    assert result.demoted is demoted
