"""NormalizedTexts.contains answers exactly what the joined, normalized before-context answers."""

from __future__ import annotations

import random
import sys
import unicodedata

from ctxaudit.engine.language.normalize import _PLAIN, NormalizedTexts, _sources, normalize


def _plain_chars() -> list[str]:
    return [
        chr(cp)
        for cp in range(sys.maxunicode + 1)
        if not 0xD800 <= cp <= 0xDFFF and not _PLAIN.match(chr(cp))
    ]


def test_a_plain_character_normalizes_to_one_of_its_sources_or_to_nothing() -> None:
    for ch in _plain_chars():
        out = normalize(ch)
        assert len(out) <= 1, repr(ch)
        if out:
            assert ch in _sources(out), (repr(ch), repr(out))
        assert unicodedata.combining(ch) == 0, repr(ch)


def test_no_plain_character_composes_with_the_one_before_it() -> None:
    seconds = set()
    for cp in range(sys.maxunicode + 1):
        parts = unicodedata.decomposition(chr(cp)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            seconds.add(chr(int(parts[1], 16)))
    assert not seconds & set(_plain_chars())


_ALPHABET = list("abcKkz19 ,.-:") + ["Ｋ", "ｋ", "１", "，", "。", "\u3000", "禁止", "删除", "订单"]
# characters that normalize to something else: compatibility forms, ligatures, case expansions
_TRICKY = ["\u212a", "ß", "ﬁ", "①", "〸", "\u2f00", "\uf900", "e\u0301", "\u00e9", "İ", "㎏", "\x00"]


def test_contains_equals_the_joined_normalized_texts_on_random_texts() -> None:
    rnd = random.Random(5)
    for _ in range(3_000):
        texts = [
            "".join(
                rnd.choice(_ALPHABET + (_TRICKY if rnd.random() < 0.3 else []))
                for _ in range(rnd.randint(0, 12))
            )
            for _ in range(rnd.randint(1, 4))
        ]
        blob = "\x00".join(normalize(t) for t in texts)
        if blob and rnd.random() < 0.6:
            a = rnd.randrange(len(blob))
            needle = blob[a : a + rnd.randint(1, 6)]
        else:
            needle = normalize("".join(rnd.choice(_ALPHABET + _TRICKY) for _ in range(rnd.randint(1, 4))))
        assert NormalizedTexts(texts).contains(needle) == (needle in blob), (texts, needle)


def test_an_english_sentence_copied_into_full_width_text_is_found() -> None:
    texts = ["用户询问了构建情况。", "ＴＨＥ user ASKED to delete order 12；ok", "无关"]
    assert NormalizedTexts(texts).contains(normalize("The user asked to delete order 12."))
    assert not NormalizedTexts(texts).contains(normalize("The user asked to delete order 13."))
    # the kelvin sign is a source of "k" only through NFKC: the text is not plain, so it is read
    assert NormalizedTexts(["as\u212aed"]).contains("asked")
