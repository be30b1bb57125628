"""PII and secret detection for redaction at ingestion (pure Python).

`find_pii(text)` returns the spans to hide; `redact(text)` replaces each with a typed placeholder:

| placeholder | what |
|---|---|
| `[EMAIL]`  | e-mail addresses |
| `[PHONE]`  | mainland China mobiles (1[3-9]x, optional +86/0086, spaces or dashes), China landlines (0xx-xxxxxxx), `+<country>` international numbers, NANP `(212) 555-0100` / `212-555-0100` |
| `[CN_ID]`  | mainland China resident ID numbers (18 characters): a valid province code, a valid birth date (1900..today) and the ISO 7064 MOD 11-2 check character |
| `[CARD]`   | payment card numbers: 13-19 digits (spaces/dashes between groups allowed), first digit 2-6, Luhn-valid |
| `[SECRET]` | API keys and tokens: `sk-…` (OpenAI/Anthropic), `AKIA…`/`ASIA…` (AWS), `ghp_…`/`gho_…`/`github_pat_…`, `xox[abpr]-…` (Slack), ctxaudit's own `cta_…` keys, JWTs (`eyJ….eyJ….…`), the credential after `Bearer`, and the value of `password=`/`api_key:`/`secret=`/`token=` |

Why these checks: a resident-ID checksum alone passes about 1 random 18-digit string in 11; the
province code and the birth date bring that to about 1 in 70,000 (benchmarks/pii_bench.py). A Luhn
check alone passes 1 random number in 10, so a bare 16-digit order number whose first digit is 2-6
is redacted as `[CARD]` one time in 10: redaction prefers hiding an order number to leaking a card.
Plain 10-digit numbers without separators are not treated as phones (too many ids look like that).

Digit boundaries are ASCII-only (`[0-9A-Za-z]` must not touch a number), so "手机号13812345678"
is found although CJK characters are word characters to `re`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from bisect import bisect_right
from dataclasses import dataclass
from datetime import date

from ctxaudit.engine.cn_regions import PROVINCE_CODES, REGION_CODES
from ctxaudit.engine.language.automata import Automaton

PLACEHOLDERS = {
    "secret": "[SECRET]",
    "email": "[EMAIL]",
    "cn_id": "[CN_ID]",
    "card": "[CARD]",
    "phone": "[PHONE]",
}


@dataclass(frozen=True)
class PiiMatch:
    """One detected item: `kind` in PLACEHOLDERS, [start, end) offsets in characters."""

    kind: str
    start: int
    end: int


_NB = r"(?<![0-9A-Za-z])"  # not after an ASCII letter or digit
_NA = r"(?![0-9A-Za-z])"  # not before one

# (literals one of which must occur, pattern): text without them skips the scan. Each pattern
# starts with its literal and checks the character before it afterwards ("sk-(?<![A-Za-z0-9]sk-)"
# is "(?<![A-Za-z0-9])sk-" exactly): a pattern that starts with a lookbehind makes `re` try every
# position, one that starts with a literal lets it skip ahead to the literal.
_SECRET_RES = [
    (("sk-",), re.compile(r"sk-(?<![A-Za-z0-9]sk-)(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{20,}")),
    (("AKIA",), re.compile(r"AKIA(?<![A-Za-z0-9]AKIA)[0-9A-Z]{16}(?![0-9A-Z])")),
    (("ASIA",), re.compile(r"ASIA(?<![A-Za-z0-9]ASIA)[0-9A-Z]{16}(?![0-9A-Z])")),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), re.compile(r"gh(?<![A-Za-z0-9]gh)[pousr]_[A-Za-z0-9]{30,}")),
    (("github_pat_",), re.compile(r"github_pat_(?<![A-Za-z0-9]github_pat_)[A-Za-z0-9_]{30,}")),
    (("xox",), re.compile(r"xox(?<![A-Za-z0-9]xox)[abposr]-[A-Za-z0-9\-]{10,}")),
    (("cta_",), re.compile(r"cta_(?<![A-Za-z0-9]cta_)[0-9a-f]{8}_[A-Za-z0-9_\-]{20,}")),
    (
        ("eyJ",),
        re.compile(r"eyJ(?<![A-Za-z0-9_\-]eyJ)[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ),
]
# Group 1 is the secret; the label stays readable ("Bearer [SECRET]", "password=[SECRET]").
# (casefolded words one of which a match must contain, how far before that word a match can
# start, pattern): every label alternative contains one of the words ("access_token" starts 7
# before "token"), and re.I matches no character whose casefold lacks the letter (checked over
# all of Unicode for these letters), so the gate never skips a match.
_LABEL_RE = (
    r"\b(?:api[_\-]?key|apikey|secret(?:[_\-]?key)?|access[_\-]?token|auth[_\-]?token|token|password|passwd|pwd)"
    r"[\"']?\s*[:=]\s*[\"']?"
)


def _labelled_res(value_excludes: str) -> list[tuple[tuple[str, ...], int, re.Pattern[str]]]:
    return [
        (("bearer",), 0, re.compile(r"\bBearer\s+([A-Za-z0-9._~+/=\-]{12,})", re.I)),
        (
            ("key", "secret", "token", "passw", "pwd"),
            7,
            re.compile(_LABEL_RE + f"([^\\s\"',;{value_excludes}]{{6,}})", re.I),
        ),
    ]


_LABELLED_SECRET_RES = _labelled_res("")
# For texts joined with SEPARATOR (redact_many): the labelled value is the one pattern whose
# characters include NUL, so this copy stops at it, as the value stops at the end of its own text.
_LABELLED_SECRET_RES_JOINED = _labelled_res(r"\x00")
# The literals secret matches start with and the label words, all found in one pass over the
# casefolded text (the Rust aho-corasick crate) instead of one scan per word: 1.3 M characters of
# a 200k-token event cost 14 scans (~9 ms; issue 13). A literal is searched in lower case, so
# the gate may open on "Akia" too (the pattern then finds nothing): it never stays shut on a
# literal, since casefolding turns each of its ASCII letters into the lower-case one in place.
_GATE_WORDS = sorted(
    {lit.lower() for lits, _ in _SECRET_RES for lit in lits}
    | {w for words, _, _ in _LABELLED_SECRET_RES for w in words}
)
_GATE = Automaton(_GATE_WORDS, longest=False, rare=True)
# {gate word: the _SECRET_RES indexes it opens}
_OPENS = {
    w: [i for i, (lits, _) in enumerate(_SECRET_RES) if any(lit.lower() == w for lit in lits)]
    for w in _GATE_WORDS
}
_EMAIL_RE = re.compile(
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}"
)
_EMAIL_LOCAL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_CN_ID_RE = re.compile(_NB + r"\d{17}[0-9Xx]" + _NA)
_CARD_RE = re.compile(_NB + r"[2-6]\d{3}(?:[ \-]?\d){9,15}" + _NA)
_PHONE_RES = [
    # mainland China mobile, optional +86 / 0086 / 86 prefix, optional 3-4-4 grouping
    re.compile(_NB + r"(?:(?:\+|00)?86[ \-]?)?1[3-9]\d(?:[ \-]?\d{4}){2}" + _NA),
    # China landline with area code: 010-12345678, 0755-1234567, (021) 12345678
    re.compile(_NB + r"(?:\(0\d{2,3}\)\s?|0\d{2,3}-)\d{7,8}" + _NA),
    # international: +<country> then 6-14 more digits in groups
    re.compile(r"(?<![0-9A-Za-z+])\+\d{1,3}(?:[ \-.]?\(?\d{1,5}\)?){2,6}" + _NA),
    # NANP with separators: (212) 555-0100, 212-555-0100, 212.555.0100
    re.compile(_NB + r"(?:\(\d{3}\)\s?|\d{3}[\-. ])\d{3}[\-. ]\d{4}" + _NA),
]
# Every character a resident ID, card or phone match can hold, and the ones a match starts with.
# A "digit window" is a maximal run of those characters from a start character on; every digit
# match lies inside one, and needs at least 7 digits (phones 7-15, cards 13-19, IDs 17+). So one
# scan finds the windows and the six digit patterns run only inside the few that qualify: text
# without long numbers costs that one scan. (Windows are searched with the character after them
# included, so the patterns' own "not before a letter or digit" checks see what they always saw;
# the characters before are seen anyway.)
_DIGIT_WINDOW = re.compile(r"[\d+(][\dXx+\-.()\s]{6,}")
# The same for ASCII text, spelled out: a category (\d, \s) costs `re` twice a plain set.
_DIGIT_WINDOW_ASCII = re.compile("[0-9+(][0-9Xx+\\-.() \t\n\r\x0b\x0c\x1c-\x1f]{6,}")
_MIN_DIGITS = 7
# (priority, kind, pattern, fewest digits a match holds, needs a "+"): a window with fewer digits
# (or without "+") cannot hold a match, so the pattern does not run there. Most numbers in agent
# contexts are dates and order numbers of 7-9 digits, which no pattern but "+…" can match.
_DIGIT_KINDS = [
    (2, "cn_id", _CN_ID_RE, 17, False),  # 17 digits + check character
    (3, "card", _CARD_RE, 13, False),
    (4, "phone", _PHONE_RES[0], 11, False),  # 1[3-9]x xxxx xxxx
    (4, "phone", _PHONE_RES[1], 10, False),  # 0 + 2-3 digit area code + 7-8
    (4, "phone", _PHONE_RES[2], _MIN_DIGITS, True),  # "+" + 1-3 digit country code + groups
    (4, "phone", _PHONE_RES[3], 10, False),  # NANP 3 + 3 + 4
]
_FEWEST_WITHOUT_PLUS = min(fewest for *_, fewest, plus in _DIGIT_KINDS if not plus)
_NOT_DIGIT = re.compile(r"\D+")

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


def cn_id_checksum_ok(s: str) -> bool:
    """ISO 7064 MOD 11-2 check character of an 18-character resident ID (GB 11643-1999)."""
    total = sum(int(c) * w for c, w in zip(s[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == s[17].upper()


def is_cn_id(s: str, *, strict_region: bool = False, today: date | None = None) -> bool:
    """True when `s` (18 chars) is a plausible resident ID: checksum, birth date, region.

    The region is its 2-digit province code, or with `strict_region` the full 6-digit code from
    cn_regions.REGION_CODES (2015 list: IDs under retired codes fail the strict check).
    """
    if len(s) != 18 or not s[:17].isdigit():
        return False
    if s[:2] not in PROVINCE_CODES or (strict_region and s[:6] not in REGION_CODES):
        return False
    try:
        born = date(int(s[6:10]), int(s[10:12]), int(s[12:14]))
    except ValueError:
        return False
    if not date(1900, 1, 1) <= born <= (today or date.today()):
        return False
    return cn_id_checksum_ok(s)


def luhn_ok(digits: str) -> bool:
    """Luhn (mod 10) check of a digit string."""
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _digits(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


def _digit_windows(text: str) -> list[tuple[int, int, int, bool]]:
    """[(start, end, digits, holds "+")] of the digit windows (see _DIGIT_WINDOW) that have
    enough digits for some pattern: 10, or 7 with a "+"."""
    rx = _DIGIT_WINDOW_ASCII if text.isascii() else _DIGIT_WINDOW
    out = []
    for m in rx.finditer(text):
        g = m.group()
        n = len(_NOT_DIGIT.sub("", g))
        # below _FEWEST_WITHOUT_PLUS digits only the "+…" pattern can match (see _DIGIT_KINDS)
        if n >= _FEWEST_WITHOUT_PLUS or (n >= _MIN_DIGITS and "+" in g):
            out.append((m.start(), m.end(), n, "+" in g))
    return out


def _labelled_secrets(
    text: str,
    folded: str,
    at: dict[str, list[int]],
    patterns: list[tuple[tuple[str, ...], int, re.Pattern[str]]],
) -> list[tuple[int, PiiMatch]]:
    """Secrets after a label ("Bearer …", "password=…"). Every match starts at most `lead`
    characters before an occurrence of one of its words, so the pattern is tried only at those
    starts, left to right, each match's end the next lower bound: what finditer over the whole
    text finds (its leftmost-first matches), without running the pattern over text that has
    no label (1.3 M characters of a 200k-token event: 50 ms → under 1; issue 13). `folded`: the
    text casefolded; `at`: {word: its starts in `folded`}."""
    # casefold never shortens a character, so equal lengths mean positions correspond.
    same = len(folded) == len(text)
    out: list[tuple[int, PiiMatch]] = []
    for words, lead, rx in patterns:
        if not same:
            if any(w in at for w in words):
                out += [(0, PiiMatch("secret", m.start(1), m.end(1))) for m in rx.finditer(text)]
            continue
        pos = 0  # no match starts before the end of the previous one
        tried = -1  # every start up to here failed
        for w in sorted({i for word in words for i in at.get(word, ())}):
            if w < pos:
                continue
            for start in range(max(pos, tried + 1, w - lead), w + 1):
                m = rx.match(text, start)
                if m is not None:
                    out.append((0, PiiMatch("secret", m.start(1), m.end(1))))
                    pos = m.end()
                    break
            else:
                tried = w
    return out


def _non_overlapping(found: list[tuple[int, PiiMatch]]) -> list[PiiMatch]:
    """Keep matches in priority order when they overlap nothing kept so far; sorted by start."""
    found.sort(key=lambda pm: (pm[0], -(pm[1].end - pm[1].start), pm[1].start))
    starts: list[int] = []  # the kept matches, sorted by start (they never overlap each other)
    kept: list[PiiMatch] = []
    for _, m in found:
        i = bisect_right(starts, m.start)
        if i and kept[i - 1].end > m.start:
            continue
        if i < len(kept) and kept[i].start < m.end:
            continue
        starts.insert(i, m.start)
        kept.insert(i, m)
    return kept


def find_pii(text: str, *, strict_region: bool = False) -> list[PiiMatch]:
    """Every PII/secret span in `text`, sorted, non-overlapping.

    Overlaps are resolved by kind priority (secret > email > cn_id > card > phone), then by
    length: a JWT containing digits is one [SECRET], an 18-digit ID is not also a [CARD].
    Cost: one scan for digit windows plus substring tests; a pattern scans only where its
    literal, "@" or a number with enough digits occurs (benchmarks/pii_bench.py prints the MB/s).
    """
    return _find(text, strict_region, _LABELLED_SECRET_RES)


def _find(
    text: str, strict_region: bool, labelled: list[tuple[tuple[str, ...], int, re.Pattern[str]]]
) -> list[PiiMatch]:
    found: list[tuple[int, PiiMatch]] = []
    folded = text.lower() if text.isascii() else text.casefold()  # the same on ASCII, cheaper
    words_at: dict[str, list[int]] = {}  # each gate word's starts in `folded`
    for k, start, _ in _GATE.matches(folded):
        words_at.setdefault(_GATE_WORDS[k], []).append(start)
    for i in sorted({i for w in words_at for i in _OPENS[w]}):
        found += [(0, PiiMatch("secret", m.start(), m.end())) for m in _SECRET_RES[i][1].finditer(text)]
    found += _labelled_secrets(text, folded, words_at, labelled)
    at = text.find("@")
    if at >= 0:
        # No e-mail starts before the run of local-part characters that ends at the first "@".
        lo = at
        while lo and text[lo - 1] in _EMAIL_LOCAL:
            lo -= 1
        found += [(1, PiiMatch("email", m.start(), m.end())) for m in _EMAIL_RE.finditer(text, lo)]
    for ws, we, n_digits, plus in _digit_windows(text):
        end = min(we + 1, len(text))
        for prio, kind, rx, fewest, needs_plus in _DIGIT_KINDS:
            if n_digits < fewest or (needs_plus and not plus):
                continue
            for m in rx.finditer(text, ws, end):
                g = m.group()
                if kind == "cn_id":
                    ok = is_cn_id(g, strict_region=strict_region)
                elif kind == "card":
                    d = _digits(g)
                    ok = 13 <= len(d) <= 19 and luhn_ok(d)
                else:
                    ok = 7 <= len(_digits(g)) <= 15
                if ok:
                    found.append((prio, PiiMatch(kind, m.start(), m.end())))
    return _non_overlapping(found)


def pseudonym(kind: str, value: str, key: bytes) -> str:
    """A keyed placeholder: "[EMAIL#3f9a1c]". The same value gives the same tag under one key, two
    values give two tags, and without the key the value cannot be recovered. It keeps rules about a
    *specific* address checkable after redaction ("send only to audit@…" → "…to exfil@…" stays a
    change, where plain "[EMAIL]" → "[EMAIL]" would look retained)."""
    tag = hmac.new(key, f"{kind}\0{value.strip().casefold()}".encode(), hashlib.sha256).hexdigest()[:6]
    return f"{PLACEHOLDERS[kind][:-1]}#{tag}]"


def redact(text: str, *, strict_region: bool = False, key: bytes | None = None) -> tuple[str, dict[str, int]]:
    """Replace every PII/secret span with its placeholder ("[EMAIL]", ...), or with a keyed
    pseudonym ("[EMAIL#3f9a1c]", see `pseudonym`) when `key` is given.

    Returns (redacted text, counts by kind). Text without PII comes back unchanged (same object).
    """
    return _replace(text, find_pii(text, strict_region=strict_region), key, {})


def _replace(
    text: str, matches: list[PiiMatch], key: bytes | None, counts: dict[str, int]
) -> tuple[str, dict[str, int]]:
    if not matches:
        return text, counts
    out: list[str] = []
    pos = 0
    for m in matches:
        out.append(text[pos : m.start])
        out.append(PLACEHOLDERS[m.kind] if key is None else pseudonym(m.kind, text[m.start : m.end], key))
        counts[m.kind] = counts.get(m.kind, 0) + 1
        pos = m.end
    out.append(text[pos:])
    return "".join(out), counts


# Joins the texts of redact_many: scrub_unstorable leaves no NUL in stored text, and no pattern
# matches across it (the labelled value's copy excludes it; every other pattern's characters
# exclude it already, and lookarounds treat it as they treat the end of a text).
SEPARATOR = "\x00"


def redact_many(
    texts: list[str], *, strict_region: bool = False, key: bytes | None = None
) -> tuple[list[str], dict[str, int]]:
    """`redact` of every text in `texts`, in one scan of them joined by SEPARATOR: per-call costs
    (gates, casefold, the digit-window scan) are paid once, not once per string (an event holds
    ~1,500 short strings per 20k tokens; issue 13). ASCII texts and the others are joined apart,
    so the ASCII ones get the cheaper ASCII scan (_DIGIT_WINDOW_ASCII). Returns (redacted texts
    in order, counts by kind summed), exactly what redacting each text alone gives
    (tests/engine/test_pii_joined.py). A text holding NUL itself is redacted alone.
    """
    out = list(texts)
    counts: dict[str, int] = {}
    ascii_: list[int] = []
    other: list[int] = []
    for i, t in enumerate(texts):
        (ascii_ if t.isascii() else other).append(i)
    for group in (ascii_, other):
        if not group:
            continue
        joined = SEPARATOR.join([texts[i] for i in group])
        if joined.count(SEPARATOR) != len(group) - 1:  # a text holds NUL: each alone
            for i in group:
                out[i], counts = _replace(
                    texts[i], find_pii(texts[i], strict_region=strict_region), key, counts
                )
            continue
        matches = _find(joined, strict_region, _LABELLED_SECRET_RES_JOINED)
        if matches:
            redacted, counts = _replace(joined, matches, key, counts)
            for i, t in zip(group, redacted.split(SEPARATOR), strict=True):
                out[i] = t
    return out, counts


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def scrub_unstorable(text: str) -> str:
    """Replace NUL and lone surrogates with U+FFFD.

    PostgreSQL rejects \\u0000 in text and jsonb, and a lone surrogate cannot be encoded as UTF-8,
    so both would fail the first durable write; the replacement character shows a reviewer that
    something unprintable was there. (A str cannot hold a valid surrogate pair: JSON pairs arrive
    already combined into one code point.)
    """
    return _UNSTORABLE.sub("\ufffd", text) if _UNSTORABLE.search(text) else text
