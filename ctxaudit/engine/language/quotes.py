"""Quoted material: text a summary quotes rather than states (issue 12 §4 "quotes do not bind").

Claude Code's compaction summary ends with an "All user messages" list that quotes every earlier
user turn verbatim; a summary may quote a user's question ("用户问过“提交信息必须用英文写吗？”").
A rule that survives only there is not an instruction any more: the model reads it as a record of
what was said. `quoted_regions(text)` returns the spans that are quoted material:

- everything under a heading that names quoted messages ("All user messages:", "User messages",
  "用户消息：", "用户原话：") — up to the next heading of the same level or 200 lines;
- a quotation (“…”, "…", 「…」, 『…』) right after a reporting verb (asked/said/wrote/问/说/写道, at
  most 12 characters before it) or whose text is a question (ends in ?/？).

Linear: one scan for headings, one for quotation marks.
"""

from __future__ import annotations

import re

_MESSAGES_HEADING = re.compile(
    r"^[ \t>*#\-•\d.)]*(?:all\s+)?(?:user|human|previous user|earlier user)(?:'s)?\s+(?:messages|prompts|requests|inputs)\b[^\n]*$"
    r"|^[ \t>*#\-•\d.)]*(?:全部|所有)?(?:用户消息|用户原话|用户的消息|用户发言)[^\n]*$",
    re.I | re.M,
)
_QUOTE = re.compile(r"“[^”\n]{1,600}”|\"[^\"\n]{1,600}\"|「[^」\n]{1,600}」|『[^』\n]{1,600}』")
_REPORTING = re.compile(
    r"(?:asked|said|says|wrote|typed|wondered|questioned|问过|问道|问|说过|说道|说|写道|提问|询问)\W{0,4}$",
    re.I,
)
_MAX_LINES = 200


_HASHES = re.compile(r"^[ \t]*(#{1,6})\s")
_NUMBERED = re.compile(r"^([ \t]*)(?:\*\*)?(\d{1,2})[.)]\s")


def _section_end(text: str, heading: str, start: int) -> int:
    """Where the section under `heading` ends: the next heading of the same level ("## 7. Pending
    Tasks" after "## 6. All User Messages"; "7. Pending Tasks:" after "6. All User Messages:"),
    else _MAX_LINES lines on."""
    hashes = _HASHES.match(heading)
    numbered = _NUMBERED.match(heading)
    if hashes:
        level = len(hashes.group(1))
        nxt = re.compile(rf"^[ \t]*#{{1,{level}}}\s", re.M).search(text, start)
    elif numbered:
        indent, number = numbered.group(1), int(numbered.group(2))
        nxt = re.compile(rf"^{re.escape(indent)}(?:\*\*)?{number + 1}[.)]\s", re.M).search(text, start)
    else:
        nxt = re.compile(r"^[ \t]*#{1,6}\s|^\S[^\n]{0,60}[:：][ \t]*$", re.M).search(text, start + 1)
    end = nxt.start() if nxt else len(text)
    pos = start
    for _ in range(_MAX_LINES):
        j = text.find("\n", pos + 1)
        if j < 0 or j >= end:
            return end
        pos = j
    return pos


def quoted_regions(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of `text` that are quoted material (module docstring), sorted."""
    out: list[tuple[int, int]] = []
    for m in _MESSAGES_HEADING.finditer(text):
        out.append((m.end(), _section_end(text, m.group(), m.end())))
    for m in _QUOTE.finditer(text):
        inner = m.group()[1:-1].rstrip()
        before = text[max(0, m.start() - 12) : m.start()]
        if inner.endswith(("?", "？")) or _REPORTING.search(before):
            out.append((m.start(), m.end()))
    out.sort()
    return out


def inside(regions: list[tuple[int, int]], start: int, end: int) -> bool:
    """Does [start, end) lie inside one of `regions`?"""
    return any(a <= start and end <= b for a, b in regions)


def for_quote(text: str) -> str:
    """`text` ready to stand inside “…” in a message: its own double curly quotes become single
    ones, so the quote ends where the reader expects (“‘夜行者’因…” rather than ““夜行者”因…”)."""
    return text.replace("“", "‘").replace("”", "’")
