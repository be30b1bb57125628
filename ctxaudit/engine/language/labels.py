"""Rule labels: the headings that make what follows them rules, whatever its wording.

People write rules as labelled lists and inline labels (issue 12 §2): "Rules:", "Conventions:",
"Standing constraints: do not push; use pnpm only", "约定：", "约束：不改 API。",
"团队约定（长期有效）：", "我要遵守：不泄露系统提示词；删文件前先确认。" A clause under such a label is a
rule even with no force word ("提交信息使用 Conventional Commits 格式", "No tabs in YAML files").

`label_regions(text)` returns the spans a label governs:
- a JSON list ("standing_rules": ["…", "…"]): up to its closing bracket;
- inline (text follows the label on its line): up to the end of that sentence (。.!?！？ or the
  line end; ；; and , do not end it, so "a; b; c." is one list);
- heading (the label ends its line): the following non-empty lines, up to a blank line, another
  heading (a line ending in a colon) or 40 lines.

A label is short (at most 40 characters from the start of its line or sentence) and names rules,
constraints or conventions; a plain "要求/requests" does not ("用户要求：修复登录 bug" reports a
request). Linear: one regex scan of the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_LABEL_WORDS = (
    r"规则|规矩|规定|约定|约束|守则|准则|红线|禁令|须知|注意事项|遵守|长期要求|长期有效|硬性要求|始终要求|行为规范|规范"
    r"|制度|流程|合规|政策|策略|原则|纪律|铁律|底线|标准|指令"
    r"|rules?|constraints?|conventions?|guidelines?|requirements?|polic(?:y|ies)|restrictions?|standards"
    r"|standing (?:instructions?|orders?)|remember|ground rules|must follow|do(?:'s| ?s)? and don'?ts"
    # procedures and service levels are rules too: "Rollout guardrail: abort if …", "Enterprise SLA
    # (standing): …", "Required procedure: …", "Data-protection limit in force: …"
    r"|\b(?:guardrails?|procedures?|protocols?|SLAs?|SLOs?|compliance|in force)\b|\(standing\)"
    r"|(?:的|条|点|项)(?:长期)?要求"
)
# The label: from a line start (after list markers) or a sentence start, ≤ 40 characters, holding a
# label word, ending in a colon.
_LABEL = re.compile(
    rf"(?:^|(?<=[\n。.!?！？；;{{,\[:：]))[ \t>*#\-•\d.)\"']*([^\n:：。!?！？]{{0,40}}?(?:{_LABEL_WORDS})[^\n:：。!?！？\-–—]{{0,48}})(?:[:：]|[ \t][-–—][ \t])[ \t]*",
    re.I,
)
_INLINE_END = re.compile(r"[。!?！？\n]|\.(?=\s|$)")
_MAX_LINES = 40


# An annotation that calls its sentence a rule: "every commit is preceded by a gofmt run (user's
# rule)", "(user's rule since the first turn) all prices …", "此后每条回复都要称呼客户姓名（长期有效）".
_ANNOTATION = re.compile(
    r"[(（]\s*((?:(?:the\s+)?users?['’]?s?['’]?\s+|standing\s+|house\s+|team\s+|project\s+)?"
    r"(?:rule|standing rule|standing instruction|standing|in force)\b[^()（）\n]{0,30}"
    r"|(?:用户的?|长期|团队)?(?:长期有效|规则|规定|约定)[^()（）\n]{0,10})[)）]",
    re.I,
)  # "(programming rules)" names a subject, not its sentence's status
_SENTENCE_START = re.compile(r"[。.!?！？\n;；]\s*")


def _annotated(text: str) -> list[tuple[int, int, str]]:
    out = []
    for m in _ANNOTATION.finditer(text):
        starts = [s.end() for s in _SENTENCE_START.finditer(text, 0, m.start())]
        start = starts[-1] if starts else 0
        end_m = _INLINE_END.search(text, m.end())
        end = end_m.start() if end_m else len(text)
        if m.start() - start <= 2:  # the annotation opens the sentence: it governs what follows
            start = m.end()
        out.append((start, end, m.group(1).strip()))
    return out


_WORDS = re.compile(_LABEL_WORDS, re.I)
_SEPARATOR = re.compile(r"[:：]|[ \t][-–—][ \t]")
_AROUND = 96  # a label's lead (≤ 40), label word and tail (≤ 48) before its separator


def _label_matches(text: str) -> Iterator[re.Match[str]]:
    """_LABEL.finditer(text), tried only before a colon (or " - ") that has a label word in the
    ~90 characters before it: a JSON log or a long chat has a sentence start after every comma and
    colon, and trying the label pattern at each of them — or scanning a 1 MB blob for label words —
    was most of the cost of labelling (issue 12: retention must not get slower)."""
    last = 0
    n = len(text)
    word: re.Match[str] | None = None  # the next label word at or after the window's start
    for sep in _SEPARATOR.finditer(text):
        p = sep.start()
        if p < last:
            continue
        lo = max(last, p - _AROUND)
        if word is None or word.start() < lo:
            word = _WORDS.search(text, lo)  # each stretch of text is scanned for words once
            if word is None:
                return
        if word.start() > p:
            continue
        m = _LABEL.search(text, lo, min(n, sep.end() + 64))
        if m is None:
            continue
        yield m
        last = m.end()


def label_regions(text: str) -> list[tuple[int, int, str]]:
    """(start, end, label) of the stretches of `text` that rule labels govern (module docstring),
    plus the sentences a rule annotation marks ("… (user's rule)")."""
    out: list[tuple[int, int, str]] = []
    for m in _label_matches(text):
        label = m.group(1).strip(" *_`\"'{[,")
        start = m.end()
        line_end = text.find("\n", start)
        line_end = len(text) if line_end < 0 else line_end
        if text.startswith("[", start):  # a JSON list of rules: "standing_rules": ["…", "…"]
            close = text.find("]", start)
            end = close if close >= 0 else line_end
        elif text[start:line_end].strip():
            end_m = _INLINE_END.search(text, start)
            end = end_m.start() if end_m else len(text)
        else:
            end = pos = line_end
            for _ in range(_MAX_LINES):
                if pos >= len(text):
                    break
                nxt = text.find("\n", pos + 1)
                nxt = len(text) if nxt < 0 else nxt
                line = text[pos + 1 : nxt].strip()
                if not line or line.endswith((":", "：")):
                    break
                end = pos = nxt
        if end > start:
            if out and start < out[-1][1]:
                continue  # nested in the previous label's region
            out.append((start, end, label))
    if "(" in text or "（" in text:
        out = sorted(out + [r for r in _annotated(text) if not any(a <= r[0] < b for a, b, _ in out)])
    return out


def in_regions(regions: list[tuple[int, int, str]], start: int, end: int) -> str | None:
    """The label governing [start, end), or None."""
    for a, b, label in regions:
        # a clause may start with the blank after the colon, and end with the list's last ";"
        if a - 2 <= start and end <= b + 1:
            return label
    return None
