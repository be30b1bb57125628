"""Text normalisation used to compare rule wordings (seed §4.4: "not just substring matching")."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

# Whitespace and punctuation in either width (NFKC already folds full-width ASCII to half width).
PUNCT_CLASS = r"[\s\u3000-\u303f\uff00-\uff0f\uff1a-\uff20\u2010-\u206f!-/:-@\[-`{-~]"
KEPT_RUNS = re.compile("[^" + PUNCT_CLASS[1:] + "+")  # what is left between punctuation
# The same for ASCII text, as a deletion table: str.translate runs at C speed on ASCII (10x faster
# than joining the kept runs of an English text, which has a space every few letters).
_ASCII_PUNCT = {i: None for i in range(128) if re.fullmatch(PUNCT_CLASS, chr(i))}


def without_punctuation(text: str) -> str:
    """`text` without whitespace and punctuation (PUNCT_CLASS): "禁止 删除，订单。" → "禁止删除订单"."""
    if text.isascii():
        return text.translate(_ASCII_PUNCT)
    # joining what is kept is faster than sub("") on Chinese text, which has a comma every few words
    return "".join(KEPT_RUNS.findall(text))


# Full-width ASCII and the ideographic space, mapped to what NFKC maps them to. Chinese text is
# rarely NFKC-normal only because of its full-width commas and colons.
_WIDE = re.compile("[\uff01-\uff5e\u3000]")


def replace_each(pattern: re.Pattern[str], text: str, to: Callable[[str], str]) -> str:
    """`text` with every character `pattern` matches replaced by to(character) (the pattern matches
    one character). str.replace per distinct character: a few C passes, where translate looks up
    every character of a Chinese text in a dict (4x slower on 400 KB); each search resumes where the
    last one stopped, so finding the distinct characters is one pass that makes no object per
    occurrence (a Chinese text has a full-width comma every few words)."""
    hit = pattern.search(text)
    while hit is not None:
        ch = hit.group()
        text = text.replace(ch, to(ch))
        hit = pattern.search(text, hit.start())
    return text


def _narrow(ch: str) -> str:
    return " " if ch == "\u3000" else chr(ord(ch) - 0xFEE0)


def nfkc(text: str) -> str:
    """unicodedata.normalize("NFKC", text), several times faster on Chinese text: a character
    replaced by its own compatibility decomposition leaves NFKC unchanged, and what is then
    already normal (the C quick check) needs no full normalisation."""
    if unicodedata.is_normalized("NFKC", text):
        return text
    t = replace_each(_WIDE, text, _narrow)
    return t if unicodedata.is_normalized("NFKC", t) else unicodedata.normalize("NFKC", t)


def normalize(text: str) -> str:
    """Fold width (NFKC), case, whitespace and punctuation: "禁止 删除，订单。" → "禁止删除订单"."""
    return without_punctuation(nfkc(text).casefold())


# Characters whose normalize() is the character itself, its lower case, its half-width form or
# nothing, and which never compose with a neighbour under NFKC (tests/engine/test_normalize.py
# walks every one): in a text made only of these, normalize() maps character by character.
_PLAIN = re.compile(
    "[^\x00-\x7f\u2010-\u2016\u2018-\u2027\u2030-\u203d\u203f-\u205e\u3000-\u3029\u3030-\u3037\u303b-\u303f"
    "\u3400-\u4dbf\u4e00-\u9fff\uff01-\uff5e]"
)
# Probe order: the characters least likely to be in a text first (ideographs, digits, rare letters).
_RARE_LETTERS = "zqxjkvbpygfwmucldrhsnioate"
_PROBES = 4


def _sources(ch: str) -> tuple[str, ...]:
    """The plain characters whose normalize() is `ch` (a normalize() output character)."""
    if ch.isascii() and "!" <= ch <= "~":
        forms = {ch, ch.upper()}
        return tuple(sorted(forms | {chr(ord(f) + 0xFEE0) for f in forms}))
    return (ch,)


def _probe_rank(ch: str) -> int:
    if not ch.isascii():
        return 0
    if ch.isdigit():
        return 1
    return 2 + _RARE_LETTERS.find(ch) if ch in _RARE_LETTERS else 30


class NormalizedTexts:
    """A list of texts, for asking whether normalize()'d text occurs in any of them.

    `contains(needle)` answers `needle in "\\x00".join(normalize(t) for t in texts)` exactly, but
    normalizes only the texts that can hold it: a text of plain characters (see _PLAIN) lacking
    every source of one of the needle's characters cannot. A Chinese context asked about an
    English sentence is then scanned, not rewritten (~10x less work on 400 KB)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = texts
        self._normal: dict[int, str] = {}
        self._plain: dict[int, bool] = {}

    def _normalized(self, i: int) -> str:
        got = self._normal.get(i)
        if got is None:
            got = self._normal[i] = normalize(self.texts[i])
        return got

    def contains(self, needle: str) -> bool:
        """Whether the normalize()'d texts, joined by NUL, contain `needle` (itself normalized)."""
        if not needle or "\x00" in needle:
            return needle in "\x00".join(self._normalized(i) for i in range(len(self.texts)))
        probes = sorted(set(needle), key=_probe_rank)[:_PROBES]
        sources = [_sources(ch) for ch in probes]
        for i, text in enumerate(self.texts):
            if not all(any(s in text for s in alts) for alts in sources):
                plain = self._plain.get(i)
                if plain is None:
                    plain = self._plain[i] = text.isascii() or _PLAIN.search(text) is None
                if plain:
                    continue  # some character of the needle has no source in this text
            if needle in self._normalized(i):
                return True
        return False
