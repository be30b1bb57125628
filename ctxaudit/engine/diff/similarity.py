"""Tokens (one per CJK character, one per Latin word) and the similarity that pairs changed messages."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ctxaudit.engine.types import Message

# CJK (Han, kana, Hangul, CJK punctuation, full-width forms): one token per character.
_CJK = "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
# A token: one CJK char, a Latin word (word chars other than CJK), a newline, other whitespace,
# or one other character; spaces and tabs after a token stay with it, which keeps " " from
# becoming the most popular token of every text.
_TOKEN = re.compile(rf"[{_CJK}][^\S\n]*|[^\W{_CJK}]+[^\S\n]*|\n|[^\S\n]+|[^\w\s{_CJK}][^\S\n]*|.", re.S)
# Similarity tokens: CJK letters (no punctuation) and words.
_CJK_LETTERS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_SIM_TOKEN = re.compile(rf"[{_CJK_LETTERS}]+|[^\W{_CJK}]+")


_CJK_RUN = re.compile(rf"[{_CJK}]+")


def tokenize(text: str) -> list[str]:
    """Split text for a word/char diff: Latin words whole, each CJK character alone.

    "禁止删除 orders now" → ["禁", "止", "删", "除 ", "orders ", "now"]. Joining the tokens gives
    the text back.
    """
    return _TOKEN.findall(text)


def _sim_tokens(text: str, limit: int) -> frozenset[str]:
    """Words, and CJK character bigrams (single characters overlap between any two Chinese texts)."""
    out: set[str] = set()
    for t in _SIM_TOKEN.findall(text[:limit]):
        if t[0] >= "\u3040" and _CJK_RUN.fullmatch(t):
            out.update(t[k : k + 2] for k in range(max(1, len(t) - 1)))
        else:
            out.add(t.casefold())
    return frozenset(out)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Mean of Jaccard and overlap coefficients of two token sets (0..1): a shortened rewrite
    of a long message still scores well, and two unrelated messages score near 0."""
    if not a or not b:
        return 1.0 if a == b else 0.0
    inter = len(a & b)
    return 0.5 * inter / len(a | b) + 0.5 * inter / min(len(a), len(b))


def _pair_score(mb: Message, ma: Message, sim: float) -> float:
    lb, la = len(mb.content), len(ma.content)
    system = mb.role == ma.role and mb.role in ("system", "developer")
    if not system and max(lb, la) > 4 * max(min(lb, la), 50):
        # A long summary mentions every turn it replaced; pairing it with one of them misleads.
        return 0.0
    score = sim
    if mb.role == ma.role:
        score += 0.15
        if system:  # a rewritten system message belongs beside its old self
            score += 0.2
    return score


_PAIR_MIN = 0.55  # a pair needs this score (similarity + role bonus)
_MOVE_MIN = 0.6  # messages paired across unchanged ones need this similarity


def _pair_block(
    bs: Sequence[Message], as_: Sequence[Message], bsets: list[frozenset[str]], asets: list[frozenset[str]]
) -> list[tuple[int, int, float]]:
    """Best order-keeping pairing of two runs of changed messages (max total score)."""
    m, n = len(bs), len(as_)
    score = [[0.0] * n for _ in range(m)]
    sims = [[0.0] * n for _ in range(m)]
    for i in range(m):
        for j in range(n):
            s = similarity(bsets[i], asets[j])
            sims[i][j] = s
            sc = _pair_score(bs[i], as_[j], s)
            score[i][j] = sc if sc >= _PAIR_MIN else 0.0
    best = [[0.0] * (n + 1) for _ in range(m + 1)]
    for i in range(m - 1, -1, -1):
        for j in range(n - 1, -1, -1):
            v = max(best[i + 1][j], best[i][j + 1])
            if score[i][j] > 0:
                v = max(v, score[i][j] + best[i + 1][j + 1])
            best[i][j] = v
    pairs = []
    i = j = 0
    while i < m and j < n:
        if score[i][j] > 0 and best[i][j] == score[i][j] + best[i + 1][j + 1]:
            pairs.append((i, j, sims[i][j]))
            i += 1
            j += 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs
