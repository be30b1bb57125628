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

Phase instructions (issue 12 §2): "Don't code yet", "Do not code yet, before brainstorm",
"先不要写代码" bind until the user approves a plan or tells the agent to go on ("implement option A",
"start implementation", "开始实现"). `extract_instructions` returns both kinds with what ends them
and where they ended; `extract_rules` keeps a phase instruction only while it is open, and
`open_rules` drops a rule set's phase instructions that a context shows closed — so a closed one is
neither reported lost nor enforced.

Ids are readable (issue 15): the rule's first words ("always-use-ai-md-for", "禁止删除订单"), else
"user-1"/"system-3". The same normalised text gets the same id (`rule_id_for`); `extract_rules`
keeps ids unique within a session — `known` (id → text, the session's rules so far) reuses a known
text's id and suffixes a new text whose words collide ("always-use-ai-md-for-2").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ctxaudit.engine.language.constraints import FORCE, ONE_OFF, STANDING, Clause, base_matcher, fold, parse
from ctxaudit.engine.language.lexicon import Force
from ctxaudit.engine.language.normalize import nfkc, normalize
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


_SLUG_WORD = re.compile(r"[a-z0-9]+")
_SLUG_CJK = re.compile(r"[\u3400-\u9fff]+")
_SLUG_CJK_PIECE = re.compile(r"[\u3400-\u9fff]+|[a-z0-9]+")
SLUG_WORDS = 5
SLUG_CJK_CHARS = 8


def rule_id_for(text: str) -> str:
    """Readable id for an extracted rule from its first words: "Always use AI.md for coding rules."
    → "always-use-ai-md-for"; "禁止删除任何业务数据。" → "禁止删除任何业务"; "" (no letters) → "".

    Deterministic: normalize() folds width, case, whitespace and punctuation first, so "禁止删除订单。"
    and "禁止 删除订单" share an id. Not unique by itself: see `unique_id`.
    """
    folded = nfkc(text).casefold().replace("'", "").replace("’", "")
    head = folded.lstrip()
    cjk = _SLUG_CJK.match(head)
    if cjk is not None or (head and _SLUG_CJK.match(normalize(head)) is not None):
        # Latin words and numbers stay in (as whole pieces): "退款金额超过 500 元必须转人工审核"
        # → "退款金额超过500元", not "退款金额超过元必" (the amount is what tells two rules apart).
        out = ""
        pieces = _SLUG_CJK_PIECE.findall(normalize(folded))
        for k, piece in enumerate(pieces):
            if len(out) >= SLUG_CJK_CHARS:
                break
            out += piece if piece.isascii() else piece[: SLUG_CJK_CHARS - len(out)]
            if len(out) >= SLUG_CJK_CHARS and k + 1 < len(pieces) and pieces[k + 1].isdigit():
                out += pieces[k + 1]  # the number right after the cut ("不得超过" + "2000")
        return out
    words = _SLUG_WORD.findall(folded)[:SLUG_WORDS]
    return "-".join(words)[:60]


def unique_id(text: str, source: str, known: dict[str, str], counter: dict[str, int]) -> str:
    """The id of `text` in a session whose rules so far are `known` (id → text): the id a known
    rule with the same normalised text has; else rule_id_for(text), suffixed "-2", "-3"… while
    another text holds it; else f"{source}-{n}" for a text without words. Adds the id to `known`."""
    norm = normalize(text)
    for rid, other in known.items():
        if normalize(other) == norm:
            return rid
    base = rule_id_for(text)
    if not base:
        counter[source] = counter.get(source, 0) + 1
        base = f"{source}-{counter[source]}"
    rid, n = base, 1
    while rid in known:
        n += 1
        rid = f"{base}-{n}"
    known[rid] = text
    return rid


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


# A label that makes what follows a rule in a user message: "约束：…", "House rule: …", "团队约定（长期有效）：…".
_RULE_LABEL = re.compile(
    r"^\s*(?:(?:house|team|project|standing|coding|our)\s+)?(?:rules?|constraints?|polic(?:y|ies)|conventions?|guidelines?)\s*[:：]\s*"
    r"|^\s*(?:[\u4e00-\u9fff]{0,4})(?:约束|规则|规定|红线|约定|守则|要求)(?:（[^）]{0,8}）)?\s*[:：]\s*",
    re.I,
)


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
        label = _RULE_LABEL.match(line)
        if label is not None:
            # "约束：不改数据库表结构。需求是…", "House rule: no force-pushes to shared branches." — the
            # first sentence after a rule label is a rule whatever its wording (issue 12 §2)
            first = next(iter(_sentences(line[label.end() :])), "")
            first = _clean(first)
            if MIN_LEN <= len(first) <= MAX_LEN and not first.rstrip().endswith(("?", "？")):
                out.append(first)
            continue
        for sentence in _sentences(line):
            sentence = _clean(sentence)
            if MIN_LEN <= len(sentence) <= MAX_LEN and is_standing(sentence):
                out.append(sentence)
    return out


def extract_rules(ctx: Context, known: Mapping[str, str] | None = None) -> list[Rule]:
    """Rules in the system/developer messages, then the user's standing instructions and the phase
    instructions still open at the end of `ctx`.

    Returns Rules in order of first appearance, deduplicated by text; system rules have severity
    high and source "system", user instructions severity medium and source "user". Summaries
    (kind "summary"/"compact_summary") and assistant/tool messages are not read. known: the
    session's rules so far (id → text), so ids stay unique and stable across the session.
    """
    taken = dict(known or {})
    counter: dict[str, int] = {}
    seen: set[str] = set()
    rules: list[Rule] = []
    closed_cache: list[set[str]] = []

    def closed() -> set[str]:  # read the whole context for closers only when a phase instruction occurs
        if not closed_cache:
            closed_cache.append(
                {i.text for i in extract_instructions(ctx) if i.kind == "phase" and i.closed_at is not None}
            )
        return closed_cache[0]

    for m in ctx.messages:
        if (m.kind or "") in _SUMMARY_KINDS:
            continue
        if m.role in ("system", "developer"):
            texts, source, severity = _system_rules(m.content), "system", Severity.HIGH
        elif m.role == "user":
            phase = _phase_texts(m.content)
            texts = _user_rules(m.content) + [t for t in phase if t not in closed()]
            source, severity = "user", Severity.MEDIUM
        else:
            continue
        for text in texts:
            norm = normalize(text)
            if len(text) > MAX_LEN or norm in seen:
                continue
            seen.add(norm)
            rid = unique_id(text, source, taken, counter)
            rules.append(Rule(id=rid, text=text, severity=severity, source=source))
    return rules


_SUMMARY_KINDS = ("summary", "compact_summary", "history_summary", "compaction_summary")

# A phase instruction: a prohibition for now — "Don't code yet", "do not code yet, before
# brainstorm", "not until I approve", "先不要写代码", "在我确认之前不要部署".
_PHASE = re.compile(
    r"\b(?:don'?t|do not|never)\b[^.!?\n]{0,40}?\b(?:yet|until|before|for now|till)\b"
    r"|\bnot (?:yet|until)\b"
    r"|(?:先|暂时|暂且)(?:不要|别|不|勿)|(?:之前|以前)(?:不要|别|不|勿)|(?:不要|别|不)[^。！？\n]{0,12}?(?:之前|以前|再说)",
    re.I,
)
# What ends one: the user approves, picks an option or tells the agent to go on.
_PHASE_CLOSER = re.compile(
    r"^\s*(?:ok[,.!\s]|okay|yes|go ahead|proceed|approved?|lgtm|sounds good|do it|let'?s (?:do|go|implement|start))"
    r"|\b(?:implement|start (?:the )?implementation|start coding|start phase|go ahead|approved?|option [a-z0-9])\b"
    r"|开始(?:实现|实施|写|编码|开发)|可以(?:写|开始|动手|实现)|就这么(?:做|办)|同意|批准|按(?:这个|此|方案)",
    re.I,
)
PHASE_ENDS = "until the user approves a plan or says to go on / 直到用户批准方案或让助手继续"


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction a user gave: kind "standing" (binds the whole session) or "phase" (binds
    until `ends`); message_index: where it was given; closed_at: the user message that ended a
    phase instruction, or None while it is open (standing instructions are never closed)."""

    text: str
    kind: str
    message_index: int
    ends: str | None = None
    closed_at: int | None = None


def _phase_texts(content: str) -> list[str]:
    text = _FENCE.sub("", _WRAPPERS.sub("", content))
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith((">", "$", "{", "[", "<", "|")) or _DATA_LINE.search(line):
            continue
        for sentence in _sentences(line):
            sentence = _clean(sentence)
            if (
                MIN_LEN <= len(sentence) <= MAX_LEN
                and _PHASE.search(sentence)
                and not sentence.endswith(("?", "？"))
            ):
                out.append(sentence)
    return out


def extract_instructions(ctx: Context) -> list[Instruction]:
    """The user's standing and phase instructions in `ctx`, in order, with where each phase
    instruction was closed (the first later user message that approves or says to go on)."""
    out: list[Instruction] = []
    users = [
        (i, m)
        for i, m in enumerate(ctx.messages)
        if m.role == "user"
        and (m.kind or "") not in _SUMMARY_KINDS
        and not m.content.lstrip().lower().startswith(_NOT_INSTRUCTIONS)
    ]
    for n, (i, m) in enumerate(users):
        for text in _user_rules(m.content):
            out.append(Instruction(text, "standing", i))
        for text in _phase_texts(m.content):
            closed = next(
                (j for j, later in users[n + 1 :] if _PHASE_CLOSER.search(later.content[:400])), None
            )
            out.append(Instruction(text, "phase", i, PHASE_ENDS, closed))
    return out


def open_rules(rules: tuple[Rule, ...], ctx: Context) -> tuple[Rule, ...]:
    """`rules` without the phase instructions that `ctx` shows closed (a rule set carried over from
    earlier in a session keeps "Don't code yet" after the user approved the plan; this drops it)."""
    if not any(_PHASE.search(r.text) for r in rules):
        return rules  # the common case: no phase instruction in the set, nothing to read
    closed = {
        normalize(i.text) for i in extract_instructions(ctx) if i.kind == "phase" and i.closed_at is not None
    }
    if not closed:
        return rules
    return tuple(r for r in rules if normalize(r.text) not in closed)
