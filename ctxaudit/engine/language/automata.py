"""Many literals found in one pass: the Rust aho-corasick crate (ahocorasick_rs), wrapped.

Offsets are in characters of the Python str. The crate reads a str as UTF-8, which a lone
surrogate ("\\ud800", from a JSON escape in hostile or broken input) is not: such a text is
searched with each surrogate read as U+FFFD, one character for one, so offsets are unchanged and
nothing raises. Normal text pays nothing for this (the retry runs only when the first try fails).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import ahocorasick_rs

_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8_safe(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


class Automaton:
    """words: the literals (the index of a hit is the word's index in `self.words`).
    longest: leftmost-longest matches, left to right without overlap (what an alternation of the
    words, longest first, finds); otherwise every occurrence, overlapping ones included."""

    def __init__(self, words: Iterable[str], *, longest: bool) -> None:
        self.words = list(words)
        self._overlapping = not longest
        kind = ahocorasick_rs.MatchKind.LeftmostLongest if longest else ahocorasick_rs.MatchKind.Standard
        words = self.words
        # an empty word would match everywhere (pyahocorasick ignored it): it is left out, and the
        # indexes of the others mapped back
        self._index: list[int] | None = None
        if not all(words):
            self._index = [i for i, w in enumerate(words) if w]
            words = [words[i] for i in self._index]
        if _SURROGATE.search("\x00".join(words)):  # a rule's own broken text: one search, not one per word
            words = [_utf8_safe(w) for w in words]
        self._auto = ahocorasick_rs.AhoCorasick(words, matchkind=kind) if words else None

    def matches(self, text: str) -> list[tuple[int, int, int]]:
        """(word index, start, end) of each hit in `text`, ordered by end (by start when longest)."""
        if self._auto is None:
            return []
        try:
            found = self._auto.find_matches_as_indexes(text, overlapping=self._overlapping)
        except UnicodeEncodeError:
            found = self._auto.find_matches_as_indexes(_utf8_safe(text), overlapping=self._overlapping)
        if self._index is not None:
            index = self._index
            return [(index[k], s, e) for k, s, e in found]
        return found
