"""Drift: compare one rule clause with the closest text after compression and say *what* weakened
(seed 000 §3.4 semantic drift, §3.5 multi-round decay; issue 3 "Drift").

Scale of `strength` (0..1): force after / force before (lexicon.FORCE_LEVEL: 禁止/必须/only 1.0,
plain imperative 0.8, should 0.6, 最好/try to 0.45, 需谨慎/be careful 0.35, narrative 0) × how much of
the rule's content survives (`coverage`: actions weigh 2, objects 1, generic words like 用户/data 0.5,
words outside the governed part half) × a penalty per structural loss (scope word dropped 0.85,
threshold dropped 0.85, object generalised 0.9, scope narrowed 0.75, condition dropped 0.8). A
universal rule ("any turbine", "所有地区") kept for one named instance ("the T7 climb", "华南区") is
scope narrowed.

Verdict per clause:
- "kept": same or stronger force, coverage ≥ 0.75 and nothing structural lost (a faithful
  paraphrase: "Refunds above $100 always require a manager approval ticket"), or coverage ≥ 0.5
  when all that is lost is a content word of a clause that joins no requirements (another verb
  for the same act: "never move a filing deadline" for "never reschedule …");
- "weakened": the core survives with lower force or lost parts ("删除订单需谨慎");
- "reversed": the core survives as a permission ("可以删除订单") — strength 0;
- "absent": nothing with directive force carries the core. Narrative text naming the same things
  ("用户提出删除订单的诉求", seed 000 §4.3) is kept as evidence of where the rule went, not as the rule.

Known false positives: a sentence with the rule's action and object but about something else ("删除
缓存前请确认" matches "删除前必须确认" on 删除+确认); a hedge word elsewhere in the clause lowers the
force of the whole clause. Known false negatives: rules whose words are all outside the lexicon are
matched on their own words only (fallback tokens), so a paraphrase with other words is missed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from ctxaudit.engine.language.constraints import Clause, fallback_tokens, fold
from ctxaudit.engine.language.lexicon import (
    CONCEPTS,
    CONCEPTS_BY_ID,
    FORCE_LEVEL,
    FORCE_NAMES_ZH,
    HARD_FORCES,
    NARROWING_WORDS,
    Force,
    Kind,
)
from ctxaudit.engine.language.numbers import find_numbers

KIND_WEIGHT = {Kind.ACTION: 2.0, Kind.OBJECT: 1.0, Kind.GENERIC: 0.5}
TOPIC_FACTOR = 0.5  # concepts outside the governed part ("所有[写操作]必须记录日志")
KEPT_COVERAGE = 0.75
LOOSE_COVERAGE = 0.5
MIN_CLOSENESS = 0.15
_POSITIVE = (Force.OBLIGATION, Force.SHOULD)
IDENT_WEIGHT = 1.5
_EXCEPTIONS = (
    "除非",
    "除了",
    "unless",
    "except",
    "other than",
    "only if",
    "only when",
    "provided that",
)  # fallback tokens that look like identifiers ("ai.md", "vendor/lib1")
PENALTY = {"scope": 0.85, "threshold": 0.85, "generalised": 0.9, "narrowed": 0.75, "condition": 0.8}

_CHILDREN: dict[str, tuple[str, ...]] = {}
for _c in CONCEPTS:
    if _c.parent and not _c.negates:
        _CHILDREN[_c.parent] = (*_CHILDREN.get(_c.parent, ()), _c.id)
_EQUIV: dict[str, frozenset[str]] = {}
for _c in CONCEPTS:
    if _c.negates and _c.parent:  # 保护隐私 ≈ 不输出敏感信息
        _EQUIV[_c.id] = _EQUIV.get(_c.id, frozenset()) | {_c.parent}
        _EQUIV[_c.parent] = _EQUIV.get(_c.parent, frozenset()) | {_c.id}

# Light verbs that say the same of a convention: "提交信息遵循 X 格式" = "提交信息使用 X 格式",
# "follow PEP 8" = "use PEP 8".
for _a, _b in (
    ("follow", "use"),
    # a thing that "goes to"/"belongs in" a place or person is sent, put or referred there
    ("route", "send"),
    ("route", "put"),
    ("route", "escalate"),
    ("route", "reveal"),
    ("ship", "send"),  # "每个包裹发出前" = "发货前每件包裹": goods sent are goods shipped
    ("notify", "report"),  # "上报申办方" = "报告申办方", "notify the sponsor" = "report to the sponsor"
):
    _EQUIV[_a] = _EQUIV.get(_a, frozenset()) | {_b}
    _EQUIV[_b] = _EQUIV.get(_b, frozenset()) | {_a}
# A rule's own specific words left unmatched that weigh this much, where the text names other
# specific words instead, make the text another rule (issue 12 §3: "…shipments of the border
# region" is not kept by "…tickets of the border region"; 华东区 is not 华南区).
SUBSTITUTION_WEIGHT = 0.6
LIGHT_VERBS = frozenset(("execute", "use", "keep", "follow", "attach"))  # attach: "带上/include/have"
META_OBJECTS = frozenset(("instruction",))
META_ACTIONS = frozenset(
    ("discuss",)
)  # talking about a thing is no other act on it  # 规则/instruction/policy: the frame of a rule, not its object
BOUNDS = frozenset(("exceed", "limit", "at_least"))  # the words around a threshold (lexicon)

_CJK = re.compile("[\u4e00-\u9fff]")


def is_chinese(text: str) -> bool:
    """True when the rule is written in Chinese (messages then come in Chinese and English)."""
    return _CJK.search(text) is not None


def related(cid: str) -> set[str]:
    """The concept, its equivalents, its hypernym and its hyponyms: what retrieval should look for."""
    out = {cid, *_EQUIV.get(cid, ())}
    concept = CONCEPTS_BY_ID.get(cid)
    if concept and concept.parent and not concept.negates:
        out.add(concept.parent)
    out.update(_CHILDREN.get(cid, ()))
    return out


def concept_weight(cid: str, fallback: dict[str, float]) -> float:
    if cid in fallback:
        return fallback[cid]
    concept = CONCEPTS_BY_ID.get(cid)
    return KIND_WEIGHT[concept.kind] if concept else 1.0


def clause_weights(rc: Clause, fallback: dict[str, float]) -> dict[str, float]:
    """Weight of each concept of a rule clause: governed part (core and condition) full, topic half."""
    out = {}
    for cid in rc.concepts:
        w = concept_weight(cid, fallback)
        if cid in rc.condition and rc.force in (Force.PROHIBITION, Force.RESTRICTION):
            w *= TOPIC_FACTOR  # dropping an exception makes a prohibition stricter, not weaker
        elif cid not in rc.core and cid not in rc.condition:
            w *= TOPIC_FACTOR
        out[cid] = w
    return out


@dataclass(frozen=True, slots=True)
class RulePart:
    """What compare_clause reads from a rule clause alone (see rule_part): built once per rule
    clause and rule set, not once per window compared (a 50-rule set meets ~1,000 windows)."""

    weights: dict[str, float]
    total: float
    core: tuple[str, ...]  # the governed concepts that weigh something
    core_actions: tuple[str, ...]
    core_objects: tuple[str, ...]  # what to find when the force governs only a bound or a generic word
    rule_specific: tuple[str, ...]  # specific objects outside the condition
    cjk_words: tuple[tuple[str, str], ...]  # (concept id, Chinese surface of two or more characters)
    zh: bool
    reach: frozenset[str]  # every concept a window may name to be credited for one of the clause's

    def inert(self, rc: Clause, clauses: list[Clause], text: str) -> bool:
        """Whether `clauses` (one sentence of a window, whose text is `text`) can change nothing
        compare_clause finds for `rc`: none of them names what the clause could be credited for,
        holds one of its Chinese words as text, or gives a number the clause's amount could match.
        Such a sentence beside another adds no carrier, so the wider window reads as the narrower."""
        if any(not self.reach.isdisjoint(c.concepts) for c in clauses):
            return False
        if "amount" in rc.concepts and any(set(rc.numbers) & set(c.numbers) for c in clauses):
            return False
        words = [surface for cid, surface in self.cjk_words if cid.startswith("fb:")]
        if not words:
            return True
        folded = fold(text)
        return not any(surface in folded for surface in words)


# Bounds credited for each other (compare_clause): "不得超过" = "最多", "at least" = "never below".
_COUNTERPARTS = {"exceed": "limit", "limit": "exceed", "at_least": "fall_below", "fall_below": "at_least"}


def rule_part(rc: Clause, rule_text: str, fallback: dict[str, float]) -> RulePart:
    """The RulePart of rule clause `rc` (parsed from `rule_text`) under the rule set's fallback
    weights. Pure."""
    weights = clause_weights(rc, fallback)
    core = tuple(c for c in rc.core if concept_weight(c, fallback) > 0)
    core_actions = tuple(c for c in core if _kind(c) is Kind.ACTION)
    core_objects = tuple(c for c in core if _kind(c) is not Kind.ACTION and _kind(c) is not Kind.GENERIC)
    rule_specific = tuple(c for c in rc.concepts if _specific(c) and c not in rc.condition)
    if not core_actions and not core_objects:
        # the force governs only a bound or a generic word ("代码示例不得[超过]三十行"): what it bounds
        # is the object to find
        core_objects = rule_specific
    cjk_words = []
    for cid, (a, b) in rc.concepts.items():
        surface = fold(rule_text[a:b]) if not cid.startswith("fb:") else cid[3:]
        if len(surface) >= 2 and _CJK.match(surface):
            cjk_words.append((cid, surface))
    return RulePart(
        weights,
        sum(weights.values()),
        core,
        core_actions,
        core_objects,
        rule_specific,
        tuple(cjk_words),
        is_chinese(rule_text),
        frozenset().union(
            *(related(c) for c in rc.concepts), *(_COUNTERPARTS[c] for c in rc.concepts if c in _COUNTERPARTS)
        ),
    )


@dataclass(slots=True)
class ClauseDrift:
    """How one rule clause fares in one window of text after compression."""

    state: str  # "kept" | "weakened" | "reversed" | "absent"
    strength: float
    closeness: float  # how much of the rule's content the window names (0..1), force aside
    force_after: Force
    force_word_after: str
    lost: list[str] = field(default_factory=list)
    matched: list[Clause] = field(default_factory=list)  # the window's clauses that carry the match
    extra: bool = False  # the carrying clauses also name specific things the rule does not

    @property
    def forced(self) -> bool:
        return self.state != "absent"


def _surface(rule_text: str, rc: Clause, cid: str, base: int = 0) -> str:
    span = rc.concepts.get(cid)
    if span is None:
        concept = CONCEPTS_BY_ID.get(cid)
        return concept.zh if concept else cid.removeprefix("fb:")
    return rule_text[span[0] - base : span[1] - base]


def compare_clause(
    rc: Clause,
    rule_text: str,
    window: list[Clause],
    window_text: str,
    window_base: int,
    fallback: dict[str, float],
    rule_concepts: set[str] | None = None,
    part: RulePart | None = None,
) -> ClauseDrift | None:
    """Compare rule clause `rc` (parsed from `rule_text`, offsets from 0) with the clauses of one
    window of after-text (`window_text` starts at offset `window_base` of its message).
    rule_concepts: the concepts of the whole rule (an exception the rule itself states elsewhere
    is not "added"). part: rule_part(rc, rule_text, fallback), when the caller keeps it.

    Returns None when the window does not name the rule's core (no match at all), else a
    ClauseDrift. Pure function; no I/O.
    """
    p = part or rule_part(rc, rule_text, fallback)
    weights = p.weights
    total = p.total
    if total <= 0:
        return None
    cand: dict[str, list[Clause]] = {}
    for c in window:
        for cid in c.concepts:
            cand.setdefault(cid, []).append(c)
    virtual = _cjk_contained(rc, p.cjk_words, window, window_text, window_base, cand)

    credit: dict[str, float] = {}
    how: dict[str, tuple[str, str]] = {}  # cid -> ("exact"|"generalised"|"narrowed", cand cid)
    for cid in rc.concepts:
        if cid in cand:
            credit[cid], how[cid] = 1.0, ("exact", cid)
            continue
        eq = next((e for e in _EQUIV.get(cid, ()) if e in cand), None)
        if eq:
            credit[cid], how[cid] = 1.0, ("exact", eq)
            continue
        concept = CONCEPTS_BY_ID.get(cid)
        if concept and concept.parent and not concept.negates and concept.parent in cand:
            credit[cid], how[cid] = 0.8, ("generalised", concept.parent)
            continue
        child = next((ch for ch in _CHILDREN.get(cid, ()) if ch in cand), None)
        if child:
            credit[cid], how[cid] = 0.7, ("narrowed", child)
    # "不得超过三十行" = "最多 30 行": a prohibition to exceed is an upper bound, and the other way round
    # (either way the bound turned, not the rule: "不得超过8000字" is no obligation reversed by
    # "控制在1.5万字以内")
    flipped = False
    for a, b in (("exceed", "limit"), ("limit", "exceed")):
        if (
            a in rc.concepts
            and a not in credit
            and b in cand
            and (a == "limit" or rc.force is Force.PROHIBITION)
        ):
            credit[a], how[a] = 1.0, ("exact", b)
            flipped = True

    # "Keep at least two replicas" = "no service may drop below 2 replicas": a floor is the
    # prohibition to fall below it, and the other way round
    for a, b in (("at_least", "fall_below"), ("fall_below", "at_least")):
        if a in rc.concepts and a not in credit and b in cand:
            credit[a], how[a] = 1.0, ("exact", b)
            flipped = True

    # a money amount is named by its number: "超过 500 元的退款" keeps "退款金额超过五百元"
    if (
        "amount" in rc.concepts
        and "amount" not in credit
        and set(rc.numbers) & {n for c in window for n in c.numbers}
    ):
        credit["amount"], how["amount"] = 1.0, ("exact", "amount")
    # a light verb (run/use/keep/follow) goes without saying when what it governs survives:
    # "Never run `git push --force`" = "force-pushing is not allowed"; "Keep replies under 120 words"
    # = "replies must stay below 120 words"
    if any(c in credit and c not in LIGHT_VERBS and _kind(c) is not Kind.GENERIC for c in rc.core):
        for cid in rc.concepts:
            if cid in LIGHT_VERBS and cid not in credit:
                credit[cid], how[cid] = 1.0, ("exact", cid)

    # qualification: the governed part must be there (seed-drift R3: "写操作最好确认一下" names
    # 写操作 but not 记录日志, so R3 is missing, not weakened)
    # one word with two senses ("发布": deploy and reveal) is kept when either sense is
    if len(credit) < len(rc.concepts):
        for cid, span in rc.concepts.items():
            if cid not in credit:
                twin = next((o for o, o_span in rc.concepts.items() if o_span == span and o in credit), None)
                if twin is not None:
                    credit[cid], how[cid] = credit[twin], how[twin]
    core, core_actions, core_objects = p.core, p.core_actions, p.core_objects
    matched_cands = {how[c][1] for c in credit}
    carriers = [c for c in window if matched_cands & (set(c.concepts) | virtual.get(id(c), set()))]
    # a clause that shares only a generic word (使用/use, 用户/data) with the rule does not carry it:
    # "所有回复必须使用中文，禁止使用英文缩写" holds two rules, each in its own clause
    specific_cands = {cid for cid in matched_cands if _kind(cid) is not Kind.GENERIC}
    # …except a bound the rule's force governs: "…最多 30 行，不能超过" carries "不得超过三十行" in both clauses
    specific_cands |= {how[c][1] for c in credit if c in BOUNDS and c in rc.core}
    if specific_cands:
        carriers = [c for c in carriers if specific_cands & set(c.concepts)] or carriers
    # a window that acts on something else is no form of this rule: "禁止新增任何合同" is not a weakened
    # "禁止新增任何日志文件", "Never edit vendor/gen/" is not "Never edit vendor/lib/"
    rule_specific = p.rule_specific
    cand_specific = {cid for cl in carriers for cid in cl.concepts if _specific(cid)}
    # the rule's own words cut into other bigrams ("写类型注解" → 类型, 注解) are no other thing
    # and words about rules ("the user's standing instruction is that…") are no object of one
    unrelated = {
        c
        for c in cand_specific - matched_cands - META_OBJECTS
        if not (_is_cjk_token(c) and c in _own_tokens(rule_text))
    }
    # what the text names only inside its own condition ("…unless the caller seems legitimate") is an
    # exception added to the rule, not another object it acts on
    in_condition = {cid for cl in carriers for cid in cl.condition} - {
        cid for cl in carriers for cid in cl.concepts if cid not in cl.condition
    }
    unrelated -= in_condition
    unknown = {w for cl in carriers for w in cl.unknown} - {c.removeprefix("fb:") for c in matched_cands}
    if rule_specific and (unrelated or unknown) and not any(c in credit for c in rule_specific):
        return None
    # the same action on another object, region or number is a sibling rule, not this one
    rule_unmatched = [c for c in rule_specific if c not in credit]
    # another action counts too: "…审计日志" (a log) for "…订单数据", "modify" for "archive"
    # — when the text does the rule's own action(s): "写操作最好确认一下" for "…不能替代管理员二次确认" lost the
    # rule's action itself and is a weakened form, not a sibling
    # (a light verb — keep/use/run/follow — makes no other rule: "prefers to keep dependencies to a minimum")
    # (nor do the rule's own words of another clause, or talk about it: "we discussed the review
    # of payment code" retells "until the security review passes, never merge payment code")
    other_actions = (
        {x for cl in carriers for x in cl.actions}
        - matched_cands
        - set(rc.concepts)
        - (rule_concepts or set())
        - LIGHT_VERBS
        - META_ACTIONS
    )
    if not all(c in credit for c in core_actions):
        other_actions = set()
    if rule_unmatched and (unrelated or other_actions):
        # only named things count as substitutes (lexicon objects and actions, other rules' words):
        # an unknown word may be a generalisation ("destructive commands" for "rm -rf"), which weakens
        own = _own_tokens(rule_text)  # the rule's words, cut into other bigrams ("向外部" → 外部)
        others = {c for c in unrelated | other_actions if c not in own}
        others = {w for w in others if not any(w.removeprefix("fb:") in t for t in own)}
        if others and sum(weights[c] for c in rule_unmatched) >= SUBSTITUTION_WEIGHT:
            return None
    moved: tuple[str, str] | None = None
    if rc.numbers:
        have_numbers = {n for cl in carriers for n in cl.numbers}
        if have_numbers and not have_numbers & set(rc.numbers):
            # another number is another rule ("aisle 7" / "aisle 9"), unless it is the rule's
            # bound with another value, about nothing else: "no more than 5" → "up to 10", "30
            # days" → "90 days" (not "3 retries of a payment" → "5 of a webhook")
            elsewhere = (
                rule_unmatched
                or unrelated
                or any(c not in credit and _kind(c) is not Kind.GENERIC for c in rc.concepts)
            )
            moved = None if elsewhere else _moved_bound(rc, carriers, have_numbers)
            if moved is None:
                return None
    core_idents = [c for c in core if fallback.get(c, 0.0) >= IDENT_WEIGHT]
    other_idents = [c for c in unrelated if fallback.get(c, 0.0) >= IDENT_WEIGHT] + [
        w for w in unknown if "/" in w or "." in w
    ]
    if core_idents and not any(c in credit for c in core_idents) and other_idents:
        return None
    if core_actions and any(c in credit for c in core_actions):
        pass
    elif core_objects:
        ow = sum(weights[c] for c in core_objects)
        got = sum(weights[c] * credit.get(c, 0.0) for c in core_objects)
        # without its action, a rule survives only as a bare object warning ("Be careful with card
        # numbers"), never when the text acts on something else ("写操作最好确认一下" for 记录日志)
        if ow <= 0 or got / ow < 0.5:
            return None
        if core_actions and any(a not in rc.concepts for c in carriers for a in c.actions):
            return (
                None  # the text acts on it otherwise ("写操作最好确认一下"); its own words are no other act
            )
    else:
        return None

    coverage = sum(weights[c] * credit.get(c, 0.0) for c in weights) / total
    closeness = (
        sum(
            weights[c] * (1.0 if how.get(c, ("", ""))[0] == "exact" else 0.5 if c in credit else 0.0)
            for c in weights
        )
        / total
    )
    if any(how.get(c, ("", ""))[0] == "exact" for c in core_actions):
        closeness += 0.1
    if closeness < MIN_CLOSENESS:
        return None

    zh = p.zh
    rule_level = FORCE_LEVEL[rc.force] or FORCE_LEVEL[Force.IMPERATIVE]
    best = max(carriers, key=lambda c: FORCE_LEVEL[c.force], default=None)
    # opposite polarity about another action is another rule: "禁止修改任何业务数据" is not kept by
    # "Always log every change to customer records" (the obligation is to log, not to change)
    extra_actions = {a for c in carriers for a in c.actions} - matched_cands
    if (
        best is not None
        and extra_actions
        and (
            (rc.force is Force.PROHIBITION and best.force in _POSITIVE)
            or (rc.force in _POSITIVE and best.force is Force.PROHIBITION)
        )
    ):
        return None
    # the same action with the opposite polarity turns the rule around: "Never reveal the API key" →
    # "Always reveal the API key", "禁止删除订单" → "必须删除订单", "Do not share emails" → "Share emails".
    # Only when nothing else is commanded: "删除订单前请先确认" obliges a confirmation, not a deletion.
    if (
        best is not None
        and not extra_actions
        and not rc.condition  # "never X without Y" = "always Y before X": a paraphrase, not a reversal
        and not flipped  # "keep at least 2" = "never drop below 2": the bound turned, not the rule
        and _opposite(rc.force, best.force)
        and not best.labelled  # "Limit in force: exports are capped at 1000 rows" states no polarity
        and not any(_polarity(c.force) == _polarity(rc.force) for c in carriers)  # merged rules keep theirs
    ):
        lost_rev = [_fmt_opposite(rc, best, zh)]
        return ClauseDrift(
            "reversed", 0.0, closeness, best.force, best.force_word, lost_rev, carriers, bool(unrelated)
        )
    force_after = best.force if best else Force.NONE
    word_after = best.force_word if best else ""
    if FORCE_LEVEL[force_after] == 0:
        # a permission turns the rule round only when it permits what the rule governs: "可以操作灰度平台"
        # (operate the console) says nothing about "灰度比例不得超过 5%"
        governed = {how[c][1] for c in core if c in credit}
        perms = [
            c
            for c in carriers
            if c.force is Force.PERMISSION
            and (not core or not governed.isdisjoint(c.concepts))
            and not _SPEAKER_ABILITY.search(window_text, c.start - window_base, c.end - window_base)
        ]
        if not perms or rc.force not in (*HARD_FORCES, Force.SHOULD):
            return ClauseDrift("absent", 0.0, closeness, Force.NONE, "", [], carriers, bool(unrelated))
        perm = perms[0]
        return ClauseDrift(
            "reversed",
            0.0,
            closeness,
            Force.PERMISSION,
            perm.force_word,
            [_fmt_reversed(rc, perm, zh)],
            carriers,
            bool(unrelated),
        )

    lost: list[str] = []
    factor = 1.0
    ratio = min(1.0, FORCE_LEVEL[force_after] / rule_level)
    if ratio < 1.0:
        lost.append(_fmt_force(rc, force_after, word_after, zh))
    # content dropped / generalised / narrowed
    dropped = [
        c
        for c in rc.concepts
        if c not in credit
        and _kind(c) is not Kind.GENERIC
        and (not c.startswith("fb:") or fallback.get(c, 0.0) >= IDENT_WEIGHT)
    ]
    if dropped:
        # one word may name two concepts ("发布": release and reveal): name it once
        surfaces = dict.fromkeys(_surface(rule_text, rc, c) for c in dropped)
        names = ("、" if zh else ", ").join(surfaces)
        lost.append(f"内容丢失：{names} / dropped: {names}" if zh else f"dropped: {names}")
    gen = [c for c in credit if how[c][0] == "generalised"]
    if gen:
        factor *= PENALTY["generalised"]
        lost.append(
            _fmt_pairs(
                "对象泛化",
                "object generalised",
                rule_text,
                rc,
                gen,
                how,
                window_text,
                window_base,
                carriers,
                zh,
            )
        )
    nar = [c for c in credit if how[c][0] == "narrowed"]
    if nar:
        factor *= PENALTY["narrowed"]
        lost.append(
            _fmt_pairs(
                "范围缩小", "scope narrowed", rule_text, rc, nar, how, window_text, window_base, carriers, zh
            )
        )
    hard_after = force_after in HARD_FORCES
    if rc.scope and unrelated and not any(c.scope for c in carriers):
        # "禁止删除任何业务数据" → "禁止删除订单数据": a qualifier took the place of the quantifier
        factor *= PENALTY["narrowed"]
        names = "、".join(_cand_word(window_text, window_base, carriers, u) for u in sorted(unrelated))
        words = "、".join(dict.fromkeys(rc.scope))
        lost.append(
            f"范围缩小：{words} → {names} / scope narrowed: {words} → {names}"
            if zh
            else f"scope narrowed: {words} → {names}"
        )
    elif (
        rc.scope
        and not any(c.scope for c in carriers)
        and (narrow := _narrowing(rule_text, carriers, window_text, window_base))
    ):
        # "所有数据库查询都必须带上 LIMIT" → "大查询要带上 LIMIT": a qualifier picks a part of the whole
        factor *= PENALTY["narrowed"]
        words = "、".join(dict.fromkeys(rc.scope))
        lost.append(
            f"范围缩小：{words} → {narrow} / scope narrowed: {words} → {narrow}"
            if zh
            else f"scope narrowed: {words} → {narrow}"
        )
    elif (
        (universal := rc.scope or tuple(dict.fromkeys(m.group() for m in _UNIVERSAL.finditer(rule_text))))
        and not any(c.scope for c in carriers)
        and (named := _named_instance(rule_text, window_text) or _zh_qualified(rule_text, window_text))
    ):
        # "before anyone climbs any turbine" → "before the T7 climb": one named instance for the whole
        # (the quantifier may stand in another clause of the rule: its condition)
        factor *= PENALTY["narrowed"]
        words = "、".join(universal)
        lost.append(
            f"范围缩小：{words} → {named} / scope narrowed: {words} → {named}"
            if zh
            else f"scope narrowed: {words} → {named}"
        )
    elif rc.scope and not hard_after and not any(c.scope for c in carriers):
        factor *= PENALTY["scope"]
        words = "、".join(dict.fromkeys(rc.scope))
        lost.append(f"范围词丢失：{words} / scope dropped: {words}" if zh else f"scope dropped: {words}")
    if moved is not None:
        old_n, new_n = moved
        surface = {v: rule_text[a:b].strip() for a, b, v in find_numbers(rule_text)}
        there = {v: window_text[a:b].strip() for a, b, v in find_numbers(window_text)}
        was, now = surface.get(old_n, old_n), there.get(new_n, new_n)
        factor *= PENALTY["threshold"]
        lost.append(
            f"阈值改变：{was} → {now} / threshold changed: {was} → {now}"
            if zh
            else f"threshold changed: {was} → {now}"
        )
    elif rc.numbers:
        have = {n for c in carriers for n in c.numbers}
        gone = [n for n in rc.numbers if n not in have]
        if gone:
            surface = {v: rule_text[a:b].strip() for a, b, v in find_numbers(rule_text)}
            gone = [surface.get(n, n) for n in gone]  # as the rule wrote it: "$100", "十五"
            factor *= PENALTY["threshold"]
            lost.append(
                f"阈值丢失：{'、'.join(gone)} / threshold dropped: {', '.join(gone)}"
                if zh
                else f"threshold dropped: {', '.join(gone)}"
            )
    known = set(rc.concepts) | set(rule_concepts or ())
    added = next(
        (
            c
            for c in window
            if fold(c.condition_text).startswith(_EXCEPTIONS) and c.condition and not c.condition <= known
        ),
        None,
    )
    if rc.force in (Force.PROHIBITION, Force.RESTRICTION) and not rc.condition and added is not None:
        # "不允许删除订单，除非管理员批准": an exception the rule did not have opens a way around it
        factor *= PENALTY["condition"]
        lost.append(
            f"新增例外：{added.condition_text} / exception added: {added.condition_text}"
            if zh
            else f"exception added: {added.condition_text}"
        )
    if (
        rc.condition
        and rc.force not in (Force.PROHIBITION, Force.RESTRICTION)
        and not any(c in credit for c in rc.condition)
    ):
        factor *= PENALTY["condition"]
        lost.append(
            f"条件丢失：{rc.condition_text} / condition dropped: {rc.condition_text}"
            if zh
            else f"condition dropped: {rc.condition_text}"
        )

    strength = max(0.0, min(1.0, ratio * coverage * factor))
    # with the force kept and nothing named lost, the unmatched rest is wording the lexicon does not
    # know ("outbound calls" / "place a call"): a paraphrase when most of the core is there
    core_w = sum(weights[c] for c in rc.core if c in weights)
    core_cov = (
        sum(weights[c] * credit.get(c, 0.0) for c in rc.core if c in weights) / core_w if core_w else 0.0
    )
    # a content word of the rule the text does not use, with force, numbers, scope and condition
    # kept, is a rewording ("never move a court filing deadline" for "never reschedule …", "hiring
    # managers never receive …" for "do not share … with hiring managers") — unless the rule joins
    # requirements ("after the canary passes and the security lead signs off"): then the word may
    # be one of them, dropped
    reworded = (
        ratio >= 1.0
        and bool(dropped)
        and len(lost) == 1
        and not any(c in rc.condition for c in dropped)
        and not _COORD.search(rule_text, rc.start, rc.end)
        and not unrelated
        # an identifier (a name, a path, a redaction tag) has no other wording: gone is gone
        and not any(c.startswith("fb:") for c in dropped)
        # a thing the rule names, gone, with a word the lexicon does not know in its place, is
        # another thing ("any SLA breach" for "any suspicious activity report", "早班" for "夜间班次")
        and not (unknown and any(_kind(c) is not Kind.ACTION for c in dropped))
    )
    kept = (
        ratio >= 1.0
        and (not lost or reworded)
        and (
            coverage >= KEPT_COVERAGE
            or (coverage >= LOOSE_COVERAGE and (core_cov >= KEPT_COVERAGE or reworded))
        )
    )
    if kept:
        return ClauseDrift(
            "kept", min(1.0, coverage), closeness, force_after, word_after, [], carriers, bool(unrelated)
        )
    return ClauseDrift(
        "weakened", min(strength, 0.95), closeness, force_after, word_after, lost, carriers, bool(unrelated)
    )


_NARROWING_ZH = re.compile(
    "|".join(sorted((w for w in NARROWING_WORDS if _CJK.match(w)), key=len, reverse=True))
)
_NARROWING_EN = re.compile(
    r"\b(?:"
    + "|".join(sorted((w for w in NARROWING_WORDS if not _CJK.match(w)), key=len, reverse=True))
    + r")\b"
)


def _narrowing(rule_text: str, carriers: list[Clause], window_text: str, window_base: int) -> str | None:
    """The first narrowing qualifier (lexicon.NARROWING_WORDS) in the carrying clauses that the rule
    does not use itself, or None."""
    rule = fold(rule_text)
    for c in carriers:
        text = fold(window_text[c.start - window_base : c.end - window_base])
        for m in (*_NARROWING_ZH.finditer(text), *_NARROWING_EN.finditer(text)):
            if m.group() not in rule:
                return m.group()
    return None


def _unit(value: str) -> str | None:
    """The kind of a canonical number (numbers.find_numbers): "s" a duration, "%" a share, "" a
    plain amount; None for what is no quantity (a time of day "20:30")."""
    if ":" in value:
        return None
    unit = value[-1] if value[-1:] in ("s", "%") else ""
    try:
        Decimal(value[:-1] if unit else value)
    except InvalidOperation:
        return None
    return unit


def _moved_bound(rc: Clause, carriers: list[Clause], have: set[str]) -> tuple[str, str] | None:
    """(the rule's number, the text's) when the text keeps the rule's one bound with another
    value of the same kind: a duration (a window or a deadline: "in the last 30 days" → "90
    days"), or a number both sides hold as a bound ("no more than 5" → "up to 10", "不得超过8000字"
    → "1.5万字以内"). None otherwise: another number then names another thing."""
    if len(rc.numbers) != 1:
        return None
    old = rc.numbers[0]
    unit = _unit(old)
    same = [n for n in have if _unit(n) == unit] if unit is not None else []
    if len(same) != 1:
        return None
    bounded = not BOUNDS.isdisjoint(rc.concepts) and any(not BOUNDS.isdisjoint(c.concepts) for c in carriers)
    return (old, same[0]) if unit == "s" or bounded else None


# A name for one instance: an identifier mixing letters and digits ("T7", "WO-5512", "14B") or two or
# more capitalised words ("Central Station"); a leading article is no part of it.
_NAME = re.compile(
    r"\b(?:[A-Z]{1,4}-?\d{1,6}[A-Z]?|\d{1,4}[A-Z]{1,2})\b|\b[A-Z][a-z]+(?:[ \t]+[A-Z][a-z]+)+\b"
)
_UNIVERSAL = re.compile(r"\b(?:any|every|each|all)\b|所有|任何|一律|全部", re.I)
_ARTICLE = re.compile(r"^(?:The|A|An|This|That|These|Those|Our|Your|Its|Their|Every|Each|Any|All|No)\s+")


def _named_instance(rule_text: str, window_text: str) -> str | None:
    """The first name of one instance (_NAME) in the text that carries the rule, when the rule does
    not name it itself, or None: what a universal rule ("any turbine", "every locker in the
    network") was narrowed to ("before the T7 climb", "at the Central Station site")."""
    rule = rule_text.casefold()
    for m in _NAME.finditer(window_text):
        name = _ARTICLE.sub("", m.group())
        if " " not in name and not any(ch.isdigit() for ch in name):
            continue  # one capitalised word after an article: the start of a sentence
        if name.casefold() not in rule:
            return name
    return None


_ZH_UNIVERSAL = re.compile(r"所有|任何|一切|全部|全体|凡是?|每一?[个位条项名家次份笔台辆件]?|各[个位类项]?")
_ZH_FORCE_START = re.compile(r"都|均|一律|必须|必需|须|不得|不能|不准|不可|禁止|严禁|应当?|要|需要?")
_ZH_FUNCTION = frozenset("把将对给在的是和与及或让向从由被于为")


def _zh_qualified(rule_text: str, window_text: str) -> str | None:
    """What a Chinese universal rule was narrowed to, or None: "所有地区的用户数据都不得导出" kept as
    "华南区的用户数据不得导出", "所有候选人的面试录音" as "技术岗候选人的面试录音". The noun phrase after the
    rule's quantifier (up to its force word) is looked for in the text, its longest tail of three
    characters or more; a short qualifier of Chinese characters standing alone before that tail
    (after punctuation or at the start, at most four characters, no quantifier, not the phrase's
    own head) took the quantifier's place."""
    for m in _ZH_UNIVERSAL.finditer(rule_text):
        rest = rule_text[m.end() :]
        stop = _ZH_FORCE_START.search(rest)
        phrase = rest[: stop.start() if stop else len(rest)].strip()
        if len(phrase) < 3 or not all(_CJK.match(ch) for ch in phrase):
            continue
        for k in range(len(phrase) - 2):
            tail = phrase[k:]
            at = window_text.find(tail)
            if at < 0:
                continue
            j = at
            while j > 0 and _CJK.match(window_text[j - 1]):
                j -= 1
            lead = window_text[j:at]
            if (
                0 < len(lead) <= 4
                and not _ZH_UNIVERSAL.search(lead)
                and lead[-1] not in _ZH_FUNCTION
                and lead not in phrase[:k]
            ):
                return lead + _head_word(tail)
            break  # the longest tail found decides
    return None


def _head_word(tail: str) -> str:
    """The tail's leading characters up to its first 的 (the qualified noun: "区的用户数据" → "区")."""
    head, sep, _ = tail.partition("的")
    return head if sep else ""


# "so I can ask them", "我可以自己去问": what the speaker is able to do permits the agent nothing.
_SPEAKER_ABILITY = re.compile(r"\b(?:I|we)\s+(?:can|could|may)\b|我们?(?:可以|能)", re.I)


# words that join two requirements in one clause ("X and Y", "先…然后…", "并")
_COORD = re.compile(r"\b(?:and|both|plus|as well as|then)\b|[并和及且]|同时|然后|以及", re.I)


def _is_cjk_token(cid: str) -> bool:
    return cid.startswith("fb:") and _CJK.match(cid, 3) is not None


def _cjk_contained(
    rc: Clause,
    cjk_words: tuple[tuple[str, str], ...],
    window: list[Clause],
    window_text: str,
    window_base: int,
    cand: dict[str, list[Clause]],
) -> dict[int, set[str]]:
    """Chinese has no spaces, so the automaton's leftmost-longest cut decides which word a text
    "names": "数据库迁移文件" names 迁移 and 文件, "已合并的迁移文件" only 迁移文件 (one surface); unknown
    words are character bigrams cut where the run happens to start ("处方药剂量" → 处方·药剂, "具体剂量"
    → 具体·剂量). So a rule's Chinese word that is no token of the window is still named when a window
    clause holds it as text; an unknown bigram also when the clause holds both of its characters
    next to another of the rule's words (a cut across a word boundary, "写类型注解" → 写类). Adds such
    words to `cand`; returns them per window clause (by id), for the carriers.

    Cost: per unmatched rule word and window clause one substring test; windows are 1–2 sentences."""
    extra: dict[int, set[str]] = {}
    wanted = [(cid, surface) for cid, surface in cjk_words if cid not in cand]
    if not wanted:
        return extra
    for c in window:
        text = fold(window_text[c.start - window_base : c.end - window_base])
        anchored = any(cid in rc.concepts for cid in c.concepts)
        for cid, surface in wanted:
            pair = (
                anchored
                and cid.startswith("fb:")
                and len(surface) == 2
                and surface[0] in text
                and surface[1] in text
            )
            if pair or (anchored or cid.startswith("fb:")) and surface in text:
                extra.setdefault(id(c), set()).add(cid)
                cand.setdefault(cid, []).append(c)
    return extra


@lru_cache(maxsize=4096)
def _own_tokens(rule_text: str) -> frozenset[str]:
    """Every fallback token of the rule text, as concept ids and as plain words."""
    toks = fallback_tokens(rule_text)
    return frozenset([*toks, *(v[0] for v in toks.values())])


def _kind(cid: str) -> Kind:
    concept = CONCEPTS_BY_ID.get(cid)
    return concept.kind if concept else Kind.OBJECT


def _specific(cid: str) -> bool:
    """A specific object: a lexicon object (not 用户/data) or a word the lexicon does not know."""
    return _kind(cid) is Kind.OBJECT


def _cand_word(window_text: str, window_base: int, carriers: list[Clause], cid: str) -> str:
    span = next((cl.concepts[cid] for cl in carriers if cid in cl.concepts), None)
    return window_text[span[0] - window_base : span[1] - window_base] if span else cid.removeprefix("fb:")


def _force_label(force: Force, word: str, zh: bool) -> str:
    if force is Force.IMPERATIVE:  # the word is the verb itself; name the form instead
        return FORCE_NAMES_ZH[force] if zh else "plain instruction"
    return word.strip() or (FORCE_NAMES_ZH[force] if zh else force.value)


def _fmt_force(rc: Clause, after: Force, word_after: str, zh: bool) -> str:
    before = _force_label(rc.force, rc.force_word, zh)
    now = _force_label(after, word_after, zh)
    names = f"{rc.force.value} → {after.value}"
    if zh:
        return f"强度降低：{before} → {now} / force lowered: {names}"
    return f"force lowered: {before} → {now} ({names})"


_POSITIVE_COMMANDS = (Force.OBLIGATION, Force.IMPERATIVE)


def _polarity(force: Force) -> str | None:
    """ "not" for a prohibition, "do" for a command to act, None for everything softer."""
    if force is Force.PROHIBITION:
        return "not"
    return "do" if force in _POSITIVE_COMMANDS else None


def _opposite(rule: Force, after: Force) -> bool:
    """A prohibition restated as a command to act, or a command to act restated as a prohibition."""
    return {_polarity(rule), _polarity(after)} == {"not", "do"}


def _fmt_opposite(rc: Clause, now: Clause, zh: bool) -> str:
    before = _force_label(rc.force, rc.force_word, zh)
    after = _force_label(now.force, now.force_word, zh)
    if zh:
        return f"含义反转：{before} → {after} / reversed: {rc.force.value} → {now.force.value}"
    return f"reversed: {before} → {after} ({rc.force.value} → {now.force.value})"


def _fmt_reversed(rc: Clause, perm: Clause, zh: bool) -> str:
    before = _force_label(rc.force, rc.force_word, zh)
    now = _force_label(perm.force, perm.force_word, zh)
    if zh:
        return f"含义反转：{before} → {now} / reversed: {rc.force.value} → permission"
    return f"reversed: {before} → {now} ({rc.force.value} → permission)"


def _fmt_pairs(
    zh_label: str,
    en_label: str,
    rule_text: str,
    rc: Clause,
    cids: list[str],
    how: dict[str, tuple[str, str]],
    window_text: str,
    window_base: int,
    carriers: list[Clause],
    zh: bool,
) -> str:
    sep = "、" if zh else ", "
    before = sep.join(_surface(rule_text, rc, c) for c in cids)
    targets = []
    for c in cids:
        target = how[c][1]
        span = next((cl.concepts[target] for cl in carriers if target in cl.concepts), None)
        word = window_text[span[0] - window_base : span[1] - window_base] if span else target
        if word not in targets:
            targets.append(word)
    after = sep.join(targets)
    return (
        f"{zh_label}：{before} → {after} / {en_label}: {before} → {after}"
        if zh
        else f"{en_label}: {before} → {after}"
    )
