"""find_pii's gated scan finds exactly what scanning every pattern over the whole text finds.

The reference below is the detector as it was before issue 13 (eight full scans, digit patterns
ungated): the same patterns, run everywhere, with the same overlap rule.
"""

from __future__ import annotations

import random
import re

from ctxaudit.engine.pii import PiiMatch, find_pii, is_cn_id, luhn_ok, redact

_NB, _NA = r"(?<![0-9A-Za-z])", r"(?![0-9A-Za-z])"
REF_SECRETS = [
    r"(?<![A-Za-z0-9])sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{20,}",
    r"(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}(?![0-9A-Z])",
    r"(?<![A-Za-z0-9])ASIA[0-9A-Z]{16}(?![0-9A-Z])",
    r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}",
    r"(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{30,}",
    r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9\-]{10,}",
    r"(?<![A-Za-z0-9])cta_[0-9a-f]{8}_[A-Za-z0-9_\-]{20,}",
    r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
]
REF_LABELLED = [
    r"\bBearer\s+([A-Za-z0-9._~+/=\-]{12,})",
    r"\b(?:api[_\-]?key|apikey|secret(?:[_\-]?key)?|access[_\-]?token|auth[_\-]?token|token|password|passwd|pwd)"
    r"[\"']?\s*[:=]\s*[\"']?([^\s\"',;]{6,})",
]
REF_EMAIL = (
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}"
)
REF_PHONES = [
    _NB + r"(?:(?:\+|00)?86[ \-]?)?1[3-9]\d(?:[ \-]?\d{4}){2}" + _NA,
    _NB + r"(?:\(0\d{2,3}\)\s?|0\d{2,3}-)\d{7,8}" + _NA,
    r"(?<![0-9A-Za-z+])\+\d{1,3}(?:[ \-.]?\(?\d{1,5}\)?){2,6}" + _NA,
    _NB + r"(?:\(\d{3}\)\s?|\d{3}[\-. ])\d{3}[\-. ]\d{4}" + _NA,
]


def _digits(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


def reference(text: str) -> list[tuple[str, int, int]]:
    found: list[tuple[int, PiiMatch]] = []
    for p in REF_SECRETS:
        found += [(0, PiiMatch("secret", m.start(), m.end())) for m in re.finditer(p, text)]
    for p in REF_LABELLED:
        found += [(0, PiiMatch("secret", m.start(1), m.end(1))) for m in re.finditer(p, text, re.I)]
    found += [(1, PiiMatch("email", m.start(), m.end())) for m in re.finditer(REF_EMAIL, text)]
    for m in re.finditer(_NB + r"\d{17}[0-9Xx]" + _NA, text):
        if is_cn_id(m.group()):
            found.append((2, PiiMatch("cn_id", m.start(), m.end())))
    for m in re.finditer(_NB + r"[2-6]\d{3}(?:[ \-]?\d){9,15}" + _NA, text):
        d = _digits(m.group())
        if 13 <= len(d) <= 19 and luhn_ok(d):
            found.append((3, PiiMatch("card", m.start(), m.end())))
    for p in REF_PHONES:
        for m in re.finditer(p, text):
            if 7 <= len(_digits(m.group())) <= 15:
                found.append((4, PiiMatch("phone", m.start(), m.end())))
    found.sort(key=lambda pm: (pm[0], -(pm[1].end - pm[1].start), pm[1].start))
    taken: list[PiiMatch] = []
    for _, m in found:
        if all(m.end <= t.start or m.start >= t.end for t in taken):
            taken.append(m)
    return [(m.kind, m.start, m.end) for m in sorted(taken, key=lambda m: m.start)]


def spans(text: str) -> list[tuple[str, int, int]]:
    return [(m.kind, m.start, m.end) for m in find_pii(text)]


PIECES = [
    "13812345678",
    "+86 138 1234 5678",
    "0086-13812345678",
    "010-12345678",
    "(021) 12345678",
    "+1 (212) 555-0100",
    "212-555-0100",
    "212.555.0100",
    "11010519491231002X",
    "110105194912310021",
    "4111 1111 1111 1111",
    "4111-1111-1111-1111",
    "5500000000000004",
    "a@b.com",
    "x.y+z@ex-ample.co.uk",
    "@",
    "sk-abcdefghijklmnopqrstuvwxyz012",
    "AKIAABCDEFGHIJKLMNOP",
    "ghp_" + "a" * 36,
    "xoxb-1234567890-abc",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijk",
    "Bearer abcdefghijklmnop",
    "password=hunter2hunter",
    "api_key: 'abcdef123'",
    "TOKEN = xyzxyz12",
    "access_token: abcdefgh",
    "x-auth-token=abcdefgh",
    "ſecret=abcdefgh",
    "ß",
    "İ",
    " ",
    "\n",
    "-",
    ".",
    "(",
    ")",
    "+",
    "x",
    "X",
    "手机号",
    "，",
    "１３８１２３４５６７８",
    "٣",
    "0",
    "1",
    "86",
    "\u3000",
    "\xa0",
    "\x1c",
]


def test_gated_scan_matches_the_full_scan_on_random_text() -> None:
    rnd = random.Random(13)
    for _ in range(6000):
        parts = []
        for _ in range(rnd.randint(0, 30)):
            r = rnd.random()
            if r < 0.5:
                parts.append(rnd.choice(PIECES))
            elif r < 0.8:
                parts.append("".join(rnd.choice("0123456789 -+()xX.") for _ in range(rnd.randint(1, 25))))
            else:
                parts.append("".join(rnd.choice("abcAZ@._%+-0189 \n手") for _ in range(rnd.randint(1, 12))))
        text = "".join(parts)
        assert spans(text) == reference(text), text


def test_what_the_gates_must_not_skip() -> None:
    # full-width digits are digits to `re`: a NANP number written with them is still a phone
    text = "tel ２１２-５５５-０１００."
    assert spans(text) == reference(text) == [("phone", 4, 16)]
    # an e-mail whose local part starts long before the "@"
    local = "a" * 3000
    assert spans(f"to {local}@example.com ok") == [("email", 3, 3 + 3000 + 12)]
    # a label 7 characters before its word ("access_" + "token")
    text = "use access_token: abcdefgh please"
    assert spans(text) == [("secret", 18, 26)]
    assert redact("call 13812345678 or mail a@b.com")[0] == "call [PHONE] or mail [EMAIL]"


def test_long_text_without_pii_is_returned_unchanged() -> None:
    text = ("订单 10086 已发货，仓库 3。The order shipped on 2026-11-01. " * 5000) + "token count 12"
    out, counts = redact(text)
    assert out is text and counts == {}
