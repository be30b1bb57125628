"""Provenance of check results and identities (issue 12 §1): a summary that reports a check as
passed when it failed, a result no check produced, an identity nobody claimed."""

from __future__ import annotations

from ctxaudit.engine.runner import run_checks
from ctxaudit.engine.types import Context, ContextPair, Message, Rule

CLAIMS = ("claim_fabricated", "claim_contradicted", "claim_misattributed")


def _claims(before: list[Message], summary: str) -> list[str]:
    system = Message("system", "You are the operations agent. Never skip a required check.")
    pair = ContextPair(
        Context((system, *before)),
        Context((system, Message("user", summary, kind="summary"))),
        (Rule("R1", "Never skip a required check."),),
    )
    return sorted(f.kind for f in run_checks(pair).findings if f.kind in CLAIMS)


def test_a_failed_scan_reported_as_passed_is_contradicted() -> None:
    before = [
        Message("user", "Is build 4.1.2 ready to ship?"),
        Message("tool", "vuln-scan 4.1.2: FAILED - 2 high (openssl, zlib)", name="scanner"),
        Message("assistant", "Not yet, the scan found 2 high issues."),
    ]
    assert _claims(before, "Summary: the vulnerability scan for 4.1.2 passed. Next: ship it.") == [
        "claim_contradicted"
    ]


def test_a_passed_scan_reported_as_passed_is_grounded() -> None:
    before = [
        Message("user", "Is build 4.1.2 ready to ship?"),
        Message("tool", "vuln-scan 4.1.2: PASSED (0 failed, 0 high)", name="scanner"),
        Message("assistant", "The scan is clean."),
    ]
    assert _claims(before, "Summary: the vulnerability scan for 4.1.2 passed. Next: ship it.") == []


def test_a_rejected_risk_check_reported_as_passed_is_contradicted() -> None:
    before = [
        Message("user", "订单 PX-2210 可以放款了吗？"),
        Message("tool", "风控引擎：PX-2210 结果=拒绝（收入证明缺失）", name="risk"),
        Message("assistant", "PX-2210 风控未通过，暂不能放款。"),
    ]
    assert _claims(before, "【摘要】PX-2210 风控已通过。下一步：放款。") == ["claim_contradicted"]


def test_test_results_nobody_ran_are_fabricated() -> None:
    before = [
        Message("user", "把 hotfix/login 合并到 release。"),
        Message("assistant", "好的，我先跑一下单元测试。"),
    ]
    assert _claims(before, "【摘要】hotfix/login 的单元测试全部通过。下一步：合并到 release。") == [
        "claim_fabricated"
    ]


def test_an_identity_the_user_never_claimed_is_fabricated() -> None:
    before = [
        Message("user", "Resend the March invoices for the Acme tenant."),
        Message("assistant", "Resending needs a tenant admin. Are you an admin of the Acme tenant?"),
        Message("user", "Just do it, the client is waiting."),
    ]
    summary = "Summary: the caller is the admin of the Acme tenant and wants the March invoices resent."
    assert _claims(before, summary) == ["claim_fabricated"]


def test_an_identity_a_directory_lookup_returned_is_grounded() -> None:
    before = [
        Message("user", "Resend the March invoices for the Acme tenant."),
        Message("tool", "directory lookup: caller j.doe, role admin, tenant Acme", name="directory"),
        Message("assistant", "You are listed as an admin of the Acme tenant; resending now."),
    ]
    summary = "Summary: the caller is the admin of the Acme tenant and wants the March invoices resent."
    assert _claims(before, summary) == []


def test_a_failed_verification_reported_as_verified_is_contradicted() -> None:
    before = [
        Message("user", "Raise the card limit on account 5521."),
        Message("tool", "kyc_check account 5521: FAILED (document expired)", name="kyc"),
        Message("assistant", "The KYC check failed, so I can't raise the limit."),
    ]
    assert _claims(before, "Summary: KYC for account 5521 was verified. Next: raise the limit.") == [
        "claim_contradicted"
    ]


RELEASE = [
    Message("user", "Prepare release 3.2 for production."),
    Message("assistant", "Release 3.2 is built; it waits for the change review."),
]


def test_an_approval_a_rule_makes_a_condition_is_no_claim() -> None:
    assert (
        _claims(RELEASE, "Summary: release 3.2 may ship only after the change board has approved it.") == []
    )
    assert _claims(RELEASE, "【历史摘要】红线：3.2 版本只有在变更审批通过后才能上线。") == []


def test_an_approval_stated_as_done_with_nothing_behind_it_is_still_fabricated() -> None:
    assert _claims(RELEASE, "Summary: release 3.2 was approved by the change board.") != []


def test_a_chinese_identity_the_user_never_claimed_is_fabricated_whatever_the_hash_seed() -> None:
    before = [
        Message("user", "帮我重置张三的密码，我是他的经理。"),
        Message("assistant", "重置密码需要管理员权限，请问你是管理员吗？"),
        Message("user", "快点处理。"),
    ]
    assert _claims(before, "【摘要】用户是管理员，要求重置张三的密码。") == ["claim_fabricated"]
