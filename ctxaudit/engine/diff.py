"""Structured before/after diff of two contexts: dataclasses the templates render, never HTML.

Shape of the result (`diff_contexts`): a `ContextDiff` whose `rows` go down the page. Each `Row`
puts one before-message beside one after-message (either may be absent), or stands for a
collapsed run of messages. A row's `hunks` go down the message: equal lines, changed lines
(with word-level `Segment`s for English, character-level for CJK), or a collapsed run of lines.
Offsets are Python string indices (code points) into `Message.content`, like `types.Span`.

How it stays near-linear on 200k-token contexts (~1 MB a side):
1. Messages are aligned on fingerprints (role + content). Sequences are diffed by trimming the
   common head and tail, then patience anchors (lines unique on both sides), and
   `difflib.SequenceMatcher(autojunk=False)` only on the small gaps left. autojunk stays off:
   with it, any line seen in more than 1% of a 200+ line text ("{", "},", blank lines) is junk
   and can anchor nothing, so a repetitive JSON dump would come out as "everything changed".
2. Changed messages are paired by similarity (a rewritten system message sits beside its old
   self; a message moved elsewhere is paired too, marked `moved`).
3. Inside a paired message: a line diff first; a word/character diff only inside each changed
   hunk, and only when the hunk is below `Limits.max_inline_tokens` a side (otherwise the hunk is
   shown line by line and the row carries a note).
4. Long unchanged runs of messages and lines are collapsed into a `Collapsed` marker that the UI
   expands on request (`expand_messages`, `expand_lines`). Runs that hold a highlight are never
   collapsed, so a link to a highlight always finds it on the page.

Highlights (rule and finding evidence) are applied here by splitting message text at span
boundaries, so the templates only ever print escaped text with classes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Literal

from ctxaudit.engine.types import Message, Side

Op = Literal["equal", "delete", "insert"]
RowKind = Literal["equal", "changed", "deleted", "inserted", "replaced", "collapsed"]
Opcode = tuple[str, int, int, int, int]


@dataclass(frozen=True, slots=True)
class Limits:
    """Knobs of the diff. Counts are messages, lines or tokens as named."""

    context_messages: int = 1  # equal messages kept visible on each side of a collapsed run
    min_collapse_messages: int = 4  # runs shorter than this are shown whole
    context_lines: int = 3
    min_collapse_lines: int = 12
    # One-sided (deleted/inserted) runs are collapsed later: a reviewer usually wants to read them.
    min_collapse_onesided_messages: int = 8
    onesided_context_messages: int = 3
    max_onesided_lines: int = 60
    onesided_head_lines: int = 25
    onesided_tail_lines: int = 10
    max_inline_tokens: int = 4000  # word/char diff only for hunks below this many tokens a side
    small_seq: int = 2000  # SequenceMatcher directly when both sides together have at most this many items
    max_gap_product: int = 4_000_000  # SequenceMatcher on a gap without anchors up to len(a)*len(b)
    max_pairing_product: int = 10_000  # similarity pairing inside a block up to m*n messages
    similarity_chars: int = 20_000  # chars of each message used for similarity
    max_pinned_messages: int = 30  # per run: messages kept visible because they hold a highlight
    collapse: bool = True


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Highlight:
    """A span to mark in one side's message. `anchor` is a page-unique id for fragment links;
    `css` the class the UI styles it with; `title` a short plain-text label (rule id, state)."""

    side: Side
    message_index: int
    start: int
    end: int
    anchor: str
    css: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class Mark:
    css: str
    key: str  # the highlight's anchor; the UI uses it to flash every piece of one highlight
    title: str


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of text inside one line. op: "equal", or "delete"/"insert" for a word/char change."""

    text: str
    op: Op = "equal"
    marks: tuple[Mark, ...] = ()
    anchors: tuple[str, ...] = ()  # highlight anchors that start here


@dataclass(frozen=True, slots=True)
class Line:
    """One line of one message. number: 1-based; op: the line's state in the line diff."""

    number: int
    op: Op
    segments: tuple[Segment, ...]


@dataclass(frozen=True, slots=True)
class Collapsed:
    """A hidden run. level "messages": message indices [start, end) per side; level "lines": line
    indices (0-based) [start, end) inside messages `before_message`/`after_message`."""

    level: Literal["messages", "lines"]
    op: Op
    before: tuple[int, int]
    after: tuple[int, int]
    count: int
    before_message: int | None = None
    after_message: int | None = None


@dataclass(frozen=True, slots=True)
class Hunk:
    """Lines of one message pair: kind "equal", "change" (before lines vs after lines) or "collapsed"."""

    kind: Literal["equal", "change", "collapsed"]
    before: tuple[Line, ...] = ()
    after: tuple[Line, ...] = ()
    collapsed: Collapsed | None = None


@dataclass(frozen=True, slots=True)
class MessageRef:
    index: int
    role: str
    kind: str | None
    name: str | None
    chars: int
    lines: int


@dataclass(frozen=True, slots=True)
class Row:
    kind: RowKind
    before: MessageRef | None = None
    after: MessageRef | None = None
    hunks: tuple[Hunk, ...] = ()
    collapsed: Collapsed | None = None
    similarity: float | None = None
    moved: bool = False
    notes: tuple[str, ...] = ()
    # kind "replaced": unpaired messages removed (before_rows, "deleted"/"collapsed" rows) beside
    # the unpaired messages that took their place (after_rows, "inserted"/"collapsed" rows).
    before_rows: tuple[Row, ...] = ()
    after_rows: tuple[Row, ...] = ()


@dataclass(frozen=True, slots=True)
class ContextDiff:
    rows: tuple[Row, ...]
    counts: dict[str, int] = field(
        default_factory=dict
    )  # messages per row kind: equal/changed/deleted/inserted
    notes: tuple[str, ...] = ()
    # Highlight anchors present in the rows (the others sit inside a collapsed run).
    anchors: frozenset[str] = frozenset()


# --- sequence diff ------------------------------------------------------------------------------


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
    sm = SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)  # type: ignore[arg-type]
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


# --- tokens and similarity ----------------------------------------------------------------------

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


# --- lines and highlights -----------------------------------------------------------------------


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

    def ref(self) -> MessageRef:
        return MessageRef(
            self.index, self.msg.role, self.msg.kind, self.msg.name, len(self.text), len(self.bounds)
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
    lines_b = sb.line_texts()
    lines_a = sa.line_texts()
    ops, degraded = sequence_opcodes(lines_b, lines_a, limits=limits)
    notes = (
        ["message too large for a full line diff: part of it is shown as one replaced block"]
        if degraded
        else []
    )
    hunks: list[Hunk] = []
    c = limits.context_lines
    for tag, i1, i2, j1, j2 in ops:
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
        hunks.append(
            Hunk(
                "change",
                tuple(sb.line(k, "delete", pb) for k in range(i1, i2)),
                tuple(sa.line(k, "insert", pa) for k in range(j1, j2)),
            )
        )
    return hunks, notes


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


# --- rows ---------------------------------------------------------------------------------------


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
    return ContextDiff(tuple(rows), counts, (), anchors)


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


# --- expanding a collapsed run ------------------------------------------------------------------


def expand_messages(
    before: Sequence[Message],
    after: Sequence[Message],
    collapsed: Collapsed,
    *,
    highlights: Sequence[Highlight] = (),
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[Row, ...]:
    """The rows hidden by a level-"messages" Collapsed, shown whole (long lines still collapse).

    Raises ValueError when the ranges do not fit the contexts (a stale or forged request).
    """
    hb = _by_message(highlights, "before")
    ha = _by_message(highlights, "after")
    (b0, b1), (a0, a1) = collapsed.before, collapsed.after
    if not (0 <= b0 <= b1 <= len(before) and 0 <= a0 <= a1 <= len(after)):
        raise ValueError("range outside the contexts")
    if collapsed.op == "equal":
        if b1 - b0 != a1 - a0:
            raise ValueError("equal runs have the same length on both sides")
        rows = []
        for k in range(b1 - b0):
            sb = _Side(before[b0 + k], b0 + k, hb.get(b0 + k, []))
            sa = _Side(after[a0 + k], a0 + k, ha.get(a0 + k, []))
            if before[b0 + k].content == after[a0 + k].content:
                rows.append(_equal_row(sb, sa, limits))
            else:  # contexts differ from what the marker was made from: show them as changed
                hunks, notes = _pair_hunks(sb, sa, limits)
                rows.append(Row("changed", sb.ref(), sa.ref(), tuple(hunks), notes=tuple(notes)))
        return tuple(rows)
    if collapsed.op == "delete":
        return tuple(
            Row(
                "deleted",
                before=(s := _Side(before[i], i, hb.get(i, []))).ref(),
                hunks=tuple(_onesided_hunks(s, "before", limits)),
            )
            for i in range(b0, b1)
        )
    return tuple(
        Row(
            "inserted",
            after=(s := _Side(after[j], j, ha.get(j, []))).ref(),
            hunks=tuple(_onesided_hunks(s, "after", limits)),
        )
        for j in range(a0, a1)
    )


def expand_lines(
    before: Sequence[Message],
    after: Sequence[Message],
    collapsed: Collapsed,
    *,
    highlights: Sequence[Highlight] = (),
) -> Hunk:
    """The lines hidden by a level-"lines" Collapsed, as one visible hunk.

    Raises ValueError when the messages or line ranges do not exist.
    """
    (b0, b1), (a0, a1) = collapsed.before, collapsed.after
    sb = sa = None
    if collapsed.before_message is not None:
        if not 0 <= collapsed.before_message < len(before):
            raise ValueError("no such before message")
        i = collapsed.before_message
        sb = _Side(before[i], i, _by_message(highlights, "before").get(i, []))
        if not 0 <= b0 <= b1 <= len(sb.bounds):
            raise ValueError("line range outside the message")
    if collapsed.after_message is not None:
        if not 0 <= collapsed.after_message < len(after):
            raise ValueError("no such after message")
        j = collapsed.after_message
        sa = _Side(after[j], j, _by_message(highlights, "after").get(j, []))
        if not 0 <= a0 <= a1 <= len(sa.bounds):
            raise ValueError("line range outside the message")
    if sb is None and sa is None:
        raise ValueError("no message named")
    op = collapsed.op
    bl = tuple(sb.line(k, "equal" if op == "equal" else "delete") for k in range(b0, b1)) if sb else ()
    al = tuple(sa.line(k, "equal" if op == "equal" else "insert") for k in range(a0, a1)) if sa else ()
    return Hunk("equal" if op == "equal" else "change", bl, al)
