"""run_checks: findings, severities, messages and evidence a reviewer can follow."""

from __future__ import annotations

from ctxaudit.engine import ContextPair, Rule, Severity, run_checks
from ctxaudit.engine.runner import RULE_FINDING_KINDS
from ctxaudit.engine.tokens import CharCounter
from tests.engine.helpers import SYSTEM_ZH, ctx


def _run(before, after, rules=()):
    return run_checks(ContextPair(before, after, tuple(rules)), counter=CharCounter())


def _rule_findings(report):
    """The retention findings (other checks — hierarchy hygiene, claims — add their own)."""
    return [f for f in report.findings if f.kind in RULE_FINDING_KINDS]


def test_it_passes_when_the_system_block_is_kept_verbatim() -> None:
    before = ctx(("system", SYSTEM_ZH), ("user", "帮我查订单 10086 的状态"))
    after = ctx(("system", SYSTEM_ZH), ("user", "【历史摘要】用户查询了订单 10086。"))
    report = _run(before, after)
    assert report.verdict == "pass"
    assert len(report.rules) == 4  # extracted from the system message
    assert _rule_findings(report) == []


def test_it_reports_missing_weakened_and_demoted_rules_with_evidence_on_both_sides() -> None:
    before = ctx(
        ("system", "你是订单助手。\n1. 禁止删除订单。\n2. 所有写操作必须记录日志。\n3. 禁止输出用户手机号。")
    )
    after = ctx(
        ("system", "你是订单助手。删除订单需谨慎。"), ("user", "【历史摘要】规则：禁止输出用户手机号。")
    )
    rules = [
        Rule("R1", "禁止删除订单。", Severity.CRITICAL),
        Rule("R2", "所有写操作必须记录日志。", Severity.CRITICAL),
        Rule("R3", "禁止输出用户手机号。"),
    ]
    report = _run(before, after, rules)
    kinds = {(f.kind, f.rule_id): f for f in _rule_findings(report)}
    assert set(kinds) == {("rule_weakened", "R1"), ("rule_missing", "R2"), ("rule_demoted", "R3")}
    assert report.verdict == "fail"
    assert kinds[("rule_missing", "R2")].severity is Severity.CRITICAL  # a missing critical rule is critical
    assert kinds[("rule_weakened", "R1")].severity is Severity.CRITICAL  # strength < 0.5
    assert kinds[("rule_demoted", "R3")].severity is Severity.MEDIUM
    weakened = kinds[("rule_weakened", "R1")]
    assert weakened.message.startswith("规则 R1 在压缩后被弱化")
    assert "禁止 → 需谨慎" in weakened.message and "Rule R1 weakened" in weakened.message
    assert {s.side for s in weakened.evidence} == {"before", "after"}
    for f in _rule_findings(report):
        for s in f.evidence:
            content = (before if s.side == "before" else after).messages[s.message_index].content
            assert content[s.start : s.end] == s.quote
    assert [s.quote for s in weakened.evidence if s.side == "after"] == ["删除订单需谨慎"]
    assert "被降级" in kinds[("rule_demoted", "R3")].message


def test_it_writes_english_messages_for_english_rules() -> None:
    before = ctx(("system", "Rules:\n1. Always log every account change."))
    after = ctx(("system", "Log account changes."))
    [finding] = _rule_findings(_run(before, after))
    assert finding.message == (
        "Rule always-log-every-account-change weakened after compression (strength 0.68): force lowered: Always → plain instruction "
        "(obligation → imperative); scope dropped: every"
    )
    assert finding.severity is Severity.MEDIUM  # strength ≥ 0.5: one step below the rule's high
    assert finding.data["lost"] == [
        "force lowered: Always → plain instruction (obligation → imperative)",
        "scope dropped: every",
    ]


def test_it_names_the_closest_text_of_a_missing_rule() -> None:
    before = ctx(("system", "禁止删除订单。"))
    after = ctx(("system", "你是订单助手。用户提出删除订单的诉求。"))
    [finding] = _rule_findings(_run(before, after, [Rule("R1", "禁止删除订单。")]))
    assert finding.kind == "rule_missing"
    assert "最接近的文字“用户提出删除订单的诉求”没有约束力" in finding.message
    assert [s.quote for s in finding.evidence if s.side == "after"] == ["用户提出删除订单的诉求"]


def test_it_counts_tokens_per_role() -> None:
    report = _run(ctx(("system", "x" * 40), ("user", "y" * 8)), ctx(("system", "x" * 40)))
    assert report.tokens is not None
    assert (report.tokens.before, report.tokens.after) == (12, 10)
    assert report.tokens.before_by_role == {"system": 10, "user": 2}


def test_it_copes_with_empty_messages_and_empty_rule_text() -> None:
    before = ctx(("system", ""), ("user", ""), ("system", "禁止删除订单。"))
    after = ctx(("system", ""), ("user", ""))
    report = _run(before, after, [Rule("R1", ""), Rule("R2", "禁止删除订单。")])
    assert [r.state.value for r in report.rules] == ["missing", "missing"]
    assert report.verdict == "fail"


def test_it_bounds_findings_built_from_a_one_megabyte_line() -> None:
    from ctxaudit.engine import ContextPair, Rule, run_checks
    from ctxaudit.engine.formats import parse_context
    from ctxaudit.engine.runner import MAX_MESSAGE_CHARS, MAX_QUOTE_CHARS
    from ctxaudit.engine.tokens import CharCounter

    huge = "x" * 1_000_000
    before = parse_context([{"role": "system", "content": "You are a helper.\nNever delete orders."}])
    after = parse_context([{"role": "system", "content": "You are a helper. " + huge}])
    report = run_checks(
        ContextPair(before, after, (Rule("R1", "Never delete orders."),)), counter=CharCounter()
    )
    assert report.findings
    for f in report.findings:
        assert len(f.message) <= MAX_MESSAGE_CHARS
        for s in f.evidence:
            assert len(s.quote) <= MAX_QUOTE_CHARS
            content = (before if s.side == "before" else after).messages[s.message_index].content
            assert content[s.start : s.end] == s.quote
