"""The diff's shapes: what diff_contexts returns and the templates render (frozen dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ctxaudit.engine.diff.zones import Zones
from ctxaudit.engine.types import Side

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
    # A changed block longer than this (lines, either side) shows its head and tail; the middle of
    # each side folds, except lines near a highlight (a rewritten summary is otherwise a wall).
    max_change_lines: int = 24
    change_head_lines: int = 6
    change_tail_lines: int = 3
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
    zone: str = ""  # "rules" | "history" | "latest" (zones.detect_zones); "" when not known


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
    zones: Zones | None = None  # the three zones of both contexts (zones.py)
