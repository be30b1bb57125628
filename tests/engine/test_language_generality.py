"""Kinds of wording the constraint model reads the same whatever the sentence (issue 12 §2–§3):
the modal scale, negation scope, universal intensifiers, condition clauses, bounds and the
bigram cuts of Chinese words the lexicon does not know. Each case here was a false alarm or a
miss of the blind batch tests/cases/blind_08.jsonl."""

from __future__ import annotations

import pytest

from ctxaudit.engine.checks.retention import check_rule_retention
from ctxaudit.engine.language.constraints import parse
from ctxaudit.engine.language.lexicon import Force
from ctxaudit.engine.language.numbers import number_values
from ctxaudit.engine.types import Rule, RuleState
from tests.engine.helpers import ctx


@pytest.mark.parametrize(
    ("text", "force"),
    [
        ("每次回复都要先称呼客户姓名", Force.OBLIGATION),  # 要 is the everyday "must"
        ("每条 SQL 查询都得加 LIMIT", Force.OBLIGATION),
        ("Every production deploy needs a rollback plan", Force.OBLIGATION),
        ("The full test suite is to be run before each commit", Force.OBLIGATION),
        ("处方药一律不提供具体剂量", Force.PROHIBITION),  # 一律 + 不 = never
        ("必须建议患者咨询医生", Force.OBLIGATION),  # 建议 is the verb 必须 governs
        ("最好必须确认", Force.ADVICE),  # a hedge before the marker still softens it
        ("【历史摘要】用户要给供应商转账 5 万元", Force.NONE),  # a third party's 要 is a want
        ("The customer needs a refund for order 4411", Force.NONE),
    ],
)
def test_the_modal_scale_and_negation_scope(text: str, force: Force) -> None:
    assert max((c.force for c in parse(text)), key=lambda f: f is not Force.NONE) is force


def test_no_exceptions_says_every_case_and_forbids_nothing() -> None:
    [c] = parse("Each call starts with verifying the caller's identity, no exceptions")[:1]
    assert c.force is not Force.PROHIBITION
    assert all(x.force is not Force.PROHIBITION for x in parse("每次都先核实身份，无一例外"))


def test_a_comma_before_a_number_ends_a_clause_unless_it_groups_thousands() -> None:
    clauses = parse("超过 500 元的退款须经主管批准，500 元以内可直接退")
    assert [c.force for c in clauses] == [Force.OBLIGATION, Force.PERMISSION]
    [c] = parse("Never refund above $1,000")
    assert c.numbers == ("1000",)


def test_a_condition_clause_directs_nothing_on_its_own() -> None:
    first = parse("回复客户时，必须使用中文")[0]
    assert first.subordinate and first.force is Force.NONE
    first = parse("When a refund is over $100, always log it")[0]
    assert first.subordinate and first.force is Force.NONE
    assert parse("Before rotating the credentials, announce it in #ops")[0].subordinate


def _state(rule: str, before: str, after: str) -> RuleState:
    [r] = check_rule_retention(
        ctx(("system", "You are an assistant."), ("user", before)),
        ctx(("system", "You are an assistant."), ("user", after)),
        [Rule("R1", rule)],
    )
    return r.state


@pytest.mark.parametrize(
    ("rule", "after", "state"),
    [
        # faithful: other verbs, other numerals, other cuts of the same Chinese words
        (
            "不得修改已经合并的数据库迁移文件。",
            "【摘要】用户约定：已合并的迁移文件一律不能改动。",
            RuleState.RETAINED,
        ),
        (
            "每次给出的代码示例不得超过三十行。",
            "【摘要】用户要求：每个代码示例最多 30 行，不能超过。",
            RuleState.RETAINED,
        ),
        ("所有新函数都要写类型注解。", "【摘要】长期约定：新写的函数一律带类型注解。", RuleState.RETAINED),
        (
            "每次回复都要先称呼客户的姓名。",
            "【摘要】主管要求：此后每条回复开头都要称呼客户姓名。",
            RuleState.RETAINED,
        ),
        (
            "Every production deploy must have a rollback plan.",
            "Rules: each prod deployment needs a rollback plan.",
            RuleState.RETAINED,
        ),
        # weakened: a qualifier picks a part of "all", the modal softens
        ("所有数据库查询都必须带上 LIMIT。", "【摘要】DBA 要求：大查询要带上 LIMIT。", RuleState.WEAKENED),
        (
            "不得修改已经合并的数据库迁移文件。",
            "【摘要】用户希望已合并的迁移文件尽量不要改。",
            RuleState.WEAKENED,
        ),
    ],
)
def test_rewordings_keep_or_weaken_a_rule_by_kind(rule: str, after: str, state: RuleState) -> None:
    assert _state(rule, f"规则 / Rule: {rule}", after) is state


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("within 24 hours", "within one day"),
        ("两小时内处理", "120 分钟内处理"),
        ("abort after ten minutes", "abort after 10 min"),
        ("每周至少一次", "每周至少 1 次"),
    ],
)
def test_durations_compare_in_one_unit(a: str, b: str) -> None:
    assert number_values(a) == number_values(b) != ()


def test_working_days_are_no_fixed_duration() -> None:
    assert number_values("十五个工作日内") == ("15",)


def test_a_passive_negation_forbids() -> None:
    [c, _] = parse("Claims above $50 are not approved, unless there is a receipt")
    assert c.force is Force.PROHIBITION


@pytest.mark.parametrize(
    ("rule", "after"),
    [
        # a label states no polarity: "capped at … never go beyond" is no reversal of "never … more than"
        (
            "Never export more than 1,000 rows in a single query.",
            "Data-protection limit in force: exports are capped at 1000 rows per query; never go beyond that.",
        ),
        (
            "Answer every enterprise ticket within 24 hours.",
            "Enterprise SLA (standing): every enterprise ticket gets an answer within one day.",
        ),
        (
            "Cap each import batch at two hundred rows.",
            "Summary: every import batch is limited to 200 rows at most.",
        ),
    ],
)
def test_bounds_and_service_levels_keep_a_rule(rule: str, after: str) -> None:
    assert _state(rule, rule, after) is RuleState.RETAINED


def test_one_rule_sets_tokens_do_not_leak_into_the_next_matcher() -> None:
    # "any" is a lexicon scope word and, in a Chinese rule, a literal token; the second rule set's
    # matcher must not inherit that token from the first (the base table is shared and cached)
    first = _state(
        "禁止使用 any 类型。",
        "规则：禁止使用 any 类型。",
        "【摘要】用户规则：TypeScript 代码里不许出现 any 类型。",
    )
    assert first is RuleState.RETAINED
    rule = "Escalate any refund above two hundred dollars to a manager."
    assert (
        _state(rule, rule, "Rules: Refunds above $200 must always be escalated to a manager.")
        is RuleState.RETAINED
    )


def test_restrictive_permissions_and_rule_annotations() -> None:
    assert (
        _state(
            "未经本人同意不得公开学生成绩。",
            "规则：未经本人同意不得公开学生成绩。",
            "【摘要】学生的成绩只有学生本人同意后才可以公开。",
        )
        is RuleState.RETAINED
    )
    assert _state(
        "Always run gofmt before committing.",
        "Always run gofmt before committing.",
        "Summary: every commit is preceded by a gofmt run (user's rule).",
    ) in (RuleState.RETAINED, RuleState.WEAKENED)  # a rule again, no longer narrative
    assert (
        _state(
            "Never waive a damage fee without a photo of the bike.",
            "Never waive a damage fee without a photo of the bike.",
            "Summary: no damage fee may be waived unless a photo of the bike exists.",
        )
        is RuleState.RETAINED
    )


@pytest.mark.parametrize(
    ("rule", "after", "state"),
    [
        # a universal statement in the present describes the standing practice
        (
            "Log every refund in the refunds ledger.",
            "Summary: every refund is logged in the refunds ledger.",
            RuleState.RETAINED,
        ),
        ("回复里不要用表情符号。", "【摘要】约定：回复时不使用表情符号。", RuleState.RETAINED),
        # a past retelling with a noun "change" is still the rule retold, not another rule
        (
            "Run the full test suite before every commit.",
            "Summary: Earlier the user asked me to run the test suite before committing the --dry-run change, which I did.",
            RuleState.WEAKENED,
        ),
        # a preference keeps the words, not the force ("keep" is a light verb, no other rule)
        (
            "No new dependencies without asking me first.",
            "Summary: the user prefers to keep dependencies to a minimum.",
            RuleState.WEAKENED,
        ),
        (
            "每天至少巡检两次核心机房。",
            "【摘要】核心机房有空时巡检一下。",
            RuleState.WEAKENED,
        ),  # optional now
    ],
)
def test_statements_retellings_and_optional_wording(rule: str, after: str, state: RuleState) -> None:
    assert _state(rule, rule, after) is state


def test_labels_are_found_as_before_when_only_tried_near_separators() -> None:
    from ctxaudit.engine.language.labels import _LABEL, _label_matches

    texts = [
        "Summary: Rollout guardrail: abort if error rate > 2% persists beyond 10 min.",
        '{"standing_rules": ["no tabs", "use pnpm"], "note": "x"}',
        "之前的对话摘要：已新建迁移文件。项目约定：提交信息使用 Conventional Commits 格式。",
        "Standing rule from Operations - each call starts with verifying identity",
        "x" * 5000 + "rules" + "y" * 5000,  # a label word and no separator
    ]
    for t in texts:
        assert [m.span() for m in _label_matches(t)] == [m.span() for m in _LABEL.finditer(t)]


@pytest.mark.parametrize(
    ("rule", "after", "state"),
    [
        # what must come first conditions the act: "X 前必须 Y" = "Y 完成前，不能 X", not its reversal
        (
            "删除任何表之前必须先做全量备份。",
            "【摘要】红线：全量备份完成前，任何表都不能删除。",
            RuleState.RETAINED,
        ),
        # synonym groups: discuss = talk about, salary = pay; 转交 = 交由
        (
            "Never discuss an employee's salary with another employee.",
            "Summary: rule - under no circumstances talk about one employee's pay with another employee.",
            RuleState.RETAINED,
        ),
    ],
)
def test_preconditions_and_synonym_groups(rule: str, after: str, state: RuleState) -> None:
    assert _state(rule, rule, after) is state
