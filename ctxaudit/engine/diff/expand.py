"""Expanding a collapsed run of messages or lines on request (the UI's "show more")."""

from __future__ import annotations

from collections.abc import Sequence

from ctxaudit.engine.diff.hunks import _by_message, _onesided_hunks, _pair_hunks, _Side
from ctxaudit.engine.diff.rows import _equal_row
from ctxaudit.engine.diff.types import DEFAULT_LIMITS, Collapsed, Highlight, Hunk, Limits, Row
from ctxaudit.engine.diff.zones import detect_zones
from ctxaudit.engine.types import Message


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
    zones = detect_zones(before, after)

    def zoned(m: Message, i: int, hls: list[Highlight], side: str) -> _Side:
        s = _Side(m, i, hls)
        s.zone = zones.of(side, i) or ""
        return s

    if collapsed.op == "equal":
        if b1 - b0 != a1 - a0:
            raise ValueError("equal runs have the same length on both sides")
        rows = []
        for k in range(b1 - b0):
            sb = zoned(before[b0 + k], b0 + k, hb.get(b0 + k, []), "before")
            sa = zoned(after[a0 + k], a0 + k, ha.get(a0 + k, []), "after")
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
                before=(s := zoned(before[i], i, hb.get(i, []), "before")).ref(),
                hunks=tuple(_onesided_hunks(s, "before", limits)),
            )
            for i in range(b0, b1)
        )
    return tuple(
        Row(
            "inserted",
            after=(s := zoned(after[j], j, ha.get(j, []), "after")).ref(),
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
