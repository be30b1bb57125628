"""diff_contexts: the rows of the page, one message beside its counterpart, long equal runs collapsed."""

from __future__ import annotations

from collections.abc import Sequence

from ctxaudit.engine.diff.hunks import _by_message, _equal_hunks, _onesided_hunks, _pair_hunks, _Side
from ctxaudit.engine.diff.sequence import sequence_opcodes
from ctxaudit.engine.diff.similarity import _MOVE_MIN, _pair_block, _sim_tokens, similarity
from ctxaudit.engine.diff.types import DEFAULT_LIMITS, Collapsed, ContextDiff, Highlight, Limits, Op, Row
from ctxaudit.engine.diff.zones import detect_zones
from ctxaudit.engine.types import Message, Side


def _fingerprint(m: Message) -> tuple[str, str]:
    return (m.role, m.content)


def diff_contexts(
    before: Sequence[Message],
    after: Sequence[Message],
    *,
    highlights: Sequence[Highlight] = (),
    limits: Limits = DEFAULT_LIMITS,
) -> ContextDiff:
    """Align two contexts message by message and diff paired messages line then word.

    before, after: the messages of each side. highlights: spans to mark (rule and finding
    evidence; offsets into Message.content, clamped when out of range; unknown message
    indices are ignored). Returns a ContextDiff (see the module docstring). Never raises on
    content; cost is about linear in the text size for the usual compression event.
    """
    hb = _by_message(highlights, "before")
    ha = _by_message(highlights, "after")
    fb = [_fingerprint(m) for m in before]
    fa = [_fingerprint(m) for m in after]
    ops, _ = sequence_opcodes(fb, fa, limits=limits)

    # Pair changed messages: order-keeping inside each replace block, then moves across blocks.
    bsets: dict[int, frozenset[str]] = {}
    asets: dict[int, frozenset[str]] = {}

    def bset(i: int) -> frozenset[str]:
        if i not in bsets:
            bsets[i] = _sim_tokens(before[i].content, limits.similarity_chars)
        return bsets[i]

    def aset(j: int) -> frozenset[str]:
        if j not in asets:
            asets[j] = _sim_tokens(after[j].content, limits.similarity_chars)
        return asets[j]

    pair_of_b: dict[int, tuple[int, float]] = {}
    for tag, i1, i2, j1, j2 in ops:
        if tag == "replace" and i2 - i1 == 1 and j2 - j1 == 1 and before[i1].role == after[j1].role:
            # One message rewritten in place: it is the same message, however much it changed.
            pair_of_b[i1] = (j1, similarity(bset(i1), aset(j1)))
        elif tag == "replace" and (i2 - i1) * (j2 - j1) <= limits.max_pairing_product:
            for pi, pj, sim in _pair_block(
                before[i1:i2],
                after[j1:j2],
                [bset(i) for i in range(i1, i2)],
                [aset(j) for j in range(j1, j2)],
            ):
                pair_of_b[i1 + pi] = (j1 + pj, sim)
    paired_a = {j for j, _ in pair_of_b.values()}
    free_b = [
        i
        for tag, i1, i2, _, _ in ops
        if tag in ("replace", "delete")
        for i in range(i1, i2)
        if i not in pair_of_b
    ]
    free_a = [
        j
        for tag, _, _, j1, j2 in ops
        if tag in ("replace", "insert")
        for j in range(j1, j2)
        if j not in paired_a
    ]
    moved_a: dict[int, tuple[int, float]] = {}
    if free_b and free_a and len(free_b) * len(free_a) <= limits.max_pairing_product:
        cands = sorted(
            ((similarity(bset(i), aset(j)), i, j) for i in free_b for j in free_a),
            reverse=True,
        )
        used_b: set[int] = set()
        for sim, i, j in cands:
            if sim < _MOVE_MIN:
                break
            if i in used_b or j in moved_a:
                continue
            used_b.add(i)
            moved_a[j] = (i, sim)

    moved_b = {i for i, _ in moved_a.values()}
    sides_b = {i: _Side(m, i, hb.get(i, [])) for i, m in enumerate(before)}
    sides_a = {j: _Side(m, j, ha.get(j, [])) for j, m in enumerate(after)}
    zones = detect_zones(before, after)
    for i, s in sides_b.items():
        s.zone = zones.before[i]
    for j, s in sides_a.items():
        s.zone = zones.after[j]

    rows: list[Row] = []
    counts = {"equal": 0, "changed": 0, "deleted": 0, "inserted": 0}

    def changed_row(i: int, j: int, sim: float, moved: bool) -> Row:
        hunks, notes = _pair_hunks(sides_b[i], sides_a[j], limits)
        counts["changed"] += 1
        return Row(
            "changed",
            sides_b[i].ref(),
            sides_a[j].ref(),
            tuple(hunks),
            similarity=round(sim, 3),
            moved=moved,
            notes=tuple(notes),
        )

    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            counts["equal"] += i2 - i1
            rows += _message_run(sides_b, sides_a, i1, i2, j1, "equal", limits)
            continue
        i, j = i1, j1
        while i < i2 or j < j2:
            # The stretch up to the next paired message (or the block's end).
            ti = next((x for x in range(i, i2) if x in pair_of_b), i2)
            tj = pair_of_b[ti][0] if ti < i2 else j2
            gone = [x for x in range(i, ti) if x not in moved_b]
            new = [y for y in range(j, tj) if y not in moved_a]
            counts["deleted"] += len(gone)
            counts["inserted"] += len(new)
            if gone and new:
                # What compression replaced, beside what replaced it (a summary beside the turns).
                rows.append(
                    Row(
                        "replaced",
                        before_rows=tuple(_onesided_run(sides_b, gone, "before", limits)),
                        after_rows=tuple(_onesided_run(sides_a, new, "after", limits)),
                    )
                )
            elif gone:
                rows += _onesided_run(sides_b, gone, "before", limits)
            elif new:
                rows += _onesided_run(sides_a, new, "after", limits)
            for y in range(j, tj):
                if y in moved_a:
                    mi, sim = moved_a[y]
                    rows.append(changed_row(mi, y, sim, True))
            if ti < i2:
                rows.append(changed_row(ti, tj, pair_of_b[ti][1], False))
                i, j = ti + 1, tj + 1
            else:
                i, j = i2, j2
    anchors = frozenset(a for side in (*sides_b.values(), *sides_a.values()) for a in side.placed)
    return ContextDiff(tuple(rows), counts, (), anchors, zones)


def _equal_row(sb: _Side, sa: _Side, limits: Limits) -> Row:
    return Row("equal", sb.ref(), sa.ref(), tuple(_equal_hunks(sb, sa, limits)))


def _message_run(
    sides_b: dict[int, _Side], sides_a: dict[int, _Side], i1: int, i2: int, j1: int, op: Op, limits: Limits
) -> list[Row]:
    """Rows for a run of equal messages, the long unpinned middle collapsed."""
    n = i2 - i1
    pinned = [bool(sides_b[i1 + k].hls or sides_a[j1 + k].hls) for k in range(n)]
    return _runs(
        n,
        pinned,
        lambda k: _equal_row(sides_b[i1 + k], sides_a[j1 + k], limits),
        lambda lo, hi: Collapsed("messages", "equal", (i1 + lo, i1 + hi), (j1 + lo, j1 + hi), hi - lo),
        limits.context_messages,
        limits.min_collapse_messages,
        limits,
    )


def _onesided_run(sides: dict[int, _Side], idx: list[int], side: Side, limits: Limits) -> list[Row]:
    """Rows for consecutive deleted (side "before") or inserted ("after") messages."""
    n = len(idx)
    pinned = [bool(sides[i].hls) for i in idx]

    def row(k: int) -> Row:
        s = sides[idx[k]]
        hunks = tuple(_onesided_hunks(s, side, limits))
        return (
            Row("deleted", before=s.ref(), hunks=hunks)
            if side == "before"
            else Row("inserted", after=s.ref(), hunks=hunks)
        )

    def collapsed(lo: int, hi: int) -> Collapsed:
        rng = (idx[lo], idx[hi - 1] + 1)
        if side == "before":
            return Collapsed("messages", "delete", rng, (0, 0), hi - lo)
        return Collapsed("messages", "insert", (0, 0), rng, hi - lo)

    return _runs(
        n,
        pinned,
        row,
        collapsed,
        limits.onesided_context_messages,
        limits.min_collapse_onesided_messages,
        limits,
    )


def _runs(n: int, pinned: list[bool], row, collapsed, ctx: int, min_run: int, limits: Limits) -> list[Row]:  # type: ignore[no-untyped-def]
    if not limits.collapse or n < min_run:
        return [row(k) for k in range(n)]
    # Highlights keep their messages visible, up to a budget: a context where every message
    # holds evidence (hundreds of extracted rules) must still collapse. ContextDiff.anchors
    # tells the page which highlights stayed visible.
    budget = limits.max_pinned_messages
    kept = []
    for p in pinned:
        kept.append(p and budget > 0)
        budget -= 1 if p else 0
    pinned = kept
    out: list[Row] = []
    k = 0
    while k < n:
        if pinned[k]:
            out.append(row(k))
            k += 1
            continue
        r = k
        while r < n and not pinned[r]:
            r += 1
        lo, hi = k + ctx, r - ctx
        if hi - lo >= max(min_run - 2 * ctx, 2):
            out += [row(x) for x in range(k, lo)]
            out.append(Row("collapsed", collapsed=collapsed(lo, hi)))
            out += [row(x) for x in range(hi, r)]
        else:
            out += [row(x) for x in range(k, r)]
        k = r
    return out
