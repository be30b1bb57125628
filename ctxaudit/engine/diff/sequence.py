"""Sequence diff that stays near-linear: common head/tail trimmed, patience anchors, SequenceMatcher (autojunk off) only on the gaps."""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

from ctxaudit.engine.diff.types import DEFAULT_LIMITS, Limits, Opcode


def sequence_opcodes(
    a: Sequence[object], b: Sequence[object], *, limits: Limits = DEFAULT_LIMITS
) -> tuple[list[Opcode], bool]:
    """Opcodes ("equal"/"replace"/"delete"/"insert", i1, i2, j1, j2) turning `a` into `b`.

    Items are compared with ==, so pass hashable fingerprints (line strings, ints). Near-linear:
    common head/tail trimming, patience anchors, SequenceMatcher(autojunk=False) on small gaps.
    Returns (opcodes, degraded); degraded is True when a gap was too large to diff and is
    reported as one replace.
    """
    out: list[Opcode] = []
    degraded = _diff_range(a, b, 0, len(a), 0, len(b), out, limits, 0)
    return _merge(out), degraded


def _diff_range(
    a: Sequence[object],
    b: Sequence[object],
    alo: int,
    ahi: int,
    blo: int,
    bhi: int,
    out: list[Opcode],
    limits: Limits,
    depth: int,
) -> bool:
    head = 0
    while alo + head < ahi and blo + head < bhi and a[alo + head] == b[blo + head]:
        head += 1
    if head:
        out.append(("equal", alo, alo + head, blo, blo + head))
        alo += head
        blo += head
    tail = 0
    while ahi - tail > alo and bhi - tail > blo and a[ahi - tail - 1] == b[bhi - tail - 1]:
        tail += 1
    ahi -= tail
    bhi -= tail
    degraded = False
    if alo == ahi and blo == bhi:
        pass
    elif alo == ahi:
        out.append(("insert", alo, ahi, blo, bhi))
    elif blo == bhi:
        out.append(("delete", alo, ahi, blo, bhi))
    elif (ahi - alo) + (bhi - blo) <= limits.small_seq:
        _matcher(a, b, alo, ahi, blo, bhi, out)
    else:
        anchors = _patience_anchors(a, b, alo, ahi, blo, bhi) if depth < 40 else []
        if anchors:
            i, j = alo, blo
            for ai, bj in anchors:
                degraded |= _diff_range(a, b, i, ai, j, bj, out, limits, depth + 1)
                out.append(("equal", ai, ai + 1, bj, bj + 1))
                i, j = ai + 1, bj + 1
            degraded |= _diff_range(a, b, i, ahi, j, bhi, out, limits, depth + 1)
        elif (ahi - alo) * (bhi - blo) <= limits.max_gap_product:
            _matcher(a, b, alo, ahi, blo, bhi, out)
        else:
            out.append(("replace", alo, ahi, blo, bhi))
            degraded = True
    if tail:
        out.append(("equal", ahi, ahi + tail, bhi, bhi + tail))
    return degraded


def _matcher(
    a: Sequence[object], b: Sequence[object], alo: int, ahi: int, blo: int, bhi: int, out: list[Opcode]
) -> None:
    sm = SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        out.append((tag, i1 + alo, i2 + alo, j1 + blo, j2 + blo))


def _patience_anchors(
    a: Sequence[object], b: Sequence[object], alo: int, ahi: int, blo: int, bhi: int
) -> list[tuple[int, int]]:
    """Longest increasing run of items that occur exactly once on each side (patience diff)."""
    count_a: dict[object, int] = {}
    pos_a: dict[object, int] = {}
    for i in range(alo, ahi):
        x = a[i]
        count_a[x] = count_a.get(x, 0) + 1
        pos_a[x] = i
    count_b: dict[object, int] = {}
    pos_b: dict[object, int] = {}
    for j in range(blo, bhi):
        x = b[j]
        if count_a.get(x) == 1:
            count_b[x] = count_b.get(x, 0) + 1
            pos_b[x] = j
    pairs = sorted((pos_a[x], pos_b[x]) for x, c in count_b.items() if c == 1)
    if not pairs:
        return []
    # Longest increasing subsequence on the b positions (patience sorting, O(n log n)).
    import bisect

    tops: list[int] = []
    top_idx: list[int] = []
    prev: list[int] = [-1] * len(pairs)
    for k, (_, bj) in enumerate(pairs):
        p = bisect.bisect_left(tops, bj)
        if p == len(tops):
            tops.append(bj)
            top_idx.append(k)
        else:
            tops[p] = bj
            top_idx[p] = k
        prev[k] = top_idx[p - 1] if p else -1
    seq = []
    k = top_idx[-1]
    while k != -1:
        seq.append(pairs[k])
        k = prev[k]
    return seq[::-1]


def _merge(ops: list[Opcode]) -> list[Opcode]:
    """Join neighbouring opcodes: equal with equal, and any run of non-equal ones into one."""
    out: list[Opcode] = []
    for tag, i1, i2, j1, j2 in ops:
        if i1 == i2 and j1 == j2:
            continue
        if out:
            ptag, pi1, _, pj1, _ = out[-1]
            if tag == "equal" and ptag == "equal":
                out[-1] = ("equal", pi1, i2, pj1, j2)
                continue
            if tag != "equal" and ptag != "equal":
                ni1, nj1 = pi1, pj1
                new_tag = "replace" if (i2 > ni1 and j2 > nj1) else ("delete" if i2 > ni1 else "insert")
                out[-1] = (new_tag, ni1, i2, nj1, j2)
                continue
        out.append((tag, i1, i2, j1, j2))
    return out
