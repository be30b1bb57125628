"""Stale instructions listed the ways summaries list them (issue 12 §5): a pending label after a
summary marker or inside a line, a JSON summary's pending list, a phase restated as still
waiting, and an instruction that carries the user's consent in the same sentence."""

from __future__ import annotations

import json

from ctxaudit.engine.runner import run_checks
from ctxaudit.engine.types import Context, ContextPair, Message, Rule

RULES = (Rule("R1", "Never print secrets in the chat."),)


def _stale(before: list[Message], after_summary: str, *extra: Message) -> list[tuple[str, bool]]:
    pair = ContextPair(
        Context((Message("system", "You are the ops agent."), *before)),
        Context(
            (
                Message("system", "You are the ops agent."),
                Message("user", after_summary, kind="summary"),
                *extra,
            )
        ),
        RULES,
    )
    return [
        (f.severity.value, bool(f.data.get("live")))
        for f in run_checks(pair).findings
        if f.kind == "stale_instruction"
    ]


ROTATED = [
    Message("user", "Rotate the API key for the billing service."),
    Message("assistant", "Done: rotated the API key for the billing service and updated the vault entry."),
    Message("user", "Thanks. Next, update the on-call runbook."),
]


def test_a_done_task_listed_after_a_summary_label_and_a_dash_is_stale() -> None:
    summary = "Summary: pending - rotate the API key for the billing service. In progress: update the on-call runbook."
    assert _stale(ROTATED, summary) == [("medium", False)]


def test_a_done_task_in_a_json_summary_pending_list_is_stale() -> None:
    summary = json.dumps(
        {"pending_items": ["Rotate the API key for the billing service", "Update the on-call runbook"]}
    )
    assert _stale(ROTATED, summary) == [("medium", False)]


def test_an_open_task_listed_as_pending_is_not_stale() -> None:
    before = [
        Message("user", "Rotate the API key for the billing service, then update the on-call runbook."),
        Message("assistant", "I will start with the key rotation; the runbook comes after."),
    ]
    summary = "【历史摘要】待办：rotate the API key for the billing service; update the on-call runbook."
    assert _stale(before, summary) == []


def test_a_chinese_pending_label_after_the_summary_marker_is_read() -> None:
    before = [
        Message("user", "把测试环境的缓存全部清空，我同意。"),
        Message("assistant", "已清空测试环境的全部缓存。"),
        Message("user", "好，接下来看一下接口延迟。"),
    ]
    assert _stale(before, "【历史摘要】待办：1. 清空测试环境的全部缓存；2. 查看接口延迟。") == [
        ("medium", False)
    ]


def test_an_instruction_re_inserted_with_its_consent_clause_is_stale_once_done() -> None:
    before = [
        Message("user", "把测试环境的缓存全部清空，我同意。"),
        Message("assistant", "已清空测试环境的全部缓存。"),
        Message("user", "好，接下来看一下接口延迟。"),
    ]
    live = Message("user", "把测试环境的缓存全部清空，我同意。")
    assert _stale(before, "【摘要】缓存已清空。进行中：查看接口延迟。", live) == [("high", True)]


def test_the_same_instruction_only_planned_is_not_stale() -> None:
    before = [
        Message("user", "把测试环境的缓存全部清空，我同意。"),
        Message("assistant", "我准备先统计一下缓存大小，再清空。"),
    ]
    live = Message("user", "把测试环境的缓存全部清空，我同意。")
    assert _stale(before, "【摘要】准备清空缓存。", live) == []


PHASE = [
    Message("user", "Don't deploy anything until I approve the rollout plan."),
    Message("assistant", "Rollout plan: canary 5%, then 50%, then 100%, with automatic rollback."),
]


def test_a_phase_the_user_opened_restated_as_still_waiting_is_stale() -> None:
    before = [*PHASE, Message("user", "Approved, go ahead."), Message("assistant", "Canary at 5% is live.")]
    summary = (
        "Summary: do not deploy anything until the user approves the rollout plan - waiting for approval."
    )
    assert _stale(before, summary) == [("medium", False)]


def test_a_phase_still_closed_restated_as_waiting_is_not_stale() -> None:
    summary = (
        "Summary: do not deploy anything until the user approves the rollout plan - waiting for approval."
    )
    assert _stale(PHASE, summary) == []


def test_a_narrative_next_inside_a_line_opens_no_list() -> None:
    before = [
        Message("user", "Update the README with the new flags."),
        Message("assistant", "Done: updated the README with the new flags."),
    ]
    summary = "Summary: I fixed the parser. Next we updated the README with the new flags."
    assert _stale(before, summary) == []


def _stale_after(before: list[Message], after: list[Message]) -> list[str]:
    pair = ContextPair(
        Context((Message("system", "You are the ops agent."), *before)),
        Context((Message("system", "You are the ops agent."), *after)),
        RULES,
    )
    return [f.evidence[0].quote for f in run_checks(pair).findings if f.kind == "stale_instruction"]


EXPORTED = [
    Message("user", "先说好：员工的身份证号不得出现在任何导出的报表里。"),
    Message("assistant", "好的。"),
    Message("user", "导出一份市场部的在职人员名单。"),
    Message("assistant", "已导出：市场部在职 27 人，字段为工号、姓名、岗位、入职日期。"),
]


def test_a_kept_instruction_with_its_direct_report_kept_after_it_is_answered_not_live() -> None:
    # truncation kept the request and the reply that answered it in its own words
    assert _stale_after(EXPORTED, [EXPORTED[2], EXPORTED[3]]) == []
    # without the reply the request reads as live again
    assert _stale_after(EXPORTED, [EXPORTED[2]]) == ["导出一份市场部的在职人员名单。"]


RECALCULATED = [
    Message("user", "五月考勤已锁定，把五月工资表重算一下。"),
    Message("assistant", "已重算五月工资表：共 312 人，应发合计 4,186,300 元。"),
    Message("user", "把差异原因列出来。"),
]


def test_a_status_clause_before_the_task_is_no_part_of_what_was_done() -> None:
    found = _stale(RECALCULATED, "【历史摘要】五月考勤已锁定。待办：1. 重算五月工资表；2. 列出差异原因。")
    assert found == [("medium", False)]
    assert _stale(RECALCULATED, "【历史摘要】五月工资表已重算。待办：列出差异原因。") == []
