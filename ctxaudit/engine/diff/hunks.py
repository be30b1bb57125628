"""Inside one message pair: lines with highlights applied, then equal/changed/collapsed hunks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxaudit.engine.diff.sections import SectionPair, align_sections
from ctxaudit.engine.diff.sequence import sequence_opcodes
from ctxaudit.engine.diff.similarity import tokenize
from ctxaudit.engine.diff.types import Collapsed, Highlight, Hunk, Limits, Line, Mark, MessageRef, Op, Segment
from ctxaudit.engine.types import Message, Side


def _line_bounds(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line, without its newline. "" has one empty line."""
    bounds = []
    start = 0
    while True:
        nl = text.find("\n", start)
        if nl < 0:
            bounds.append((start, len(text)))
            return bounds
        bounds.append((start, nl))
        start = nl + 1


_Hl = tuple[int, int, Highlight]  # (start, end) clamped, highlight


class _Side:
    """One message of one side, with its lines and highlights, ready to cut into segments."""

    def __init__(self, msg: Message, index: int, hls: list[Highlight]) -> None:
        self.msg = msg
        self.text = msg.content
        self.index = index
        self.bounds = _line_bounds(self.text)
        n = len(self.text)
        self.hls: list[_Hl] = []
        for h in hls:
            s = max(0, min(h.start, n))
            e = max(s, min(h.end, n))
            self.hls.append((s, e, h))
        self.placed: set[str] = set()
        self.zone = ""

    def ref(self) -> MessageRef:
        return MessageRef(
            self.index,
            self.msg.role,
            self.msg.kind,
            self.msg.name,
            len(self.text),
            len(self.bounds),
            self.zone,
        )

    def pinned(self, line: int) -> bool:
        ls, le = self.bounds[line]
        return any(s <= le and e >= ls for s, e, _ in self.hls)

    def line_texts(self) -> list[str]:
        return [self.text[s:e] for s, e in self.bounds]

    def line(self, k: int, op: Op, pieces: list[tuple[int, int, Op]] | None = None) -> Line:
        """Line k cut at word-diff piece and highlight boundaries."""
        ls, le = self.bounds[k]
        cuts = {ls, le}
        if pieces:
            for s, e, _ in pieces:
                if ls < s < le:
                    cuts.add(s)
                if ls < e < le:
                    cuts.add(e)
        active = [(s, e, h) for s, e, h in self.hls if s <= le and e >= ls]
        for s, e, _ in active:
            if ls < s < le:
                cuts.add(s)
            if ls < e < le:
                cuts.add(e)
        points = sorted(cuts)
        intervals = list(zip(points, points[1:], strict=False)) if len(points) > 1 else [(ls, ls)]
        segs: list[Segment] = []
        pi = 0
        for x, y in intervals:
            sop: Op = "equal"
            if pieces:
                while pi < len(pieces) and pieces[pi][1] <= x:
                    pi += 1
                if pi < len(pieces) and pieces[pi][0] <= x < pieces[pi][1]:
                    sop = pieces[pi][2]
            marks = tuple(Mark(h.css, h.anchor, h.title) for s, e, h in active if s <= x and e >= y and s < e)
            anchors = []
            for s, e, h in active:
                if h.anchor in self.placed:
                    continue
                # Starts here, or is still open from an earlier line, or is empty/only a newline
                # at the end of this line: the anchor goes before this segment's text.
                if (x <= s < y) or (s < x < e) or (y == le and x <= s <= le):
                    anchors.append(h.anchor)
                    self.placed.add(h.anchor)
            text = self.text[x:y]
            if segs and not anchors and segs[-1].op == sop and segs[-1].marks == marks:
                segs[-1] = Segment(segs[-1].text + text, sop, marks, segs[-1].anchors)
            elif text or anchors or not segs:
                segs.append(Segment(text, sop, marks, tuple(anchors)))
        return Line(k + 1, op, tuple(segs))


def _by_message(highlights: Sequence[Highlight], side: Side) -> dict[int, list[Highlight]]:
    out: dict[int, list[Highlight]] = {}
    for h in highlights:
        if h.side == side:
            out.setdefault(h.message_index, []).append(h)
    return out


# --- hunks inside one message pair --------------------------------------------------------------


def _inline_pieces(
    sb: _Side, lb: tuple[int, int], sa: _Side, la: tuple[int, int], limits: Limits
) -> tuple[list[tuple[int, int, Op]], list[tuple[int, int, Op]]] | str | None:
    """Word/char diff of before lines [lb) against after lines [la). None: too different to
    read well as words; "too large": over Limits.max_inline_tokens."""
    b_start, b_end = sb.bounds[lb[0]][0], sb.bounds[lb[1] - 1][1]
    a_start, a_end = sa.bounds[la[0]][0], sa.bounds[la[1] - 1][1]
    if max(b_end - b_start, a_end - a_start) > limits.max_inline_tokens * 12:
        return "too large"  # cheap guard before tokenising megabytes
    tb = tokenize(sb.text[b_start:b_end])
    ta = tokenize(sa.text[a_start:a_end])
    if len(tb) > limits.max_inline_tokens or len(ta) > limits.max_inline_tokens:
        return "too large"
    ops, _ = sequence_opcodes(tb, ta, limits=limits)
    offb = [b_start]
    for t in tb:
        offb.append(offb[-1] + len(t))
    offa = [a_start]
    for t in ta:
        offa.append(offa[-1] + len(t))
    pb: list[tuple[int, int, Op]] = []
    pa: list[tuple[int, int, Op]] = []
    same = 0
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            same += offb[i2] - offb[i1]
            pb.append((offb[i1], offb[i2], "equal"))
            pa.append((offa[j1], offa[j2], "equal"))
        else:
            if i2 > i1:
                pb.append((offb[i1], offb[i2], "delete"))
            if j2 > j1:
                pa.append((offa[j1], offa[j2], "insert"))
    # Mostly rewritten: word confetti reads worse than two plain blocks.
    if same < 0.4 * max(min(b_end - b_start, a_end - a_start), 1):
        return None
    return pb, pa


def _collapse_lines(
    sb: _Side | None,
    sa: _Side | None,
    rng_b: tuple[int, int],
    rng_a: tuple[int, int],
    op: Op,
    head: int,
    tail: int,
    min_run: int,
    limits: Limits,
) -> list[Hunk]:
    """Hunks for a run of lines that are equal (both sides) or one-sided; long unpinned stretches
    collapse. Pinned lines (holding a highlight) always stay visible."""
    nb = rng_b[1] - rng_b[0]
    na = rng_a[1] - rng_a[0]
    n = max(nb, na)

    def visible(k0: int, k1: int) -> Hunk:
        before = (
            tuple(sb.line(rng_b[0] + k, op if op != "insert" else "equal") for k in range(k0, k1))
            if sb and nb
            else ()
        )
        after = (
            tuple(sa.line(rng_a[0] + k, op if op != "delete" else "equal") for k in range(k0, k1))
            if sa and na
            else ()
        )
        return Hunk("equal" if op == "equal" else "change", before, after)

    if not limits.collapse or n < min_run:
        return [visible(0, n)] if n else []
    pinned = [
        (
            (sb is not None and nb and sb.pinned(rng_b[0] + k))
            or (sa is not None and na and sa.pinned(rng_a[0] + k))
        )
        for k in range(n)
    ]
    # Stretches of unpinned lines, each collapsible in its middle.
    hunks: list[Hunk] = []
    k = 0
    shown_from = 0
    while k < n:
        if pinned[k]:
            k += 1
            continue
        r = k
        while r < n and not pinned[r]:
            r += 1
        lo = k + (head if k == 0 else limits.context_lines)
        hi = r - (tail if r == n else limits.context_lines)
        if hi - lo >= max(min_run - head - tail, 2):
            if lo > shown_from:
                hunks.append(visible(shown_from, lo))
            hunks.append(
                Hunk(
                    "collapsed",
                    collapsed=Collapsed(
                        "lines",
                        op,
                        (rng_b[0] + lo, rng_b[0] + hi) if nb else (rng_b[0], rng_b[0]),
                        (rng_a[0] + lo, rng_a[0] + hi) if na else (rng_a[0], rng_a[0]),
                        hi - lo,
                        sb.index if sb else None,
                        sa.index if sa else None,
                    ),
                )
            )
            shown_from = hi
        k = r
    if shown_from < n:
        hunks.append(visible(shown_from, n))
    return hunks


def _pair_hunks(sb: _Side, sa: _Side, limits: Limits) -> tuple[list[Hunk], list[str]]:
    """Hunks of one message pair. Two summaries (both with at least two section headings) are
    compared section by section: sections are aligned on their headings first, so a rewritten
    section sits beside its old self instead of the whole text drifting (sections.py)."""
    lines_b = sb.line_texts()
    lines_a = sa.line_texts()
    blocks = align_sections(lines_b, lines_a)
    hunks: list[Hunk] = []
    notes: list[str] = []
    if blocks is not None:
        matched = sum(1 for b in blocks if b.matched)
        notes.append(
            f"compared section by section: {matched} section{'' if matched == 1 else 's'} matched by heading"
        )
    for blk in blocks or [SectionPair((0, len(lines_b)), (0, len(lines_a)), True)]:
        (b0, b1), (a0, a1) = blk.before, blk.after
        h, n = _range_hunks(sb, sa, lines_b[b0:b1], lines_a[a0:a1], b0, a0, limits)
        hunks += h
        notes += n
    return hunks, notes


def _range_hunks(
    sb: _Side, sa: _Side, lines_b: list[str], lines_a: list[str], ob: int, oa: int, limits: Limits
) -> tuple[list[Hunk], list[str]]:
    """Line diff of before lines [ob, ob+len) against after lines [oa, oa+len)."""
    ops, degraded = sequence_opcodes(lines_b, lines_a, limits=limits)
    notes = (
        ["message too large for a full line diff: part of it is shown as one replaced block"]
        if degraded
        else []
    )
    hunks: list[Hunk] = []
    c = limits.context_lines
    for tag, i1, i2, j1, j2 in coalesce(ops):
        i1, i2, j1, j2 = i1 + ob, i2 + ob, j1 + oa, j2 + oa
        if tag == "equal":
            hunks += _collapse_lines(
                sb, sa, (i1, i2), (j1, j2), "equal", c, c, limits.min_collapse_lines, limits
            )
            continue
        pieces = _inline_pieces(sb, (i1, i2), sa, (j1, j2), limits) if (i2 > i1 and j2 > j1) else None
        if pieces == "too large":
            notes.append(
                f"lines {i1 + 1}–{i2} before / {j1 + 1}–{j2} after: too large for a word-level diff, shown by line"
            )
        pb, pa = pieces if isinstance(pieces, tuple) else (None, None)
        if limits.collapse and max(i2 - i1, j2 - j1) > limits.max_change_lines:
            hunks += _fold_change(sb, sa, (i1, i2), (j1, j2), pb, pa, limits)
            continue
        hunks.append(
            Hunk(
                "change",
                tuple(sb.line(k, "delete", pb) for k in range(i1, i2)),
                tuple(sa.line(k, "insert", pa) for k in range(j1, j2)),
            )
        )
    return hunks, notes


def coalesce(
    ops: list[tuple[str, int, int, int, int]], max_equal: int = 2
) -> list[tuple[str, int, int, int, int]]:
    """Merge a short equal run into the changes around it when it is shorter than both (a blank
    line or a lone "```" shared by two rewritten texts is not worth cutting the change at: the
    reader gets one replaced block instead of confetti). The semantic clean-up of
    diff-match-patch (Fraser), applied to lines. Opcodes as difflib's."""
    out: list[list[Any]] = []
    for op in ops:
        out.append(list(op))
        while len(out) >= 3 and out[-1][0] != "equal" and out[-3][0] != "equal" and out[-2][0] == "equal":
            prev, eq, nxt = out[-3], out[-2], out[-1]
            size = eq[2] - eq[1]
            edit = min(max(prev[2] - prev[1], prev[4] - prev[3]), max(nxt[2] - nxt[1], nxt[4] - nxt[3]))
            if size > max_equal or size >= edit:
                break
            out[-3:] = [["replace", prev[1], nxt[2], prev[3], nxt[4]]]
    return [tuple(o) for o in out]


def _fold_change(
    sb: _Side,
    sa: _Side,
    rb: tuple[int, int],
    ra: tuple[int, int],
    pb: list[tuple[int, int, Op]] | None,
    pa: list[tuple[int, int, Op]] | None,
    limits: Limits,
) -> list[Hunk]:
    """A long changed block: head and tail of both sides beside each other; between them each
    side's middle on its own (before, then after), folded except lines near a highlight."""
    head, tail = limits.change_head_lines, limits.change_tail_lines
    bh, ah = min(head, rb[1] - rb[0]), min(head, ra[1] - ra[0])
    bt, at = min(tail, rb[1] - rb[0] - bh), min(tail, ra[1] - ra[0] - ah)
    out = [
        Hunk(
            "change",
            tuple(sb.line(k, "delete", pb) for k in range(rb[0], rb[0] + bh)),
            tuple(sa.line(k, "insert", pa) for k in range(ra[0], ra[0] + ah)),
        )
    ]
    out += _fold_side(sb, (rb[0] + bh, rb[1] - bt), "before", pb, limits)
    out += _fold_side(sa, (ra[0] + ah, ra[1] - at), "after", pa, limits)
    if bt or at:
        out.append(
            Hunk(
                "change",
                tuple(sb.line(k, "delete", pb) for k in range(rb[1] - bt, rb[1])),
                tuple(sa.line(k, "insert", pa) for k in range(ra[1] - at, ra[1])),
            )
        )
    return out


def _fold_side(
    s: _Side, rng: tuple[int, int], side: Side, pieces: list[tuple[int, int, Op]] | None, limits: Limits
) -> list[Hunk]:
    """One side's middle of a long changed block: lines within context_lines of a highlight stay
    visible, runs of two or more other lines fold into a Collapsed ("delete"/"insert")."""
    lo, hi = rng
    if hi <= lo:
        return []
    c = limits.context_lines
    pinned = [k for k in range(lo, hi) if s.pinned(k)]
    show = {k for p in pinned for k in range(max(lo, p - c), min(hi, p + c + 1))}
    op: Op = "delete" if side == "before" else "insert"
    out: list[Hunk] = []
    k = lo
    while k < hi:
        r = k
        visible = k in show
        while r < hi and (r in show) == visible:
            r += 1
        if visible or r - k < 2:
            lines = tuple(s.line(x, op, pieces) for x in range(k, r))
            out.append(Hunk("change", lines, ()) if side == "before" else Hunk("change", (), lines))
        else:
            out.append(
                Hunk(
                    "collapsed",
                    collapsed=Collapsed(
                        "lines",
                        op,
                        (k, r) if side == "before" else (0, 0),
                        (k, r) if side == "after" else (0, 0),
                        r - k,
                        s.index if side == "before" else None,
                        s.index if side == "after" else None,
                    ),
                )
            )
        k = r
    return out


def _onesided_hunks(s: _Side, side: Side, limits: Limits) -> list[Hunk]:
    n = len(s.bounds)
    if side == "before":
        return _collapse_lines(
            s,
            None,
            (0, n),
            (0, 0),
            "delete",
            limits.onesided_head_lines,
            limits.onesided_tail_lines,
            limits.max_onesided_lines,
            limits,
        )
    return _collapse_lines(
        None,
        s,
        (0, 0),
        (0, n),
        "insert",
        limits.onesided_head_lines,
        limits.onesided_tail_lines,
        limits.max_onesided_lines,
        limits,
    )


def _equal_hunks(sb: _Side, sa: _Side, limits: Limits) -> list[Hunk]:
    n = len(sb.bounds)
    c = limits.context_lines
    return _collapse_lines(sb, sa, (0, n), (0, n), "equal", c, c, limits.min_collapse_lines, limits)
