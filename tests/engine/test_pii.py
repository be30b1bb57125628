from __future__ import annotations

from datetime import date

import pytest

from ctxaudit.engine.pii import cn_id_checksum_ok, find_pii, is_cn_id, luhn_ok, redact, scrub_unstorable


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("请联系 alice.wang+orders@example.com.cn 处理", "请联系 [EMAIL] 处理"),
        ("手机号13812345678请保密", "手机号[PHONE]请保密"),
        ("电话 +86 138-1234-5678", "电话 [PHONE]"),
        ("call 0086 13912345678 now", "call [PHONE] now"),
        ("座机 010-62345678", "座机 [PHONE]"),
        ("office (212) 555-0100 or +44 20 7946 0958", "office [PHONE] or [PHONE]"),
        ("身份证号11010519491231002X。", "身份证号[CN_ID]。"),
        ("id 440524198001010013 ok", "id [CN_ID] ok"),
        ("card 4111 1111 1111 1111 exp 12/30", "card [CARD] exp 12/30"),
        ("卡号6222021234567890128", "卡号[CARD]"),
        ("amex 378282246310005", "amex [CARD]"),
        ("OPENAI_API_KEY=sk-proj-Abcdefghijklmnop1234567890", "OPENAI_API_KEY=[SECRET]"),
        ("anthropic sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx", "anthropic [SECRET]"),
        ("aws AKIAIOSFODNN7EXAMPLE here", "aws [SECRET] here"),
        ("token ghp_0123456789abcdefghijABCDEFGHIJ012345", "token [SECRET]"),
        ("slack xoxb-123456789012-abcdefABCDEF", "slack [SECRET]"),
        ("Authorization: Bearer abc.def-1234567890XYZ", "Authorization: Bearer [SECRET]"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w", "jwt [SECRET]"),
        ('{"password": "hunter2hunter2"}', '{"password": "[SECRET]"}'),
    ],
)
def test_it_redacts_each_kind(text: str, expected: str) -> None:
    assert redact(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "订单 10086 金额 199.00 元，下单时间 2024-05-01 12:30:45",
        "order 1234567890 shipped",  # 10 digits, no separators: an id, not a phone
        "version 3.11.4, build 20240501",
        "禁止输出用户手机号、身份证号等敏感字段。",
        "11010519491231002Y is not an id",
        "110105194913310027",  # month 13
        "990105194912310021",  # province 99 does not exist
        "4111 1111 1111 1112",  # Luhn fails
    ],
)
def test_it_leaves_ordinary_text_alone(text: str) -> None:
    assert redact(text) == (text, {})


def test_it_counts_by_kind() -> None:
    _, counts = redact("a@b.io c@d.io 13812345678")
    assert counts == {"email": 2, "phone": 1}


def test_it_prefers_the_id_over_a_card_for_18_digits() -> None:
    assert [m.kind for m in find_pii("11010519491231002X")] == ["cn_id"]


def test_it_checks_resident_ids() -> None:
    assert cn_id_checksum_ok("11010519491231002X")
    assert is_cn_id("11010519491231002X")
    assert not is_cn_id("11010520491231002X", today=date(2026, 1, 1))  # born in the future
    # strict region: 999999 is no county, 110105 is (Chaoyang, Beijing)
    assert is_cn_id("11010519491231002X", strict_region=True)


def test_it_runs_luhn() -> None:
    assert luhn_ok("4111111111111111")
    assert not luhn_ok("4111111111111112")


def test_it_scrubs_nul_and_lone_surrogates() -> None:
    assert scrub_unstorable("a\x00b\ud800c") == "a\ufffdb\ufffdc"
    assert scrub_unstorable("emoji 😀 stays") == "emoji 😀 stays"


def test_it_tags_placeholders_per_value_with_a_key() -> None:
    from ctxaudit.engine.pii import redact

    text, counts = redact("mail a@x.com, then b@y.org, then A@X.com", key=b"k1")
    tags = [t for t in text.split() if t.startswith("[EMAIL#")]
    assert counts == {"email": 3}
    assert tags[0].rstrip(",") == tags[2] != tags[1].rstrip(",")
    assert redact("a@x.com", key=b"k2")[0] != redact("a@x.com", key=b"k1")[0]
    assert redact("a@x.com")[0] == "[EMAIL]"
