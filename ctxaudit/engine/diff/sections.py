"""Summary-to-summary alignment: two texts with section headings are compared section by section.

A compaction summary is usually rewritten as a whole ("## 1. Primary Request and Intent", "### Key
decisions", "Summary:", "【历史摘要】"…). A plain line diff of two such summaries drifts: one
inserted paragraph early on and every later section is set against the wrong one, which reads as
a wall of red and green. Aligning on headings first keeps each section beside its old self; only
then are lines diffed, inside each pair of sections.

Headings are found outside fenced code blocks: Markdown headings (#…), numbered bold items
("1. **Phase**"), a bold line ("**Files**"), a short capitalised label ending in a colon
("Analysis:"), 【…】 labels and Chinese ordinals ("一、"). Two headings match when they read the
same after dropping numbering, markup and case.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(
    r"^(?:#{1,6}\s+\S.*"
    r"|\d{1,2}[.)]\s+\*\*[^*]{2,80}\*\*.*"
    r"|\*\*[^*]{2,80}\*\*:?\s*"
    r"|[A-Z][A-Za-z0-9 /&()'-]{2,50}:\s*"
    r"|【[^】]{1,30}】.*"
    r"|[一二三四五六七八九十]{1,3}[、.．].{1,60})$"
)
_NUMBERING = re.compile(r"^(?:#{1,6}\s*)?(?:\d{1,2}[.)]|[一二三四五六七八九十]{1,3}[、.．])?\s*")
MIN_HEADINGS = 2  # on each side: fewer, and the text is not a sectioned summary
MAX_LINES = 20_000  # per side: above this the plain line diff (with its own guards) is used


@dataclass(frozen=True, slots=True)
class SectionPair:
    """Line ranges [start, end) of one before section (or run of them) and its after counterpart.
    matched: the headings read the same; otherwise a run the other side has no heading for."""

    before: tuple[int, int]
    after: tuple[int, int]
    matched: bool


def heading_key(line: str) -> str:
    """What a heading says, for matching: numbering, #, ** and a trailing colon dropped, lowercase."""
    text = line.strip()
    text = _NUMBERING.sub("", text, count=1)
    text = text.replace("**", "").strip().rstrip(":：").strip().lower()
    return " ".join(text.split())


def _headings(lines: list[str]) -> list[int]:
    out = []
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and len(line) <= 120 and _HEADING.match(line.strip()):
            out.append(i)
    return out


def _sections(lines: list[str], heads: list[int]) -> list[tuple[str, int, int]]:
    bounds = ([0] if heads[0] > 0 else []) + heads + [len(lines)]
    out = []
    for s, e in zip(bounds, bounds[1:], strict=False):
        key = heading_key(lines[s]) if s in heads else ""
        out.append((key, s, e))
    return out


def align_sections(lines_b: list[str], lines_a: list[str]) -> list[SectionPair] | None:
    """Section pairs covering both texts in order, or None when either side has fewer than
    MIN_HEADINGS headings (or more than MAX_LINES lines): then a plain line diff is right."""
    if len(lines_b) > MAX_LINES or len(lines_a) > MAX_LINES:
        return None
    hb, ha = _headings(lines_b), _headings(lines_a)
    if len(hb) < MIN_HEADINGS or len(ha) < MIN_HEADINGS:
        return None
    sb, sa = _sections(lines_b, hb), _sections(lines_a, ha)
    matcher = difflib.SequenceMatcher(None, [k for k, _, _ in sb], [k for k, _, _ in sa], autojunk=False)
    out: list[SectionPair] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += [
                SectionPair((sb[i][1], sb[i][2]), (sa[j][1], sa[j][2]), True)
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
            continue
        b = (sb[i1][1], sb[i2 - 1][2]) if i2 > i1 else (_start(sb, i1, len(lines_b)),) * 2
        a = (sa[j1][1], sa[j2 - 1][2]) if j2 > j1 else (_start(sa, j1, len(lines_a)),) * 2
        out.append(SectionPair(b, a, False))
    return out


def _start(sections: list[tuple[str, int, int]], i: int, n: int) -> int:
    return sections[i][1] if i < len(sections) else n
