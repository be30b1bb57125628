"""Rule retention (seed 000 §4.4 check_rules_retained, done beyond substring matching; issue 2
"Retention per rule", issue 3 "Drift").

For each rule in force:
1. Verbatim: the rule's text, folded (width, case) and squeezed (whitespace and punctuation
   removed), occurs inside one instruction message → retained, strength 1.
2. Otherwise each clause of the rule (constraints.parse) is looked up through an inverted index
   of the context's sentences (concept → sentences), the best few candidates are compared with
   drift.compare_clause (1- and 2-sentence windows, so a rule split across two sentences matches,
   and two rules merged into one sentence each match it), and the results combine into
   retained (faithful paraphrase) / weakened (strength, what was lost) / missing.

Only instruction text counts (brief: rules are searched where they act as instructions):
system, developer and user messages, and messages whose `kind` marks a summary. An assistant
saying "根据规则，我不能删除订单" or tool output does not keep a rule alive.

Role: `role_before`/`role_after` are the roles the rule is found in. A rule that was in the
system/developer role before (or, when the before-context no longer holds it, a rule from the
event or project rule set) and is found after only in other roles is *demoted* (seed 000 §3.2).

Cost: linear in the context (one fold, one regex sentence split, one Aho–Corasick scan per
instruction message, only when a rule is not found verbatim); per rule a bounded number of
candidates (TOP_K sentences) is parsed and compared. No pairwise loop over sentences.

Known false positives/negatives: see checks/drift.py.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from typing import TYPE_CHECKING

from ctxaudit.engine.checks.drift import (
    IDENT_WEIGHT,
    ClauseDrift,
    RulePart,
    compare_clause,
    is_chinese,
    related,
    rule_part,
)
from ctxaudit.engine.language.constraints import Clause, Matcher, acronyms, fallback_tokens, fold, parse
from ctxaudit.engine.language.labels import in_regions, label_regions
from ctxaudit.engine.language.lexicon import FORCE_LEVEL, Force, Kind
from ctxaudit.engine.language.normalize import KEPT_RUNS, without_punctuation
from ctxaudit.engine.language.quotes import inside, quoted_regions
from ctxaudit.engine.types import Context, Message, Rule, RuleResult, RuleState, Span

if TYPE_CHECKING:
    from ctxaudit.engine.analysis import Analysis

INSTRUCTION_ROLES = ("system", "developer", "user")
SYSTEM_ROLES = ("system", "developer")
SUMMARY_KINDS = frozenset({"summary", "compact_summary", "history_summary", "compaction_summary"})
TOP_K = 10  # candidate sentences compared per rule clause
# A retold rule (issue 12 §4) keeps this share of its strength, scaled by how much of it is named:
# below advice (0.45) and caution (0.35) — a record that someone once asked, not a reminder.
RETOLD_LEVEL = 0.2
RETOLD_MIN = 0.5  # the retelling must name at least half of the rule clause's weighted content
MAX_SENTENCE = 400  # longer sentences (minified JSON, no punctuation) are cut into chunks
CHUNK = 300
MAX_POSTINGS = 4000  # per concept and side: bounds the work on adversarial repetitive contexts
MAX_POSTINGS_OTHER = 1500  # the same, counted for user/summary messages (rules mostly live in system)

# A sentence also ends with a JSON string ("…", "…"]): each item of a structured summary's list
# ("constraints": ["…", "…"]) is a statement of its own, not one sentence with its neighbours.
_SENT_END = re.compile(r"[。！？；;!?\n]|(?<=[^\s\d])\.(?=\s)|(?<=[^\\]\")\s*[,\]}]+\s*(?=[\"\]},]|$)")
# The same for a text without a '"' (most prose): the JSON branch cannot match there, and without it
# the pattern begins with one character class, which the regex engine skips to at C speed.
_SENT_END_PROSE = re.compile(r"[。！？；;!?\n.](?:(?<!\.)|(?<=[^\s\d]\.)(?=\s))")


# Markers that state a constraint as in force from here on, even inside narrative (issue 12 §4:
# "from now on the user wants every answer in French" keeps the rule).
_STANDING_NOW = re.compile(
    r"\b(?:from now on|going forward|from this point on|in (?:the )?future|at all times|every time|whenever"
    r"|every (?:morning|evening|night|day|week|weekday|monday|friday)|each (?:morning|day|week))\b"
    r"|从现在开始|从现在起|从今以后|今后|以后都|始终|一律|每次|每天|每日|每晚|每周|每个工作日"
)
# A retelling keeps a rule's polarity: "the user likes pnpm" retells "use pnpm"; "用户提出删除订单的诉求"
# is the opposite of "禁止删除订单" and retells nothing. A topic ("we discussed the scan") has none.
_NEGATION = re.compile(
    r"\b(?:not|never|no|don't|doesn't|didn't|won't|avoid(?:ed|s)?|without|against|careful|cautious|sensitive)\b"
    r"|n't\b|不|别|没|勿|禁|免|拒绝|谨慎|小心|敏感"
)  # a caution ("be careful about emailing customers", "infra/ is a sensitive area") retells a "never"
_TOPIC = re.compile(
    r"\b(?:discuss(?:ed|es|ing|ion)?|talked about|talk about|mentioned|brought up|topic|regarding|in connection with)\b"
    r"|讨论|谈到|聊到|提到|提及|话题|关于"
)


# What makes narrative a retelling: someone asked/wanted/said it, likes/prefers it, or it was a topic.
_RETELL_CUE = re.compile(
    r"\b(?:asked|requested|wanted|wants|told|said|instructed|insisted|reminded|likes|liked|prefers|preferred|"
    r"preference|preferences|favou?rs|careful|cautious|sensitive)\b|要求|让我|叫我|希望|提出|说过|交代|嘱咐|偏好|喜欢|倾向|习惯"
    r"|谨慎|小心|敏感"
)


# Nouns and participles that state a cap (a number follows): not "within"/"under", which narrate too.
_CAP = re.compile(r"上限|封顶|\bcapped at\b|\ba cap of\b|\bthe cap is\b|\bmaximum of\b|\bmax(?:imum)?\s*[:=]")


_PRESENT = re.compile(
    r"\b(?:is|are|gets?|goes|go|stays?|remains?|receives?|starts?|begins?|ends?|carries|carry|includes?)\b"
)
_PAST = re.compile(
    r"\b(?:was|were|had|did|has been|have been|yesterday|earlier|already|previously|last)\b|了|过|已|曾"
)


def _generic_present(folded_clause: str) -> bool:
    """Is this clause a present-tense statement (English "is/are/gets…", Chinese "都…" without an
    aspect marker of the past), i.e. a description of how things always go, not of what happened?"""
    if _PAST.search(folded_clause):
        return False
    return _PRESENT.search(folded_clause) is not None or "都" in folded_clause


def _retells(rc: Clause, folded_window: str, window_base: int, carriers: list[Clause]) -> bool:
    """Do these narrative clauses retell the rule clause: forceless, not quoted, with a retelling cue
    (a past request, a preference) of the same polarity, or as a topic?"""
    for c in carriers:
        if c.quoted or c.question or c.force is not Force.NONE:
            return False
    text = " ".join(folded_window[c.start - window_base : c.end - window_base] for c in carriers)
    if _TOPIC.search(text):
        return True
    if not _RETELL_CUE.search(text):
        return False  # "你是订单助手，负责处理订单查询" describes a role; it retells no rule
    negated = _NEGATION.search(text) is not None
    return negated == (rc.force is Force.PROHIBITION)


def _names_identifiers(rc: Clause, d: ClauseDrift, fallback: dict[str, float]) -> bool:
    """Does the text name every identifier of the rule clause ("infra/", "AI.md")? A retelling that
    names the very path or file is about this rule even when it names little else."""
    idents = [c for c in rc.concepts if fallback.get(c, 0.0) >= IDENT_WEIGHT]
    named = {cid for cl in d.matched for cid in cl.concepts}
    return bool(idents) and all(c in named for c in idents)


def _names_core_action(rc: Clause, d: ClauseDrift, rule_text: str) -> bool:
    """Does the text name what the rule clause asks to be done (its action, or a relative of it)?
    "用户已获得财务主管授权，要求转账" names the manager and the transfer of "任何转账都必须经过财务主管
    二次确认" but no confirmation: a claim about the rule's subject, not a retelling of the rule.
    What "必须经过/须经" governs is then the action to name; an action word right after a
    quantifier ("所有回复", "every reply") is a thing, not what is asked."""
    named = {cid for cl in d.matched for cid in cl.concepts}

    def verb(c: str) -> bool:
        if c not in rc.actions or c.startswith("fb:"):
            return False
        start = rc.concepts[c][0]
        return not any(rule_text[:start].rstrip().endswith(w) for w in rc.scope)

    governed = [c for c in rc.condition if verb(c)] if "经" in rc.force_word else []
    actions = governed or [c for c in rc.core if verb(c)]
    return not actions or any(related(c) & named for c in actions)


def is_instruction(m: Message) -> bool:
    """Does this message act as an instruction to the model (see module docstring)?"""
    return m.role in INSTRUCTION_ROLES or (m.kind or "") in SUMMARY_KINDS


def squeeze(folded: str) -> str:
    return without_punctuation(folded)


@dataclass(frozen=True, slots=True)
class _Located:
    a: int
    b: int

    def start(self) -> int:
        return self.a

    def end(self) -> int:
        return self.b


@lru_cache(maxsize=256)
def _runs(folded: str) -> tuple[list[int], list[int], str]:
    """(where each unsqueezed run starts in the squeezed text, where it starts in `folded`, the
    squeezed text): one split of a message, shared by every rule located in it."""
    offsets: list[int] = []
    starts: list[int] = []
    parts: list[str] = []
    n = 0
    for m in KEPT_RUNS.finditer(folded):
        offsets.append(n)
        starts.append(m.start())
        parts.append(m.group())
        n += len(parts[-1])
    return offsets, starts, "".join(parts)


@dataclass(frozen=True, slots=True)
class Locator:
    """Finds a squeezed rule text in folded text: the leftmost span whose characters are the
    rule's with only punctuation/space between, as the regex c1 P* c2 P* … cn would. Compiling
    that regex (the punctuation class once per character: ~2,500 characters for a 36-character
    rule) made the first check of a rule set twice as slow as the next (issue 13)."""

    squeezed: str

    def finditer(self, folded: str) -> Iterator[_Located]:
        """Every non-overlapping span, left to right, as re.finditer would give them."""
        if not self.squeezed:
            return
        offsets, starts, squeezed = _runs(folded)
        i = squeezed.find(self.squeezed)
        while i >= 0:
            j = i + len(self.squeezed) - 1
            k, k2 = bisect_right(offsets, i) - 1, bisect_right(offsets, j) - 1
            yield _Located(starts[k] + i - offsets[k], starts[k2] + j - offsets[k2] + 1)
            i = squeezed.find(self.squeezed, j + 1)

    def search(self, folded: str) -> _Located | None:
        """The leftmost span, as re.search would give it."""
        return next(self.finditer(folded), None)


def _role_rank(role: str) -> int:
    return 2 if role in SYSTEM_ROLES else 1


@dataclass(slots=True)
class _Window:
    pos: int  # index into SideIndex.msgs
    sentences: tuple[int, ...]


class SideIndex:
    """The instruction messages of one side, indexed lazily (fold, squeeze, sentence postings)."""

    def __init__(
        self,
        ctx: Context,
        side: str,
        matcher: Matcher,
        index_matcher: Matcher | None = None,
        fold_message: Callable[[int], str] | None = None,
        also: frozenset[int] = frozenset(),
    ) -> None:
        """fold_message: the folded text of a message by its index in `ctx` (Analysis.folded, so the
        pair is folded once for every check); default: fold it here. also: indexes of other
        messages searched as well (the summaries a compressor wrote in the assistant role)."""
        self.side = side
        self.matcher = matcher
        self.index_matcher = index_matcher or matcher
        self.msgs: list[tuple[int, Message]] = [
            (i, m) for i, m in enumerate(ctx.messages) if is_instruction(m) or i in also
        ]
        self._fold_message = fold_message
        self._folded: dict[int, str] = {}
        self._squeezed: dict[int, str] = {}
        self._starts: dict[int, list[int]] = {}
        self._parsed: dict[tuple[int, int], list[Clause]] = {}
        self._labels: dict[int, list[tuple[int, int, str]]] = {}
        self._quoted: dict[int, list[tuple[int, int]]] = {}
        self.postings: dict[str, list[tuple[int, int]]] | None = None
        self._joined: tuple[str, list[int]] | None = None

    # -- text ---------------------------------------------------------------------------------
    def folded(self, pos: int) -> str:
        f = self._folded.get(pos)
        if f is None:
            i, m = self.msgs[pos]
            f = self._folded[pos] = self._fold_message(i) if self._fold_message else fold(m.content)
        return f

    def squeezed(self, pos: int) -> str:
        s = self._squeezed.get(pos)
        if s is None:
            s = self._squeezed[pos] = squeeze(self.folded(pos))
        return s

    def holding(self, rule_sq: str) -> list[int]:
        """The positions of the messages whose squeezed text holds `rule_sq`, in order: one search
        of the side's squeezed texts joined by NUL (no squeezed text of a rule spans it), not one
        per message."""
        if "\x00" in rule_sq:
            return [pos for pos in range(len(self.msgs)) if rule_sq in self.squeezed(pos)]
        if self._joined is None:
            parts = [self.squeezed(pos) for pos in range(len(self.msgs))]
            offsets, at = [], 0
            for part in parts:
                offsets.append(at)
                at += len(part) + 1
            self._joined = ("\x00".join(parts), offsets)
        joined, offsets = self._joined
        out: list[int] = []
        i = joined.find(rule_sq)
        while i >= 0:
            pos = bisect_right(offsets, i) - 1
            out.append(pos)
            i = joined.find(rule_sq, offsets[pos + 1]) if pos + 1 < len(offsets) else -1
        return out

    def verbatim(self, rule_sq: str, locate: Locator) -> tuple[int, int, int] | None:
        """(pos, start, end) of the rule's text in an instruction message; system roles first."""
        found: tuple[int, int, int] | None = None
        for pos in self.holding(rule_sq):
            m = self.msgs[pos][1]
            quoted = self.quoted(pos)
            hit = next(
                (h for h in locate.finditer(self.folded(pos)) if not inside(quoted, h.start(), h.end())), None
            )  # a copy inside a quoted old message is not the rule (quotes.py)
            if hit is None:
                continue
            if found is None or _role_rank(m.role) > _role_rank(self.msgs[found[0]][1].role):
                found = (pos, hit.start(), hit.end())
            if m.role in SYSTEM_ROLES:
                break
        return found

    # -- sentence index -----------------------------------------------------------------------
    def quoted_copy(self, rule_sq: str, locate: Locator) -> tuple[int, int, int] | None:
        """(pos, start, end) of the rule's text inside quoted material (an "All user messages"
        list, a user's quoted question): words someone once wrote, not an instruction."""
        for pos in self.holding(rule_sq):
            quoted = self.quoted(pos)
            hit = next(
                (h for h in locate.finditer(self.folded(pos)) if inside(quoted, h.start(), h.end())), None
            )
            if hit is not None:
                return pos, hit.start(), hit.end()
        return None

    def starts(self, pos: int) -> list[int]:
        st = self._starts.get(pos)
        if st is None:
            f = self.folded(pos)
            ends = _SENT_END if '"' in f else _SENT_END_PROSE
            raw = [0, *[m.end() for m in ends.finditer(f)]]
            raw.append(len(f))
            st = []
            for a, b in zip(raw, raw[1:], strict=False):
                if b - a > MAX_SENTENCE:
                    st.extend(range(a, b, CHUNK))
                elif b > a or not st:
                    st.append(a)
            self._starts[pos] = st or [0]
            st = self._starts[pos]
        return st

    def labels(self, pos: int) -> list[tuple[int, int, str]]:
        """The rule-label regions of one message (labels.py), computed once."""
        got = self._labels.get(pos)
        if got is None:
            got = self._labels[pos] = label_regions(self.msgs[pos][1].content)
        return got

    def quoted(self, pos: int) -> list[tuple[int, int]]:
        """The quoted-material spans of one message (quotes.py), computed once."""
        got = self._quoted.get(pos)
        if got is None:
            got = self._quoted[pos] = quoted_regions(self.msgs[pos][1].content)
        return got

    def sentence_span(self, pos: int, si: int) -> tuple[int, int]:
        st = self.starts(pos)
        end = st[si + 1] if si + 1 < len(st) else len(self.folded(pos))
        return st[si], end

    def build(self) -> dict[str, list[tuple[int, int]]]:
        """Concept → [(message pos, sentence index)], one scan per message."""
        if self.postings is not None:
            return self.postings
        postings: dict[str, list[tuple[int, int]]] = {}
        for pos, (_, m) in enumerate(self.msgs):
            cap = MAX_POSTINGS if m.role in SYSTEM_ROLES else MAX_POSTINGS_OTHER
            f = self.folded(pos)
            st = self.starts(pos)
            for start, concepts in self.index_matcher.scan_concepts(f):
                key = (pos, bisect_right(st, start) - 1)
                for cid in concepts:
                    lst = postings.get(cid)
                    if lst is None:
                        postings[cid] = [key]
                    elif lst[-1] != key and len(lst) < cap:
                        lst.append(key)
        self.postings = postings
        return postings

    def clauses(self, pos: int, si: int) -> list[Clause]:
        key = (pos, si)
        got = self._parsed.get(key)
        if got is None:
            a, b = self.sentence_span(pos, si)
            content = self.msgs[pos][1].content
            got = parse(content[a:b], self.matcher, base=a, folded=self.folded(pos)[a:b])
            regions = self.labels(pos)
            quoted = self.quoted(pos)
            out = []
            for c in got:
                label = in_regions(regions, c.start, c.end) if regions else None
                if quoted and inside(quoted, c.start, c.end):
                    # a quoted old message or question: a record of what was said (quotes.py)
                    c = replace(c, force=Force.NONE, force_word="", quoted=True)
                elif label is not None and not c.question and not c.reported and c.concepts:
                    if c.force in (Force.NONE, Force.IMPERATIVE):
                        # under "Rules:"/"约定：" a clause is a rule whatever its wording (labels.py)
                        c = replace(c, force=Force.OBLIGATION, force_word=label, labelled=True)
                elif c.force is Force.IMPERATIVE and self.msgs[pos][1].role == "user":
                    # a bare imperative in a user message is a request ("Show me account 55102"), not a rule
                    c = replace(c, force=Force.NONE, force_word="")
                if c.force is Force.NONE and not c.quoted and not c.question and c.concepts:
                    marker = _STANDING_NOW.search(self.folded(pos), c.start, c.end)
                    cap = (
                        _CAP.search(self.folded(pos), c.start, c.end)
                        if c.numbers and not c.reported
                        else None
                    )
                    if cap and "limit" in c.concepts:
                        # "首日灰度放量上限为 5%", "exports are capped at 1000 rows": a cap stated as a
                        # value is a bound in force, as strong as "must not exceed"
                        c = replace(c, force=Force.RESTRICTION, force_word=content[cap.start() : cap.end()])
                    elif marker:  # "from now on the user wants every answer in French": still in force
                        c = replace(
                            c, force=Force.OBLIGATION, force_word=content[marker.start() : marker.end()]
                        )
                    elif c.scope and not c.reported and _generic_present(self.folded(pos)[c.start : c.end]):
                        # "every refund is logged in the ledger", "each call starts with verifying the
                        # caller's identity": a universal statement in the present states the
                        # constraint as in force (issue 12 §4), as strong as the "must" it restates
                        c = replace(c, force=Force.OBLIGATION, force_word=c.scope[0])
                out.append(c)
            got = self._parsed[key] = out
        return got

    def window(self, w: _Window) -> tuple[list[Clause], str, int, bool]:
        """Clauses, text and base offset of a window of 1–2 consecutive sentences, and whether one
        sentence lent its force to the other."""
        parts = [self.clauses(w.pos, si) for si in w.sentences]
        a = self.sentence_span(w.pos, w.sentences[0])[0]
        b = self.sentence_span(w.pos, w.sentences[-1])[1]
        text = self.msgs[w.pos][1].content[a:b]
        if len(parts) == 1:
            return parts[0], text, a, False
        # a force-only sentence lends its force to the other one ("Refunds above $100 need a manager
        # approval ticket. Never issue them otherwise." — a rule split across two sentences)
        lenders = [c for p in parts for c in p if c.force is not Force.NONE and not c.concepts]
        lender = max(lenders, key=lambda c: FORCE_LEVEL[c.force], default=None)
        out: list[Clause] = []
        lent = False
        for p in parts:
            for c in p:
                if (
                    lender is not None
                    and c.concepts
                    and FORCE_LEVEL[c.force] < FORCE_LEVEL[lender.force]
                    and not c.reported
                    and not c.question
                ):
                    c = replace(c, force=lender.force, force_word=lender.force_word, inherited=True)
                    lent = True
                out.append(c)
        return out, text, a, lent

    def candidates(self, weights: dict[str, float]) -> list[tuple[int, int]]:
        """The TOP_K sentences naming most of the weighted concepts (and their relatives).

        Specific concepts select sentences; generic ones (用户, data) only add to the score of
        sentences already selected, so "data" alone never floods the candidates.
        """
        postings = self.build()
        specific: dict[str, float] = {}
        generic: dict[str, float] = {}
        for cid, w in weights.items():
            target = generic if _kind(cid) is Kind.GENERIC else specific
            for r in related(cid):
                target[r] = max(target.get(r, 0.0), w)
        if not specific:
            specific, generic = generic, {}
        # concepts in a fixed order and ties by text order: the same report whatever the hash seed
        # (the concept sets' order is not; float sums and ties followed it)
        scores: dict[tuple[int, int], float] = {}
        for cid, w in sorted(specific.items()):
            if not scores:  # the first concept's sentences, at C speed (0.0 + w is w)
                scores = dict.fromkeys(postings.get(cid, ()), w)
                continue
            for key in postings.get(cid, ()):
                scores[key] = scores.get(key, 0.0) + w
        for cid, w in sorted(generic.items()):
            for key in postings.get(cid, ()):
                if key in scores:
                    scores[key] += w
        if not scores:
            return []
        n = TOP_K * 3
        if len(scores) > n:
            # the n best by (score, then text order), as heapq.nlargest with that key would pick them,
            # with C sorts of floats and of (pos, sentence) tuples instead of a Python key call per
            # sentence (thousands share one score when they name one common concept)
            floor = sorted(scores.values(), reverse=True)[n - 1]
            above = [kv for kv in scores.items() if kv[1] > floor]
            tied = sorted(k for k, v in scores.items() if v == floor)[: n - len(above)]
            top = above + [(k, floor) for k in tied]
        else:
            top = list(scores.items())
        top.sort(key=lambda kv: (kv[1], -kv[0][0], -kv[0][1]), reverse=True)
        top.sort(key=lambda kv: (kv[1], _role_rank(self.msgs[kv[0][0]][1].role)), reverse=True)
        return [k for k, _ in top[:TOP_K]]


def _kind(cid: str) -> Kind:
    from ctxaudit.engine.language.lexicon import CONCEPTS_BY_ID

    c = CONCEPTS_BY_ID.get(cid)
    return c.kind if c else Kind.OBJECT


@dataclass(slots=True)
class _Found:
    drift: ClauseDrift
    pos: int
    role: str
    window_text: str
    window_base: int


def _best_for_clause(
    idx: SideIndex,
    rc: Clause,
    rule_text: str,
    weights: dict[str, float],
    fallback: dict[str, float],
    claimed: dict[int, list[tuple[int, int]]] | None = None,
    rule_concepts: set[str] | None = None,
    part: RulePart | None = None,
) -> tuple[_Found | None, _Found | None, _Found | None]:
    """(best match with directive force, closest narrative text, the closest narrative that retells
    the rule — a past request, a preference, a topic: see _retells) for one rule clause on one side.

    claimed: per message pos, spans that are the verbatim text of *other* rules. Such text is
    that other rule; it serves this one only as a full paraphrase that names nothing else.
    """
    best: _Found | None = None
    best_key: tuple[float, float, int] | None = None
    closest: _Found | None = None
    retold: _Found | None = None
    seen: set[tuple[int, tuple[int, ...]]] = set()
    for pos, si in idx.candidates(weights):
        n = len(idx.starts(pos))
        windows: list[tuple[int, ...]] = [(si,)]
        windows += [(si - 1, si)] if si > 0 else []
        windows += [(si, si + 1)] if si + 1 < n else []
        for sents in windows:
            if (pos, sents) in seen:
                continue
            seen.add((pos, sents))
            if len(sents) == 2 and best is not None and best.drift.state == "kept" and best.pos == pos:
                continue
            if len(sents) == 2 and part is not None and _inert_pair(idx, pos, sents, si, rc, part):
                continue  # the neighbour adds nothing: the wider window reads as the one sentence
            clauses, text, base, lent = idx.window(_Window(pos, sents))
            d = compare_clause(rc, rule_text, clauses, text, base, fallback, rule_concepts, part)
            if d is None:
                continue
            if claimed and d.matched and pos in claimed:
                ms, me = min(c.start for c in d.matched), max(c.end for c in d.matched)
                if any(a <= ms and me <= b for a, b in claimed[pos]) and (d.state != "kept" or d.extra):
                    continue
            role = idx.msgs[pos][1].role
            found = _Found(d, pos, role, text, base)
            if not d.forced:
                if closest is None or d.closeness > closest.drift.closeness:
                    closest = found
                if (
                    len(sents) == 1  # the cue must sit in the sentence that names the rule
                    and (d.closeness >= RETOLD_MIN or _names_identifiers(rc, d, fallback))
                    and (retold is None or d.closeness > retold.drift.closeness)
                    and _retells(rc, fold(text), base, d.matched)
                    and _names_core_action(rc, d, rule_text)
                ):
                    retold = found
                continue
            # one-sentence windows first; a wider window must name clearly more of the rule to win
            wide = len(sents) > 1 and not (lent and any(c.inherited for c in d.matched))
            key = (round(d.closeness - (0.15 if wide else 0.0), 1), d.strength, _role_rank(role))
            if best_key is None or key > best_key:
                best, best_key = found, key
    return best, closest, retold


def _inert_pair(
    idx: SideIndex, pos: int, sents: tuple[int, ...], si: int, rc: Clause, part: RulePart
) -> bool:
    """Whether the two-sentence window `sents` around sentence `si` would compare exactly as `si`
    alone: the other sentence is inert for the rule clause (RulePart.inert) and neither lends its
    force (a force-only clause, see SideIndex.window), so the wider window, taken with its 0.15
    handicap and no lent force, can never win (_best_for_clause)."""
    other = sents[0] if sents[1] == si else sents[1]
    mine, theirs = idx.clauses(pos, si), idx.clauses(pos, other)
    if any(c.force is not Force.NONE and not c.concepts for c in (*mine, *theirs)):
        return False
    a, b = idx.sentence_span(pos, other)
    return part.inert(rc, theirs, idx.msgs[pos][1].content[a:b])


def _span(idx: SideIndex, pos: int, start: int, end: int) -> Span:
    i, m = idx.msgs[pos]
    content = m.content
    while start < end and content[start].isspace():
        start += 1
    while end > start and content[end - 1].isspace():
        end -= 1
    return Span(idx.side, i, start, end, content[start:end])  # type: ignore[arg-type]


def _found_span(idx: SideIndex, f: _Found) -> Span:
    clauses = f.drift.matched or []
    if clauses:
        return _span(idx, f.pos, min(c.start for c in clauses), max(c.end for c in clauses))
    return _span(idx, f.pos, f.window_base, f.window_base + len(f.window_text))


@dataclass(slots=True)
class RuleModel:
    """A rule prepared for matching: squeezed text, its locating regex, its clauses and weights."""

    rule: Rule
    squeezed: str
    locate: Locator
    clauses: list[Clause]
    weights: list[dict[str, float]]
    parts: list[RulePart]  # drift.rule_part of each clause, for compare_clause


def prepare_rules(rules: tuple[Rule, ...] | list[Rule]) -> tuple[Matcher, dict[str, float], list[RuleModel]]:
    """One matcher for the rule set (lexicon + every rule's fallback tokens) and a RuleModel per rule."""
    extra: dict[str, tuple[str, float]] = {}
    for r in rules:
        extra.update(fallback_tokens(r.text))
    matcher = Matcher(extra)
    # the acronyms the rules' words make ("DSAR" for "data-subject access request") name them too
    aliases: dict[str, tuple[str, ...]] = {}
    for r in rules:
        for surface, cids in acronyms(r.text, matcher).items():
            aliases.setdefault(surface, cids)
    if aliases:
        matcher = Matcher(extra, aliases=aliases)
    fallback = matcher.fallback_weight
    models = []
    for r in rules:
        sq = squeeze(fold(r.text))
        locate = Locator(sq)
        clauses = _merge_subordinate([c for c in parse(r.text, matcher) if c.concepts])
        strongest = max(clauses, key=lambda c: FORCE_LEVEL[c.force], default=None)
        if strongest is not None and strongest.force is not Force.NONE:
            # a forceless clause that acts ("统一使用 pnpm，禁止使用 npm"; the steps of "run the migration on
            # staging, get sign-off, then deploy") is a part of the rule under its force (issue 12 §3);
            # one that does not ("When in doubt, always rely on …") is context, not a part to keep
            clauses = [
                c
                if c.force is not Force.NONE
                else replace(
                    c,
                    # a step before "禁止…" is still a thing to do: it takes the force, not the "not"
                    force=Force.OBLIGATION if strongest.force is Force.PROHIBITION else strongest.force,
                    force_word=strongest.force_word,
                    inherited=True,
                )
                for c in clauses
                if c.force is not Force.NONE or c.actions or "use" in c.concepts
            ]
        parts = [rule_part(c, r.text, fallback) for c in clauses]
        models.append(RuleModel(r, sq, locate, clauses, [p.weights for p in parts], parts))
    return matcher, fallback, models


# ~0.7 MB per rule set (two automata), so a few dozen projects' sets stay warm
@lru_cache(maxsize=32)
def prepared_rule_set(
    rules: tuple[Rule, ...],
) -> tuple[Matcher, dict[str, float], list[RuleModel], Matcher]:
    """prepare_rules(rules) and the matcher that indexes sentences for them, once per rule set
    and process: a project's rules are the same for every event, and preparing 50 of them (their
    clauses, numbers, fallback tokens, two automata) costs ~11 ms. Everything returned is read,
    never changed, by the checks that share it."""
    matcher, fallback, models = prepare_rules(rules)
    # the sentence index only needs the specific concepts the rules name (and their relatives)
    wanted: set[str] = set()
    for m in models:
        for w in m.weights:
            specific = [cid for cid in w if _kind(cid) is not Kind.GENERIC]
            for cid in specific or list(w):
                wanted |= related(cid)
    index_matcher = Matcher(
        {t: v for t, v in _fallback_of(models).items() if v[0] in wanted},
        only=wanted,
        aliases=matcher.aliases,
    )
    return matcher, fallback, models, index_matcher


def _merge_subordinate(clauses: list[Clause]) -> list[Clause]:
    """A condition clause ("回答儿童用药问题时", "Before rotating the credentials") is no part to keep on
    its own: its words join the clause it conditions as topic (half weight, clause_weights), so a
    summary that words the condition otherwise ("凡是儿童用药的问题，都要…") keeps the rule."""
    out: list[Clause] = []
    pending: Clause | None = None
    for c in clauses:
        if pending is not None and pending.sentence == c.sentence:
            merged = dict(pending.concepts)
            merged.update(c.concepts)
            c = replace(c, concepts=merged)
        elif pending is not None:
            out.append(pending)
        pending = None
        if c.subordinate and c.force is Force.NONE:
            pending = c
            continue
        out.append(c)
    if pending is not None:
        out.append(pending)
    return out


def _fallback_of(models: list[RuleModel]) -> dict[str, tuple[str, float]]:
    extra: dict[str, tuple[str, float]] = {}
    for m in models:
        extra.update(fallback_tokens(m.rule.text))
    return extra


def _locate_side(
    idx: SideIndex, model: RuleModel, fallback: dict[str, float]
) -> tuple[str | None, list[Span]]:
    """Where the rule is on the before side: verbatim, else its best match with force."""
    if model.squeezed:
        v = idx.verbatim(model.squeezed, model.locate)
        if v is not None:
            pos, a, b = v
            return idx.msgs[pos][1].role, [_span(idx, pos, a, b)]
    spans: list[Span] = []
    role: str | None = None
    best_w = -1.0
    for rc, weights, part in zip(model.clauses, model.weights, model.parts, strict=True):
        found, _, _ = _best_for_clause(
            idx,
            rc,
            model.rule.text,
            weights,
            fallback,
            None,
            {c for x in model.clauses for c in x.concepts},
            part,
        )
        if found is None or found.drift.state not in ("kept", "weakened"):
            continue
        w = sum(weights.values())
        if w > best_w:
            best_w, role = w, found.role
        span = _found_span(idx, found)
        if span not in spans:
            spans.append(span)
    return role, spans


@dataclass(slots=True)
class RetentionIndex:
    """Everything retention derives from a rule set and a pair, built once (and kept in the event's
    Analysis, analysis.memo("retention", …)): the rule matcher, the rule models, both sides'
    sentence indexes and where each rule is verbatim after compression."""

    fallback: dict[str, float]
    models: list[RuleModel]
    before: SideIndex
    after: SideIndex
    verbatim_after: list[tuple[int, int, int] | None]


def retention_index(
    before: Context,
    after: Context,
    rules: tuple[Rule, ...] | list[Rule],
    fold_before: Callable[[int], str] | None = None,
    fold_after: Callable[[int], str] | None = None,
    written_after: frozenset[int] = frozenset(),
) -> RetentionIndex:
    """Prepare retention for `rules` on a pair (see RetentionIndex). fold_before/fold_after: the
    folded text of a message by index (Analysis.folded); default: folded here. written_after:
    after messages in the assistant role that the compressor wrote (not copied from before): a
    rule restated there ("I'll keep following: never …") survives, demoted (seed 000 §3.2), while
    an assistant message carried over from before keeps no rule alive. Linear in the pair."""
    matcher, fallback, models, index_matcher = prepared_rule_set(tuple(rules))
    bidx = SideIndex(before, "before", matcher, index_matcher, fold_before)
    aidx = SideIndex(after, "after", matcher, index_matcher, fold_after, written_after)
    verbatim = [aidx.verbatim(m.squeezed, m.locate) if m.squeezed else None for m in models]
    return RetentionIndex(fallback, models, bidx, aidx, verbatim)


# An assistant-role message the compressor wrote as a summary says so near its start ("(earlier
# conversation) I'll keep following: …", "（此前对话）我会继续遵守…"); at most a few are searched, so a
# history regenerated in full (hundreds of new assistant turns) costs nothing extra.
# Plain substrings of the casefolded head: a case-insensitive regex alternation tries every word at
# every character (4 ms on a Chinese-heavy history, for 200 characters a message).
_RECAP = (
    "summar",
    "recap",
    "earlier",
    "previous",
    "so far",
    "until now",
    "to date",
    "handoff",
    "hand-off",
    "handover",
    "摘要",
    "总结",
    "回顾",
    "此前",
    "之前的",
    "先前",
    "以前的",
    "前面的",
    "历史",
    "交接",
)
MAX_ASSISTANT_SUMMARIES = 3


def _recaps(head: str) -> bool:
    return any(w in head for w in _RECAP)


def _assistant_summaries(a: Analysis) -> frozenset[int]:
    out: list[int] = []
    for i, m in a.index.written_messages():
        if m.role == "assistant" and _recaps(m.content[:200].casefold()):
            out.append(i)
            if len(out) == MAX_ASSISTANT_SUMMARIES:
                break
    return frozenset(out)


def check_retention(a: Analysis) -> list[RuleResult]:
    """check_rule_retention on an event's Analysis: its rules in force, its folded messages, and the
    retention index kept in the analysis for later checks (analysis.memo("retention"))."""
    if not a.rules:
        return []
    return _results(analysis_index(a))


def analysis_index(a: Analysis) -> RetentionIndex:
    """The RetentionIndex of an event's Analysis, built once (analysis.memo("retention"))."""
    return a.memo(
        "retention",
        lambda: retention_index(
            a.before,
            a.after,
            a.rules,
            partial(a.folded, "before"),
            partial(a.folded, "after"),
            _assistant_summaries(a),
        ),
    )


def check_rule_retention(
    before: Context, after: Context, rules: tuple[Rule, ...] | list[Rule]
) -> list[RuleResult]:
    """For each rule: where it is before, and whether it is retained / weakened / missing after.

    Returns one RuleResult per rule, in order: state, strength (0..1, see checks/drift.py),
    role_before/role_after, demoted, lost (what weakened, in the rule's language) and evidence
    (before spans first, then after spans: the rule's text before, the closest text after — also
    for a missing rule when narrative text still names it).
    """
    if not rules:
        return []
    return _results(retention_index(before, after, rules))


def _results(ri: RetentionIndex) -> list[RuleResult]:
    models, verbatim, fallback = ri.models, ri.verbatim_after, ri.fallback
    bidx, aidx = ri.before, ri.after
    out = []
    for i, model in enumerate(models):
        claimed: dict[int, list[tuple[int, int]]] = {}
        for j, v in enumerate(verbatim):
            if v is not None and j != i and models[j].squeezed != model.squeezed:
                claimed.setdefault(v[0], []).append((v[1], v[2]))
        out.append(_check_one(model, bidx, aidx, fallback, verbatim[i], claimed))
    return out


def _check_one(
    model: RuleModel,
    bidx: SideIndex,
    aidx: SideIndex,
    fallback: dict[str, float],
    verbatim_after: tuple[int, int, int] | None,
    claimed: dict[int, list[tuple[int, int]]],
) -> RuleResult:
    rule = model.rule
    zh = is_chinese(rule.text)
    role_before, before_spans = _locate_side(bidx, model, fallback)
    # where a rule stood before decides whether it was demoted; a rule not found before counts as
    # a system rule only when it comes from the system prompt or the project's rule set (an event's
    # own rule that nothing before states may have been a user's words)
    expected_system = role_before in SYSTEM_ROLES if role_before else rule.source in ("system", "project")

    def result(
        state: RuleState, strength: float, role_after: str | None, after_spans: list[Span], lost: list[str]
    ) -> RuleResult:
        demoted = (
            state is not RuleState.MISSING
            and expected_system
            and role_after is not None
            and role_after not in SYSTEM_ROLES
        )
        return RuleResult(
            rule.id,
            rule.text,
            state,
            round(strength, 4),
            role_before,
            role_after,
            tuple(before_spans + after_spans),
            tuple(lost),
            demoted,
        )

    if verbatim_after is not None:
        pos, a, b = verbatim_after
        return result(RuleState.RETAINED, 1.0, aidx.msgs[pos][1].role, [_span(aidx, pos, a, b)], [])
    if not model.clauses:
        return result(RuleState.MISSING, 0.0, None, [], [])

    total_w = 0.0
    score = 0.0
    lost: list[str] = []
    after_spans: list[Span] = []
    states: list[str] = []
    role_after: str | None = None
    role_w = -1.0
    closest_span: Span | None = None
    closest_val = 0.0
    all_concepts = {c for x in model.clauses for c in x.concepts}
    for rc, weights, part in zip(model.clauses, model.weights, model.parts, strict=True):
        w = sum(weights.values())
        total_w += w
        found, closest, retold = _best_for_clause(
            aidx, rc, rule.text, weights, fallback, claimed, all_concepts, part
        )
        if found is None and retold is not None:
            # told as something that happened, a preference or a topic: the words survive, the force
            # does not (issue 12 §4) — weakened, with the retelling as evidence
            states.append("retold")
            score += w * RETOLD_LEVEL * retold.drift.closeness
            quote = retold.window_text.strip()
            quote = quote if len(quote) <= 80 else quote[:77] + "…"
            item = (
                f"被转述为叙述，失去约束力：“{quote}” / retold as narrative, no longer an instruction: “{quote}”"
                if zh
                else f"retold as narrative, no longer an instruction: “{quote}”"
            )
            if item not in lost:
                lost.append(item)
            span = _found_span(aidx, retold)
            if span not in after_spans:
                after_spans.append(span)
            if w > role_w:
                role_w, role_after = w, retold.role
            continue
        if found is None:
            states.append("absent")
            clause_text = rule.text[rc.start : rc.end].strip(" ，,。.;；")
            if len(model.clauses) > 1:
                lost.append(
                    f"分句丢失：“{clause_text}” / clause dropped: “{clause_text}”"
                    if zh
                    else f"clause dropped: “{clause_text}”"
                )
            if closest is not None and closest.drift.closeness > closest_val:
                closest_val, closest_span = closest.drift.closeness, _found_span(aidx, closest)
            continue
        d = found.drift
        states.append(d.state)
        score += w * d.strength
        for item in d.lost:
            if item not in lost:
                lost.append(item)
        span = _found_span(aidx, found)
        if span not in after_spans:
            after_spans.append(span)
        if w > role_w or (w == role_w and _role_rank(found.role) > _role_rank(role_after or "")):
            role_w, role_after = w, found.role

    if all(s == "absent" for s in states):
        copy = aidx.quoted_copy(model.squeezed, model.locate) if model.squeezed else None
        if copy is not None:
            # kept only as a quote of what someone once wrote (issue 12 §4): it no longer binds,
            # but it is not gone either — weakened, with the quote as evidence
            pos, a, b = copy
            quote = aidx.folded(pos)[a:b]
            item = (
                f"仅作为引用保留，不再是指令：“{quote}” / kept only inside a quote, no longer an instruction"
                if zh
                else f"kept only inside a quote, no longer an instruction: “{quote}”"
            )
            return result(
                RuleState.WEAKENED, RETOLD_LEVEL, aidx.msgs[pos][1].role, [_span(aidx, pos, a, b)], [item]
            )
        spans = [closest_span] if closest_span is not None and closest_val >= 0.3 else []
        return result(RuleState.MISSING, 0.0, None, spans, [])
    strength = score / total_w if total_w else 0.0
    if all(s == "kept" for s in states):
        return result(RuleState.RETAINED, min(1.0, strength), role_after, after_spans, [])
    return result(RuleState.WEAKENED, min(strength, 0.95), role_after, after_spans, lost)
