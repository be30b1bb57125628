"""Find the rules in force when an event gives none (issue 2 "Checks in this issue").

Two sources:

- **System and developer messages** (`source="system"`): the items of a list under a heading that
  names rules ("安全规则（任何时候都不得违反）：", "Rules:", "Constraints:") are rules whatever their
  wording; elsewhere, list items and sentences that carry a prohibition, an obligation, a
  restriction ("只能/only") or a "should" are rules (seed 000 §1.2: rules are "禁止删除" "必须确认"
  "不得输出"). Role descriptions ("你是订单助手。") and headings are not.
- **The user's standing instructions** (`source="user"`), told apart from one-off requests.
  Calibrated on shared/samples/real/claude-md-exports, whose sessions have no system prompt:
  * standing: a sentence with a standing marker — "Always…", "Never…", "From now on…", "Whenever…",
    "以后都…", "今后…", "每次…", "始终…", "永远…" — or with a hard prohibition/obligation that is not a
    casual "don't" ("禁止/不得/严禁/必须/务必/must/must not/shall"): "Always use AI.md for programming
    rules." is a rule for the whole session;
  * one-off: anything about this turn — a one-off marker ("yet", "for now", "first", "this time",
    "先", "暂时", "这次"), a plain "don't/不要/别" without a standing marker, a question, a request
    ("implement option A"). "Don't code yet. Show me solution" is a one-off.
  Session summaries ("This session is being continued…"), tool/IDE wrappers (<ide_selection>,
  <system-reminder>, <command-…>), fenced code and quoted output are not the user's instructions.

Ids are stable: `rule_id_for` hashes the normalised text ("X-" + 8 hex), so the same rule in the same
project (or anywhere) gets the same id, whatever its whitespace, punctuation or width.
"""

from __future__ import annotations

import hashlib
import re

from ctxaudit.engine.language.constraints import FORCE, ONE_OFF, STANDING, Clause, base_matcher, fold, parse
from ctxaudit.engine.language.lexicon import Force
from ctxaudit.engine.language.normalize import normalize
from ctxaudit.engine.types import Context, Rule, Severity

MIN_LEN = 4
MAX_LEN = 600

_ITEM = re.compile(
    r"^\s*(?:\(?\d{1,3}[.)、．]|（\d{1,3}）|[一二三四五六七八九十]{1,3}[、.]|[-*•·]|[a-z][.)])\s+|^\s*(?:\d{1,3}[、．]|[一二三四五六七八九十]{1,3}、)"
)
_HEADING_WORDS = re.compile(
    r"规则|规定|要求|约束|限制|禁止事项|注意事项|红线|守则|准则|政策|rules?\b|constraints?|policy|policies|guidelines?|requirements?|restrictions?|must|do not|don't|never",
    re.I,
)
_SENTENCE = re.compile(r"[^。！？!?；;\n]+[。！？!?；;]?|(?<=[.])\s")
_EN_SENTENCE = re.compile(r"(?<=[^\s\d][.])\s+")
_WRAPPERS = re.compile(
    r"<(ide_selection|ide_opened_file|system-reminder|command-name|command-message|command-args|local-command-stdout|local-command-stderr|bash-stdout|bash-stderr|user-prompt-submit-hook)>.*?</\1>",
    re.S,
)
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_NOT_INSTRUCTIONS = (
    "this session is being continued from a previous conversation",
    "[request interrupted",
    "caveat: the messages below were generated",
)
_CASUAL_DONT = {"don't", "do not", "dont", "不要", "别", "请勿", "不用"}
SYSTEM_FORCES = (Force.PROHIBITION, Force.OBLIGATION, Force.RESTRICTION, Force.SHOULD)
USER_HARD = (Force.PROHIBITION, Force.OBLIGATION)  # "save only useful chats" is a request, not a rule
# Pasted logs, paths and file names are not instructions even when a word in them reads "always".
_DATA_LINE = re.compile(
    r'"\s*:\s*["\d\[{tfn]|^\s*[\w.-]+\s*=\s*\S|^\s*(?:def|class)\s+\w+\s*[(:]'
    r"|^\s*(?:import\s+[\w.]+\s*$|from\s+[\w.]+\s+import\b)|^\s*(?:const|let|var)\s+\w+\s*="
)
_NOT_PROSE = re.compile(
    r"\t|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}| - (?:INFO|DEBUG|WARNING|ERROR) - |\w-(?:always|never)\b|\b(?:always|never)-\w|\.\w{1,4}\s*\(\d"
)


def rule_id_for(text: str) -> str:
    """Stable id for an extracted rule: same normalised text → same id ("X-" + 8 hex of SHA-1).

    normalize() folds width, case, whitespace and punctuation, so "禁止删除订单。" and "禁止 删除订单"
    share an id. Deterministic across processes and projects.
    """
    return "X-" + hashlib.sha1(normalize(text).encode()).hexdigest()[:8]  # noqa: S324 - an id, not a secret


def _strongest(clauses: list[Clause]) -> Clause | None:
    from ctxaudit.engine.language.lexicon import FORCE_LEVEL

    forced = [c for c in clauses if c.force is not Force.NONE and c.force is not Force.PERMISSION]
    return max(forced, key=lambda c: FORCE_LEVEL[c.force], default=None)


def _sentences(line: str) -> list[str]:
    out = []
    for part in _SENTENCE.findall(line):
        for piece in _EN_SENTENCE.split(part):
            piece = piece.strip()
            if piece:
                out.append(piece)
    return out


def _clean(text: str) -> str:
    return text.strip().strip("*_`> ").strip()


def _system_rules(content: str) -> list[str]:
    out: list[str] = []
    under_heading = False
    for raw in _FENCE.sub("", content).splitlines():
        line = raw.strip()
        if not line:
            continue
        item = _ITEM.match(line)
        if item is None and line.rstrip().endswith((":", "：")):
            under_heading = bool(_HEADING_WORDS.search(line))
            continue
        if item is not None:
            text = _clean(line[item.end() :])
            if len(text) < MIN_LEN:
                continue
            strongest = _strongest(parse(text))
            if under_heading or (strongest is not None and strongest.force in SYSTEM_FORCES):
                out.append(text)
            continue
        under_heading = False
        for sentence in _sentences(line):
            sentence = _clean(sentence)
            if len(sentence) < MIN_LEN:
                continue
            strongest = _strongest(parse(sentence))
            if strongest is not None and strongest.force in SYSTEM_FORCES:
                out.append(sentence)
    return out


_HARD_VALUES = {f.value for f in USER_HARD}
_WEAK_ONE_OFF = {"first", "先", "today", "at the moment"}
_NARRATIVE_SUBJECT = re.compile(r"^(?:it|this|that|he|she|they|there|它|他|她|这|那)\b", re.I)


def is_standing(sentence: str) -> bool:
    """Is this user sentence a standing instruction (see module docstring)?

    "Always use AI.md for programming rules." → True; "Don't code yet. Show me solution" → False;
    "From now on, answer in English." → True; "先不要写代码" → False; "你必须用中文回答" → True.
    """
    folded = fold(sentence).strip()
    if folded.endswith(("?", "？")) or _NARRATIVE_SUBJECT.match(folded) or _NOT_PROSE.search(folded):
        return False
    hits = base_matcher().scan(folded)
    standing = any(cat == STANDING for h in hits for cat, _ in h.tags)
    if not standing and not any(cat == FORCE and val in _HARD_VALUES for h in hits for cat, val in h.tags):
        return False  # the common case, decided without parsing
    one_off = [val for h in hits for cat, val in h.tags if cat == ONE_OFF]
    if any(v not in _WEAK_ONE_OFF for v in one_off) or (one_off and not standing):
        return False
    if standing:
        return True
    strongest = _strongest(parse(sentence))
    if strongest is None:
        return False
    return strongest.force in USER_HARD and fold(strongest.force_word).strip() not in _CASUAL_DONT


def _user_rules(content: str) -> list[str]:
    low = content.lstrip().lower()
    if low.startswith(_NOT_INSTRUCTIONS):
        return []
    text = _FENCE.sub("", _WRAPPERS.sub("", content))
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if (
            not line
            or line.startswith((">", "$", "(venv)", "Traceback", 'File "', "{", "[", "<", "|", "#!"))
            or _DATA_LINE.search(line)
        ):
            continue  # quoted output, shell, pasted JSON/tables/markup: data, not instructions
        item = _ITEM.match(line)
        if item is not None:
            line = line[item.end() :]
        for sentence in _sentences(line):
            sentence = _clean(sentence)
            if MIN_LEN <= len(sentence) <= MAX_LEN and is_standing(sentence):
                out.append(sentence)
    return out


def extract_rules(ctx: Context) -> list[Rule]:
    """Rules in the system/developer messages, then the user's standing instructions.

    Returns Rules in order of first appearance, deduplicated by id; system rules have severity
    high and source "system", user standing instructions severity medium and source "user".
    Summaries (kind "summary"/"compact_summary") and assistant/tool messages are not read.
    """
    seen: set[str] = set()
    rules: list[Rule] = []
    for m in ctx.messages:
        if (m.kind or "") in ("summary", "compact_summary", "history_summary", "compaction_summary"):
            continue
        if m.role in ("system", "developer"):
            texts, source, severity = _system_rules(m.content), "system", Severity.HIGH
        elif m.role == "user":
            texts, source, severity = _user_rules(m.content), "user", Severity.MEDIUM
        else:
            continue
        for text in texts:
            if len(text) > MAX_LEN:
                continue
            rid = rule_id_for(text)
            if rid not in seen:
                seen.add(rid)
                rules.append(Rule(id=rid, text=text, severity=severity, source=source))
    return rules
