"""diff_contexts: the rows of the page, one message beside its counterpart, long equal runs collapsed.

plan_contexts does the same work up to the rows' hunks: it aligns and pairs the messages and
returns a DiffPlan whose rows are built on demand, so a page of a long uncollapsed diff
(`?full=1`) builds only its own rows (issue 13: the full diff of an 832 KB event built every
row's hunks to show 50 KB of them). diff_contexts is plan_contexts with every row built.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxaudit.engine.diff.hunks import _by_message, _equal_hunks, _onesided_hunks, _pair_hunks, _Side
from ctxaudit.engine.diff.sequence import sequence_opcodes
from ctxaudit.engine.diff.similarity import _MOVE_MIN, _pair_block, _sim_tokens, similarity
from ctxaudit.engine.diff.types import DEFAULT_LIMITS, Collapsed, ContextDiff, Highlight, Limits, Row
from ctxaudit.engine.diff.zones import Zones, detect_zones
from ctxaudit.engine.types import Message, Side


def _fingerprint(m: Message) -> tuple[str, str]:
    return (m.role, m.content)


@dataclass(frozen=True, slots=True)
class RowPlan:
    """One top-level row before its hunks are built. messages: (side, index) of every message it
    shows (a "replaced" row several; a collapsed run none); chars: their characters together."""

    messages: tuple[tuple[Side, int], ...]
    chars: int
    build: Callable[[], Row]


class DiffPlan:
    """The rows of a diff, built when asked for (each at most once).

    plans: one RowPlan per top-level row, down the page. counts: messages per row kind
    (equal/changed/deleted/inserted). zones: both contexts' zones. placeable: the anchors of the
    highlights on messages that exist; with Limits(collapse=False) nothing is folded, so these are
    exactly the anchors the rows place, built or not (ContextDiff.anchors without building)."""

    def __init__(
        self,
        plans: tuple[RowPlan, ...],
        counts: dict[str, int],
        zones: Zones,
        sides: dict[tuple[Side, int], _Side],
        placeable: frozenset[str],
    ) -> None:
        self.plans = plans
        self.counts = counts
        self.zones = zones
        self.placeable = placeable
        self._sides = sides  # the sides built so far (their `placed` anchors)
        self._built: dict[int, Row] = {}

    def __len__(self) -> int:
        return len(self.plans)

    def rows(self, start: int = 0, end: int | None = None) -> tuple[Row, ...]:
        """Rows start..end (a slice of the top-level rows), built now if not before."""
        out = []
        for i in range(*slice(start, end).indices(len(self.plans))):
            if i not in self._built:
                self._built[i] = self.plans[i].build()
            out.append(self._built[i])
        return tuple(out)

    def diff(self) -> ContextDiff:
        """Every row built: what diff_contexts returns."""
        rows = self.rows()
        anchors = frozenset(a for side in self._sides.values() for a in side.placed)
        return ContextDiff(rows, dict(self.counts), (), anchors, self.zones)


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
    return plan_contexts(before, after, highlights=highlights, limits=limits).diff()


def plan_contexts(
    before: Sequence[Message],
    after: Sequence[Message],
    *,
    highlights: Sequence[Highlight] = (),
    limits: Limits = DEFAULT_LIMITS,
) -> DiffPlan:
    """diff_contexts up to the rows' hunks: the messages aligned and paired, each row a RowPlan
    built when DiffPlan.rows asks for it. Same arguments; the rows it builds are diff_contexts'
    rows. Linear in the number of messages, plus the built rows' text."""
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
    zones = detect_zones(before, after)
    # A message's lines and highlights are cut up only when a row showing it is built.
    sides: dict[tuple[Side, int], _Side] = {}

    def side_b(i: int) -> _Side:
        if ("before", i) not in sides:
            s = sides["before", i] = _Side(before[i], i, hb.get(i, []))
            s.zone = zones.before[i]
        return sides["before", i]

    def side_a(j: int) -> _Side:
        if ("after", j) not in sides:
            s = sides["after", j] = _Side(after[j], j, ha.get(j, []))
            s.zone = zones.after[j]
        return sides["after", j]

    plans: list[RowPlan] = []
    counts = {"equal": 0, "changed": 0, "deleted": 0, "inserted": 0}

    def changed_row(i: int, j: int, sim: float, moved: bool) -> RowPlan:
        counts["changed"] += 1

        def build() -> Row:
            hunks, notes = _pair_hunks(side_b(i), side_a(j), limits)
            return Row(
                "changed",
                side_b(i).ref(),
                side_a(j).ref(),
                tuple(hunks),
                similarity=round(sim, 3),
                moved=moved,
                notes=tuple(notes),
            )

        return RowPlan((("before", i), ("after", j)), len(before[i].content) + len(after[j].content), build)

    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            counts["equal"] += i2 - i1
            plans += _message_run(before, after, side_b, side_a, hb, ha, i1, i2, j1, limits)
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
                plans.append(
                    _replaced(
                        _onesided_run(before, side_b, hb, gone, "before", limits),
                        _onesided_run(after, side_a, ha, new, "after", limits),
                    )
                )
            elif gone:
                plans += _onesided_run(before, side_b, hb, gone, "before", limits)
            elif new:
                plans += _onesided_run(after, side_a, ha, new, "after", limits)
            for y in range(j, tj):
                if y in moved_a:
                    mi, sim = moved_a[y]
                    plans.append(changed_row(mi, y, sim, True))
            if ti < i2:
                plans.append(changed_row(ti, tj, pair_of_b[ti][1], False))
                i, j = ti + 1, tj + 1
            else:
                i, j = i2, j2
    placeable = frozenset(
        h.anchor
        for h in highlights
        if 0 <= h.message_index < (len(before) if h.side == "before" else len(after))
    )
    return DiffPlan(tuple(plans), counts, zones, sides, placeable)


def _replaced(before_rows: list[RowPlan], after_rows: list[RowPlan]) -> RowPlan:
    return RowPlan(
        tuple(m for p in (*before_rows, *after_rows) for m in p.messages),
        sum(p.chars for p in (*before_rows, *after_rows)),
        lambda: Row(
            "replaced",
            before_rows=tuple(p.build() for p in before_rows),
            after_rows=tuple(p.build() for p in after_rows),
        ),
    )


def _equal_row(sb: _Side, sa: _Side, limits: Limits) -> Row:
    return Row("equal", sb.ref(), sa.ref(), tuple(_equal_hunks(sb, sa, limits)))


_SideOf = Callable[[int], _Side]


def _message_run(
    before: Sequence[Message],
    after: Sequence[Message],
    side_b: _SideOf,
    side_a: _SideOf,
    hb: dict[int, list[Highlight]],
    ha: dict[int, list[Highlight]],
    i1: int,
    i2: int,
    j1: int,
    limits: Limits,
) -> list[RowPlan]:
    """Rows for a run of equal messages, the long unpinned middle collapsed."""
    n = i2 - i1
    pinned = [bool(hb.get(i1 + k) or ha.get(j1 + k)) for k in range(n)]

    def row(k: int) -> RowPlan:
        i, j = i1 + k, j1 + k
        return RowPlan(
            (("before", i), ("after", j)),
            len(before[i].content) + len(after[j].content),
            lambda: _equal_row(side_b(i), side_a(j), limits),
        )

    return _runs(
        n,
        pinned,
        row,
        lambda lo, hi: Collapsed("messages", "equal", (i1 + lo, i1 + hi), (j1 + lo, j1 + hi), hi - lo),
        limits.context_messages,
        limits.min_collapse_messages,
        limits,
    )


def _onesided_run(
    messages: Sequence[Message],
    side_of: _SideOf,
    hls: dict[int, list[Highlight]],
    idx: list[int],
    side: Side,
    limits: Limits,
) -> list[RowPlan]:
    """Rows for consecutive deleted (side "before") or inserted ("after") messages."""
    n = len(idx)
    pinned = [bool(hls.get(i)) for i in idx]

    def build(i: int) -> Row:
        s = side_of(i)
        hunks = tuple(_onesided_hunks(s, side, limits))
        return (
            Row("deleted", before=s.ref(), hunks=hunks)
            if side == "before"
            else Row("inserted", after=s.ref(), hunks=hunks)
        )

    def row(k: int) -> RowPlan:
        i = idx[k]
        return RowPlan(((side, i),), len(messages[i].content), lambda: build(i))

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


def _folded(row: Row) -> RowPlan:
    """A collapsed run: built already (it holds no text), and no message shown."""
    return RowPlan((), 0, lambda: row)


def _runs(
    n: int,
    pinned: list[bool],
    row: Callable[[int], RowPlan],
    collapsed: Callable[[int, int], Collapsed],
    ctx: int,
    min_run: int,
    limits: Limits,
) -> list[RowPlan]:
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
    out: list[RowPlan] = []
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
            out.append(_folded(Row("collapsed", collapsed=collapsed(lo, hi))))
            out += [row(x) for x in range(hi, r)]
        else:
            out += [row(x) for x in range(k, r)]
        k = r
    return out
