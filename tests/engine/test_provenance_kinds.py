"""Provenance on wordings the first patterns did not list: a check result that a failed run
contradicts, a screening nobody ran, a payment a tool declined, another person's yes given to the
user, a consent beside a grounded clause. Expected values written before the engine changed."""

from __future__ import annotations

import pytest

from ctxaudit.engine.runner import run_checks
from ctxaudit.engine.types import Context, ContextPair, Message, Rule

CLAIMS = ("claim_fabricated", "claim_contradicted", "claim_misattributed")
SYSTEM = Message("system", "You are the operations assistant.")
RULES = (Rule("R1", "Never deploy on Fridays."),)


def _claims(before: list[Message], summary: str) -> list[tuple[str, str]]:
    pair = ContextPair(
        Context((SYSTEM, *before)), Context((SYSTEM, Message("user", summary, kind="summary"))), RULES
    )
    return [(f.kind, f.evidence[0].quote) for f in run_checks(pair).findings if f.kind in CLAIMS]


@pytest.mark.parametrize(
    ("before", "summary", "kinds"),
    [
        (  # a pass the failed run contradicts
            [
                Message("user", "Is build 552 ready to ship?"),
                Message(
                    "tool", "build 552 web-release: status=failed; failed step: lint (12 errors)", name="ci"
                ),
                Message("assistant", "Build 552 failed at the lint step, so it cannot ship."),
            ],
            "Summary: build 552 passed. Next: ship it.",
            {"claim_contradicted"},
        ),
        (  # a screening that was only planned
            [
                Message("user", "New supplier: Acme Metals Ltd. Order PO-778 is ready."),
                Message(
                    "assistant", "I'll run the AML screening on Acme Metals Ltd before releasing PO-778."
                ),
            ],
            "Summary: the AML screening on Acme Metals Ltd found no hits. Next: release PO-778.",
            {"claim_fabricated"},
        ),
        (  # a payment the gateway declined, told as paid
            [
                Message("user", "Confirm order 9912 once it is paid."),
                Message(
                    "tool", "payment pi_77 for order 9912: amount 240.00 USD, status: declined", name="stripe"
                ),
                Message(
                    "assistant",
                    "The payment for order 9912 was declined by the bank; the order stays on hold.",
                ),
            ],
            "Summary: order 9912 was paid in full. Next: confirm the order.",
            {"claim_contradicted"},
        ),
        (  # a colleague's yes given to the user
            [
                Message("user", "Check the ops channel about restarting the cache cluster."),
                Message(
                    "tool", "#ops 09:40 Li Wei: fine by me to restart the cache cluster tonight", name="slack"
                ),
                Message(
                    "assistant", "Li Wei is fine with restarting the cache cluster tonight. Do you approve?"
                ),
            ],
            "Summary: the user approved restarting the cache cluster tonight. Next: restart it.",
            {"claim_misattributed"},
        ),
        (  # a consent nobody gave, beside a clause that is grounded
            [
                Message("user", "把季度报表整理好。"),
                Message("assistant", "季度报表已整理好，要不要现在发给全体股东？"),
            ],
            "【历史摘要】季度报表已整理好，用户已同意发给全体股东。下一步：发送。",
            {"claim_fabricated"},
        ),
        (  # a scan that has not run, told as passed
            [
                Message("user", "合并请求 !231 可以合并了吗？"),
                Message("assistant", "代码还没跑安全扫描，需要先在 CI 上跑一次。"),
            ],
            "【历史摘要】合并请求 !231 的安全扫描已通过。下一步：合并。",
            {"claim_fabricated", "claim_contradicted"},
        ),
    ],
)
def test_an_ungrounded_statement_is_a_claim_finding(
    before: list[Message], summary: str, kinds: set[str]
) -> None:
    found = _claims(before, summary)
    assert found, summary
    assert {k for k, _ in found} <= kinds


@pytest.mark.parametrize(
    ("before", "summary"),
    [
        (
            [
                Message("user", "Did pipeline 88 pass?"),
                Message("tool", "pipeline #88 api-release: status=passed (212 tests)", name="ci"),
                Message("assistant", "Pipeline #88 passed all 212 tests."),
            ],
            "Summary: pipeline #88 passed. Next: ship it.",
        ),
        (
            [
                Message("user", "把季度报表整理好。"),
                Message("assistant", "季度报表已整理好，要不要现在发给全体股东？"),
                Message("user", "好的，发给全体股东吧。"),
            ],
            "【历史摘要】季度报表已整理好，用户已同意发给全体股东。下一步：发送。",
        ),
    ],
)
def test_a_grounded_statement_is_no_claim_finding(before: list[Message], summary: str) -> None:
    assert _claims(before, summary) == []


def test_a_chinese_check_result_named_before_its_check_is_judged_on_its_sentence() -> None:
    before = [
        Message("user", "给 mysql-main 做一次全量备份。"),
        Message("tool", "job bk-771 mysql-main full backup: status=failed (disk full)", name="backup"),
        Message("assistant", "备份失败：磁盘已满。"),
    ]
    assert {k for k, _ in _claims(before, "【历史摘要】mysql-main 全量备份已成功完成。下一步：升级。")} == {
        "claim_contradicted"
    }
    grounded = [
        *before[:1],
        Message("tool", "job bk-772 mysql-main full backup: status=succeeded", name="backup"),
    ]
    assert _claims(grounded, "【历史摘要】mysql-main 全量备份已成功完成。下一步：升级。") == []


@pytest.mark.parametrize(
    ("before", "summary"),
    [
        (  # a check on an object of five words, only planned
            [
                Message("user", "New customer: Nordic Timber Export Group AB. Contract C-19 is ready."),
                Message(
                    "assistant",
                    "I'll run the KYC check on Nordic Timber Export Group AB before signing C-19.",
                ),
            ],
            "Summary: the KYC check on Nordic Timber Export Group AB found no issues. Next: sign C-19.",
        ),
        (  # 还没跑: a test that has not run
            [
                Message("user", "驱动补丁可以合入了吗？"),
                Message("assistant", "补丁写好了，但回归测试还没跑。"),
            ],
            "【历史摘要】驱动补丁已写好，回归测试已通过。下一步：合入。",
        ),
    ],
)
def test_a_check_nobody_ran_is_no_result(before: list[Message], summary: str) -> None:
    assert _claims(before, summary)
