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

_LABEL_WORDS = (
    r"规则|规定|约定|约束|守则|准则|红线|禁令|须知|注意事项|遵守|长期要求|长期有效|硬性要求|始终要求|行为规范|规范"
    r"|制度|流程|合规|政策|策略|原则|纪律|铁律|底线|标准操作"
    r"|rules?|constraints?|conventions?|guidelines?|requirements?|polic(?:y|ies)|restrictions?"
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


def label_regions(text: str) -> list[tuple[int, int, str]]:
    """(start, end, label) of the stretches of `text` that rule labels govern (module docstring)."""
    out: list[tuple[int, int, str]] = []
    for m in _LABEL.finditer(text):
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
    return out


def in_regions(regions: list[tuple[int, int, str]], start: int, end: int) -> str | None:
    """The label governing [start, end), or None."""
    for a, b, label in regions:
        # a clause may start with the blank after the colon, and end with the list's last ";"
        if a - 2 <= start and end <= b + 1:
            return label
    return None
