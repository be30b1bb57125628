"""The constraint model: what a rule (or any sentence) forbids or requires, of what, how strongly.

A text is cut into clauses (at ，,；;。!?: and line ends; "、" enumerations stay inside a clause).
Each `Clause` carries
- `force`: the strongest directive marker it holds (lexicon.Force; "不得不" is an obligation, a
  question has none, "助手表示不能删除" is reported speech and has none, a bare "Log account
  changes." is an imperative);
- `concepts`: lexicon concepts (actions and objects, Chinese and English folded together) plus,
  for rules, fallback tokens for words the lexicon does not know;
- `core`: the concepts the force governs — after the marker ("禁止[删除订单]", "所有写操作必须[记录日志]"),
  or before it when nothing follows ("Deleting orders is forbidden");
- `scope` (任何/所有/any/every), `condition` (concepts after 除非/未经/without…), `numbers`: canonical
  values (numbers.py: "$100" → "100", "十五" → "15", "百分之八十" → "80%").

Matching is done with one Aho–Corasick automaton over folded text (width and case folded, length
kept, so offsets stay valid in the original string): linear in the text, no regex alternation.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

from ctxaudit.engine.language.automata import Automaton
from ctxaudit.engine.language.lexicon import (
    CONCEPTS,
    CONCEPTS_BY_ID,
    CONDITION_MARKERS,
    EN_STOPWORDS,
    EN_SUFFIXES,
    FORCE_MARKERS,
    IRREGULAR_BASE,
    IRREGULAR_FORMS,
    NEUTRAL_SURFACES,
    ONE_OFF_MARKERS,
    REPORTING_VERBS,
    SCOPE_WORDS,
    STANDING_MARKERS,
    Force,
    Kind,
)
from ctxaudit.engine.language.normalize import replace_each
from ctxaudit.engine.language.numbers import find_numbers

# --- folding -------------------------------------------------------------------------------------

_WIDE = re.compile("[\uff01-\uff5e\u3000\u2018\u2019]")
_WIDE_TABLE = {i: i - 0xFEE0 for i in range(0xFF01, 0xFF5F)} | {0x3000: 0x20, 0x2018: 0x27, 0x2019: 0x27}


def fold(text: str) -> str:
    """Lower-case and fold full-width ASCII to half width, keeping the length (so offsets into the
    folded text are offsets into `text`): "禁止ＤＥＬＥＴＥ，" → "禁止delete,"."""
    low = text.lower()
    if low.isascii():  # no full-width character to fold (str.isascii is a flag test)
        return low
    if len(low) != len(text):  # rare: "İ".lower() is two code points
        low = "".join(c if len(c) == 1 else ch for ch, c in ((ch, ch.lower()) for ch in text))
    return replace_each(_WIDE, low, _half_width)


def _half_width(ch: str) -> str:
    return chr(_WIDE_TABLE[ord(ch)])


# --- the matcher ---------------------------------------------------------------------------------

# Tag categories carried by a surface.
CONCEPT, FORCE, SCOPE, COND, REPORT, NEUTRAL, STANDING, ONE_OFF = "C", "F", "S", "K", "R", "N", "T", "O"

_WORD, _STEM_E, _STEM_Y = 0, 1, 2
_STEM_E_SUFFIXES = frozenset(
    ("ing", "ion", "ions", "ed", "es", "er", "ers", "ation", "ations", "ive", "able")
)
_STEM_Y_SUFFIXES = frozenset(("ies", "ied", "ication", "ications", "ier"))
_DOUBLED = frozenset(("ed", "ing", "er", "ers"))


def _is_ascii_word_char(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


@dataclass(frozen=True, slots=True)
class Hit:
    start: int
    end: int
    tags: tuple[tuple[str, str], ...]  # (category, value): ("C", "delete"), ("F", "prohibition")…


class Matcher:
    """Finds lexicon surfaces (and extra fallback tokens) in folded text, leftmost-longest.

    English surfaces need a word boundary on the left and an inflection suffix (or nothing) on the
    right; Chinese surfaces match anywhere. Build one per rule set (`matcher_for`); it is immutable.
    """

    def __init__(
        self,
        extra: dict[str, tuple[str, float]] | None = None,
        *,
        only: set[str] | None = None,
        aliases: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        """extra: fallback tokens → (concept id, weight). only: keep just these concept ids (and no
        force/scope/… surfaces) — a lean automaton for the sentence index. aliases: a surface that
        names several concepts at once (an acronym → the concepts of its words, see acronyms)."""
        # The lexicon's surfaces and what the automaton stores for them are computed once per
        # process (_base_values); a rule set only changes the surfaces its fallback tokens touch
        # (and `only` keeps the surfaces of a few concepts).
        base = _base_dict()
        if only is None:
            values = dict(_base_values())
            table: dict[str, list[tuple[tuple[str, str], int]]] = {}
        else:
            by_concept = _surfaces_by_concept()
            table = {}
            for cid in only:
                for surface in by_concept.get(cid, ()):
                    if surface not in table:
                        table[surface] = [
                            (tag, mode) for tag, mode in base[surface] if tag[0] == CONCEPT and tag[1] in only
                        ]
            values = {}
        touched: set[str] = set(table)
        self.fallback_weight: dict[str, float] = {}
        for token, (cid, weight) in (extra or {}).items():
            self.fallback_weight[cid] = weight
            forms = _english_forms(token) if token[:1].isascii() else [(token, _WORD)]
            if token[:1].isascii():
                forms += [(stem, _WORD) for stem in _stems(token)]
            for surface, mode in forms:
                # a copy: the base table's lists are shared by every matcher (_base_table is cached),
                # and a fallback token that is also a lexicon surface ("any", "供应") must not leak
                # into the next rule set's matcher
                if surface in table:
                    entries = table[surface] = list(table[surface])
                else:
                    entries = table[surface] = list(base.get(surface, ())) if only is None else []
                touched.add(surface)
                if ((CONCEPT, cid), mode) not in entries:
                    entries.append(((CONCEPT, cid), mode))
        self.aliases: dict[str, tuple[str, ...]] = {}
        for surface, cids in (aliases or {}).items():
            kept = tuple(c for c in cids if only is None or c in only)
            if not kept or surface in base:
                continue  # a lexicon word ("api", "sla") keeps its own meaning
            self.aliases[surface] = kept
            if surface in table:
                entries = table[surface] = list(table[surface])
            else:
                entries = table[surface] = list(base.get(surface, ())) if only is None else []
            touched.add(surface)
            for cid in kept:
                if ((CONCEPT, cid), _WORD) not in entries:
                    entries.append(((CONCEPT, cid), _WORD))
        for surface in touched:
            values[surface] = _surface_value(surface, table[surface])
        # leftmost-longest matches of the Rust aho-corasick crate (offsets in characters for a
        # str): what pyahocorasick's iter_long found, 3x faster on long contexts
        self._surfaces = list(values)
        self._values = list(values.values())
        self._auto = Automaton(self._surfaces, longest=True)

    def items(self) -> list[tuple[str, _Value]]:
        """(surface, stored value) of every surface the automaton finds (tests compare builds)."""
        return list(zip(self._surfaces, self._values, strict=True))

    def scan(self, folded: str, start: int = 0, end: int | None = None) -> list[Hit]:
        """Hits in folded[start:end] (offsets into `folded`), leftmost-longest, boundaries checked."""
        end = len(folded) if end is None else end
        out: list[Hit] = []
        if start >= end:
            return out
        suffix_at = _SUFFIX.match
        values = self._values
        whole = start == 0 and end == len(folded)
        for k, s, e in self._auto.matches(folded if whole else folded[start:end]):
            _, ascii_surface, entries, plain_tags, _, alpha_end = values[k]
            s += start
            e += start
            if ascii_surface:
                if s > 0 and _is_ascii_word_char(folded[s - 1]) and _is_ascii_word_char(folded[s]):
                    continue
                # most surfaces end a word: a look at the next character spares the regex
                nxt = folded[e : e + 1]
                suffix = suffix_at(folded, e).group() if "a" <= nxt <= "z" else ""  # type: ignore[union-attr]
                if not suffix and plain_tags is not None:
                    tags = plain_tags
                elif not alpha_end:
                    if suffix:
                        continue
                    tags = plain_tags or tuple(tag for tag, _ in entries)
                else:
                    surface = folded[s:e]
                    tags = tuple(
                        tag
                        for tag, mode in entries
                        if _suffix_ok(surface, suffix, mode)
                        and not (tag[0] == FORCE and suffix in _NOUN_SUFFIXES)
                    )  # "AI.md requirements" names a document; "required" obliges
                    if not tags:
                        continue
                    e += len(suffix)
            else:
                tags = plain_tags or tuple(tag for tag, _ in entries)
            out.append(Hit(s, e, tags))
        return out

    def scan_concepts(self, folded: str) -> list[tuple[int, tuple[str, ...]]]:
        """(start, concept ids) of concept hits only: the cheap pass the sentence index uses."""
        out: list[tuple[int, tuple[str, ...]]] = []
        if not folded:
            return out
        suffix_at = _SUFFIX.match
        values = self._values
        for k, s, e in self._auto.matches(folded):
            _, ascii_surface, entries, _plain_tags, concepts, alpha_end = values[k]
            if not concepts:
                continue
            last = e - 1
            if ascii_surface:
                if s > 0 and _is_ascii_word_char(folded[s - 1]) and _is_ascii_word_char(folded[s]):
                    continue
                nxt = folded[last + 1 : last + 2]
                suffix = suffix_at(folded, last + 1).group() if "a" <= nxt <= "z" else ""  # type: ignore[union-attr]
                if suffix and (
                    not alpha_end
                    or not any(
                        cat == CONCEPT and _suffix_ok(folded[s : last + 1], suffix, mode)
                        for (cat, _), mode in entries
                    )
                ):
                    continue
            out.append((s, concepts))
        return out


_SUFFIX = re.compile(r"[a-z]{0,9}")
# Suffixes that make a force word a noun or adjective ("requirements", "needful"): no force.
_NOUN_SUFFIXES = frozenset(("ment", "ments", "al", "ly", "er", "ers", "ion", "ions", "ation", "ations"))


# Words that read as a lexicon word plus a suffix and are another word: "feed" is not "fee" + d.
_FALSE_INFLECTIONS = frozenset(("feed", "seed", "weed", "deed", "heed", "reed", "breed", "bleed", "speed"))


def _suffix_ok(surface: str, suffix: str, mode: int) -> bool:
    if not surface[-1].isalpha():
        return suffix == ""
    if suffix and surface + suffix in _FALSE_INFLECTIONS:
        return False
    if mode == _WORD:
        return (
            suffix in EN_SUFFIXES
            or suffix in ("n", "en")
            or (suffix[:1] == surface[-1] and suffix[1:] in _DOUBLED)
        )
    if mode == _STEM_E:
        return suffix in _STEM_E_SUFFIXES
    return suffix in _STEM_Y_SUFFIXES


def _stems(token: str) -> list[str]:
    """Base forms of an inflected fallback word, so "calls" also finds "call" and "hard-coded" finds
    "hard-code" (a base form matches its own inflections in _WORD mode)."""
    if token in IRREGULAR_BASE:  # "spoken" → "speak", "sold" → "sell"
        return [IRREGULAR_BASE[token]]
    if not token.isascii() or len(token) <= 4 or not token[-1].isalpha():
        return []
    if token.endswith("ies"):
        return [token[:-3] + "y"]
    if token.endswith("ed"):
        return [token[:-1], token[:-2]]
    if token.endswith("ing"):
        return [token[:-3], token[:-3] + "e"]
    if token.endswith("s") and not token.endswith("ss"):
        return [token[:-1]]
    # nominalisations find their verb: "acknowledgement" → "acknowledged", "rotation" → "rotate"
    if token.endswith("ment") and len(token) > 7:
        return [token[:-4]]
    if token.endswith("ation") and len(token) > 7:
        return [token[:-5], token[:-5] + "e"]
    if token.endswith("ion") and len(token) > 6:
        return [token[:-3], token[:-3] + "e"]
    return []


def _english_forms(surface: str) -> list[tuple[str, int]]:
    forms = [(surface, _WORD)]
    if " " not in surface and len(surface) > 3 and surface.isalpha():
        if surface.endswith("e"):
            forms.append((surface[:-1], _STEM_E))
        elif surface.endswith("y"):
            forms.append((surface[:-1], _STEM_Y))
    # irregular verbs: "keep" also finds "kept", "write … to" also "written to" (lexicon.IRREGULAR_FORMS)
    head, sep, rest = surface.partition(" ")
    forms += [(form + sep + rest, _WORD) for form in IRREGULAR_FORMS.get(head, ())]
    if sep and head.isalpha() and len(head) > 1:
        # a phrase inflects its first word: "drop below" also finds "drops below", "dropped below"
        forms += [(form + sep + rest, _WORD) for form in _inflections(head)]
    return forms


_VOWELS = frozenset("aeiou")


def _inflections(verb: str) -> list[str]:
    """The regular -s, -ed and -ing forms of an English verb ("drop" → drops, dropped, dropping)."""
    if verb.endswith("e"):
        return [verb + "s", verb + "d", verb[:-1] + "ing"]
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in _VOWELS:
        return [verb[:-1] + "ies", verb[:-1] + "ied", verb + "ing"]
    plural = verb + ("es" if verb.endswith(("s", "x", "z", "ch", "sh", "o")) else "s")
    consonant = [ch not in _VOWELS for ch in verb]
    one_syllable_cvc = (len(verb) == 3 and consonant == [True, False, True]) or (
        len(verb) == 4 and consonant == [True, True, False, True]
    )
    if one_syllable_cvc and verb[-1] not in "wxy":
        return [plural, verb + verb[-1] + "ed", verb + verb[-1] + "ing"]  # drop → dropped, dip → dipping
    return [plural, verb + "ed", verb + "ing"]


_Value = tuple[
    int,
    bool,
    tuple[tuple[tuple[str, str], int], ...],
    "tuple[tuple[str, str], ...] | None",
    tuple[str, ...],
    bool,
]


def _surface_value(surface: str, entries: list[tuple[tuple[str, str], int]]) -> _Value:
    """What a matcher's automaton stores for one surface (Matcher.scan unpacks it)."""
    ents = tuple(entries)
    plain = all(mode == _WORD for _, mode in ents)
    tags = tuple(tag for tag, _ in ents)
    concepts = tuple(v for (cat, v) in tags if cat == CONCEPT)
    return (
        len(surface),
        surface[0].isascii(),
        ents,
        tags if plain else None,
        concepts,
        surface[-1].isalpha(),
    )


@lru_cache(maxsize=1)
def _base_dict() -> dict[str, list[tuple[tuple[str, str], int]]]:
    return dict(_base_table())


@lru_cache(maxsize=1)
def _base_values() -> dict[str, _Value]:
    return {surface: _surface_value(surface, entries) for surface, entries in _base_table()}


@lru_cache(maxsize=1)
def _surfaces_by_concept() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for surface, entries in _base_table():
        for (cat, value), _ in entries:
            if cat == CONCEPT and (not out.get(value) or out[value][-1] != surface):
                out.setdefault(value, []).append(surface)
    return out


@lru_cache(maxsize=1)
def _base_table() -> tuple[tuple[str, list[tuple[tuple[str, str], int]]], ...]:
    table: dict[str, list[tuple[tuple[str, str], int]]] = {}

    def add(surface: str, tag: tuple[str, str]) -> None:
        surface = fold(surface)
        forms = _english_forms(surface) if surface[:1].isascii() else [(surface, _WORD)]
        for form, mode in forms:
            entries = table.setdefault(form, [])
            if (tag, mode) not in entries:
                entries.append((tag, mode))

    for concept in CONCEPTS:
        for s in concept.surfaces:
            add(s, (CONCEPT, concept.id))
    for force, surfaces in FORCE_MARKERS.items():
        for s in surfaces:
            add(s, (FORCE, force.value))
    for s in SCOPE_WORDS:
        add(s, (SCOPE, s))
    for s in CONDITION_MARKERS:
        add(s, (COND, s))
    for s in REPORTING_VERBS:
        add(s, (REPORT, s))
    for s in STANDING_MARKERS:
        add(s, (STANDING, s))
    for s in ONE_OFF_MARKERS:
        add(s, (ONE_OFF, s))
    for s in NEUTRAL_SURFACES:
        add(s, (NEUTRAL, s))
    return tuple((k, v) for k, v in table.items())


@lru_cache(maxsize=1)
def base_matcher() -> Matcher:
    """The lexicon-only matcher (no fallback tokens)."""
    return Matcher()


# --- fallback tokens -----------------------------------------------------------------------------

_EN_TOKEN = re.compile(r"[a-z0-9_][a-z0-9_\-./]*[a-z0-9_]|[a-z0-9]")
_CJK_RUN = re.compile("[\u4e00-\u9fff]+")


def fallback_tokens(text: str) -> dict[str, tuple[str, float]]:
    """Words of `text` the lexicon does not cover, as extra matchable tokens → (concept id, weight).

    English: content words (≥ 3 letters, not stop words) and identifiers ("ai.md", weight 1.5).
    Chinese: character bigrams of runs the lexicon leaves uncovered (weight 0.5 each).
    """
    folded = fold(text)
    covered = bytearray(len(folded))
    zh = _CJK_RUN.search(folded) is not None
    for h in base_matcher().scan(folded):
        if all(cat == NEUTRAL for cat, _ in h.tags):
            continue  # "供应商", "索要": words that merely contain a force character are still words
        if zh and folded[h.start].isascii() and all(cat == SCOPE for cat, _ in h.tags):
            continue  # "禁止使用 any 类型": English inside Chinese is a literal, not a quantifier
        for i in range(h.start, h.end):
            covered[i] = 1
    for s, e, _ in find_numbers(folded):  # numbers compare as values (Clause.numbers), not as words
        for i in range(s, e):
            covered[i] = 1
    out: dict[str, tuple[str, float]] = {}
    for m in _EN_TOKEN.finditer(folded):
        tok = m.group().strip(".-/")
        if not tok or any(covered[m.start() : m.end()]):
            continue
        ident = any(c in tok for c in "._/") or any(c.isdigit() for c in tok)
        if tok.isdigit():
            continue
        if not ident and (len(tok) < 3 or tok in EN_STOPWORDS) and not (zh and len(tok) >= 3):
            continue
        out[tok] = ("fb:" + tok, 1.5 if ident else 1.0)
        for form in IRREGULAR_FORMS.get(tok, ()):  # "feed" is also "the penguins are fed"
            out.setdefault(form, ("fb:" + tok, 1.0))
    # a quoted literal is an identifier the rule names: 使用“您”, sign as 'The Brightmart team'
    for m in _QUOTED_LITERAL.finditer(folded):
        lit = m.group(1).strip()
        if lit and len(lit) <= 30:
            out.setdefault(lit, ("fb:" + lit, 1.5))
    for m in _CJK_RUN.finditer(folded):
        run = [ch if not covered[m.start() + i] else " " for i, ch in enumerate(m.group())]
        for part in "".join(run).split():
            if len(part) == 2:  # one word the lexicon does not know: "合同", "发票"
                if part not in _CJK_FUNCTION_WORDS and part[0] not in _CJK_SEQUENCE:
                    out.setdefault(part, ("fb:" + part, 1.0))
                continue
            for i in range(len(part) - 1):
                bigram = part[i : i + 2]
                if (
                    bigram in _CJK_FUNCTION_WORDS
                    or bigram[0] in _CJK_PARTICLES
                    or bigram[1] in _CJK_PARTICLES
                ):
                    continue  # "的操", "向用": pieces of grammar, not of the rule's subject
                out.setdefault(bigram, ("fb:" + bigram, 0.6))
    return out


_QUOTED_LITERAL = re.compile(r"[“\"「『']([^”\"」』'\n]{1,30})[”\"」』']")

# Grammar that carries no subject matter: particles and prepositions (never inside a fallback
# bigram) and function words (never a fallback token on their own).
_CJK_PARTICLES = frozenset("的了着过是在和与及或也都就还又把被给对向从为而且并之其再由才先已曾将有")
# sequence and aspect adverbs: a two-character run that opens with one ("再经", "先备") is grammar
_CJK_SEQUENCE = frozenset("再先才就又还也都已曾将")
_CJK_FUNCTION_WORDS = frozenset(
    (
        "涉及",
        "相关",
        "有关",
        "操作",
        "进行",
        "需要",
        "时候",
        "之前",
        "之后",
        "以前",
        "以后",
        "内容",
        "情况",
        "方面",
        "一下",
        "然后",
        "随后",
        "最后",
        "首先",
        # aspect adverbs: "已经合并的" and "已合并的" name the same files
        "已经",
        "曾经",
        "正在",
        "仍然",
        "依然",
    )
)


# --- clauses -------------------------------------------------------------------------------------

# Clause ends: Chinese and ASCII punctuation (after folding), line ends, and an English full stop
# followed by a space. A comma inside a number ("$1,000") does not end a clause.
# ":" inside a time ("9:00", "18:30") ends nothing.
_CLAUSE_END = re.compile(
    r"[。！？；;!?\n：]|(?<!\d):(?!//)|:(?!//|\d)|,(?!(?<=\d,)\d{3}(?!\d))|(?<=[^\s\d])\.(?=\s|$)"
)
_SENTENCE_END = re.compile(r"[。！？；;!?\n：]|(?<!\d):(?!//)|:(?!//|\d)|(?<=[^\s\d])\.(?=\s|$)")
_LEAD = re.compile(r"[\s\-*•>#]*(?:\(?\d+[.)、]|[一二三四五六七八九十]+、|（\d+）)?\s*(?:请|please\s+)?")
_OPEN_QUOTES = "“\"「『'‘《"
_CLOSE_FOR = {"“": "”", '"': '"', "「": "」", "『": "』", "'": "'", "‘": "’", "《": "》"}

# Which force wins when a clause holds several (see Clause.force).
_PRIORITY = (Force.PROHIBITION, Force.RESTRICTION, Force.OBLIGATION, Force.SHOULD, Force.PERMISSION)
_HEDGES = (Force.ADVICE, Force.CAUTION)


@dataclass(slots=True)
class Clause:
    """One clause of a parsed text. Offsets are into the text given to `parse` (plus `base`)."""

    start: int
    end: int
    force: Force = Force.NONE
    force_word: str = ""
    concepts: dict[str, tuple[int, int]] = field(default_factory=dict)
    core: frozenset[str] = frozenset()
    scope: tuple[str, ...] = ()
    condition: frozenset[str] = frozenset()
    condition_text: str = ""
    numbers: tuple[str, ...] = ()
    sentence: int = 0
    reported: bool = False
    quoted: bool = False  # inside quoted material (quotes.py): words someone wrote, not an instruction
    labelled: bool = False  # force given by a rule label ("Rules:", "约定："): a rule of no stated polarity
    subordinate: bool = False  # the condition of the next clause ("回答…时", "When a refund is over $100")
    question: bool = False
    inherited: bool = False
    nouns: set[str] = field(default_factory=set)  # action concepts used as nouns ("a refund")
    unknown: frozenset[str] = frozenset()  # words the lexicon does not know where an object stands

    @property
    def actions(self) -> set[str]:
        """Action concepts used as actions (not "every change", "的变更")."""
        return {c for c in self.concepts if _kind(c) is Kind.ACTION and c not in self.nouns}


# A run of English words a rule names by its initials elsewhere: "data-subject access request" =
# "DSAR", "multi-factor authentication" = "MFA". Words of a run: letters, hyphen parts counted apart.
_EN_RUN_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
_MIN_ACRONYM = 3
# Bound words end a run ("… request within …"): a threshold is no part of a name.
_RUN_BREAKS = frozenset(("exceed", "limit", "at_least"))


def acronyms(text: str, matcher: Matcher) -> dict[str, tuple[str, ...]]:
    """Acronym → the concept ids of the words it abbreviates, for each run of English content words
    of `text` (a rule) and each of its tails ("enable multi-factor authentication" gives "emfa" and
    "mfa"): initials of at least three letters, never a stop word or a force, scope or condition word
    inside the run. Raises nothing; empty for Chinese-only text."""
    folded = fold(text)
    hits = matcher.scan(folded)
    blocked = bytearray(len(folded))
    concept_at: dict[int, tuple[str, ...]] = {}
    for h in hits:
        cids = tuple(v for cat, v in h.tags if cat == CONCEPT)
        if not cids or set(cids) & _RUN_BREAKS:
            for i in range(h.start, h.end):
                blocked[i] = 1
            continue
        concept_at[h.start] = cids
    for a, b, _ in find_numbers(folded):  # "within fifteen business days" is no name
        for i in range(a, b):
            blocked[i] = 1
    words: list[list[tuple[int, int]]] = [[]]
    for m in _EN_RUN_WORD.finditer(folded):
        gap = folded[words[-1][-1][1] : m.start()] if words[-1] else " "
        stop = m.group() in EN_STOPWORDS or any(blocked[m.start() : m.end()])
        if stop or gap.strip() not in ("", "-"):
            words.append([])
        if not stop:
            words[-1].append((m.start(), m.end()))
    out: dict[str, tuple[str, ...]] = {}
    for run in words:
        for k in range(len(run)):
            tail = run[k:]
            parts = [p for a, b in tail for p in folded[a:b].split("-") if p]
            if not _MIN_ACRONYM <= len(parts) <= 6:
                continue
            start, end = tail[0][0], tail[-1][1]
            named: list[str] = []  # the concepts (lexicon or the rule's fallback tokens) inside the tail
            for pos, found in concept_at.items():
                if start <= pos < end:
                    named += [c for c in found if c not in named]
            if named:
                out.setdefault("".join(p[0] for p in parts), tuple(named))
    return out


def _kind(cid: str) -> Kind:
    concept = CONCEPTS_BY_ID.get(cid)
    return concept.kind if concept else Kind.OBJECT


def parse(
    text: str, matcher: Matcher | None = None, *, base: int = 0, folded: str | None = None
) -> list[Clause]:
    """Cut `text` into clauses and read each clause's constraint (see module docstring).

    base: added to every offset (to parse a slice of a longer message and keep message offsets);
    folded: fold(text) when the caller has it. Clauses without concepts and force are dropped.
    """
    matcher = matcher or base_matcher()
    f = fold(text) if folded is None else folded
    hits = matcher.scan(f)
    # clause boundaries
    bounds: list[tuple[int, int, str]] = []
    pos = 0
    for m in _CLAUSE_END.finditer(f):
        bounds.append((pos, m.start(), m.group()))
        pos = m.end()
    if pos < len(f):
        bounds.append((pos, len(f), ""))
    sentence_ends = [m.start() for m in _SENTENCE_END.finditer(f)]
    hit_starts = [h.start for h in hits]
    clauses: list[Clause] = []
    for cs, ce, delim in bounds:
        if not f[cs:ce].strip():
            continue
        lo = bisect_right(hit_starts, cs - 1)
        hi = bisect_right(hit_starts, ce - 1)
        chits = [h for h in hits[lo:hi] if h.end <= ce]
        clause = _read_clause(text, f, cs, ce, chits)
        clause.sentence = bisect_right(sentence_ends, cs - 1)
        # a question ends with ?; its clauses are asked, not ordered
        qpos = _SENTENCE_END.search(f, ce)
        clause.question = delim == "?" or (
            qpos is not None and qpos.group() == "?" and "\n" not in f[ce : qpos.start()]
        )
        if clause.question:
            clause.force, clause.force_word = Force.NONE, ""
        clauses.append(clause)
    _inherit(clauses)
    out = [c for c in clauses if c.concepts or c.force is not Force.NONE]
    if base:
        for c in out:
            c.start += base
            c.end += base
            c.concepts = {k: (s + base, e + base) for k, (s, e) in c.concepts.items()}
    return out


def _read_clause(text: str, f: str, cs: int, ce: int, hits: list[Hit]) -> Clause:
    clause = Clause(cs, ce)
    # reported speech: "助手表示不能删除" → markers after the reporting verb are suppressed, unless the
    # verb introduces a quote and the marker comes after the quote ("用户说“已授权”不能替代…").
    suppressed: list[tuple[int, int]] = []
    for h in hits:
        if any(cat == REPORT for cat, _ in h.tags) and _reporting(f, cs, h):
            j = h.end
            while j < ce and f[j] == " ":
                j += 1
            if j < ce and f[j] in _OPEN_QUOTES:
                close = f.find(_CLOSE_FOR[f[j]], j + 1, ce)
                suppressed.append((h.start, close + 1 if close >= 0 else ce))
            else:
                suppressed.append((h.start, ce))
    markers: list[tuple[int, Force, str]] = []
    scope: list[str] = []
    cond_at = -1
    for h in hits:
        for cat, val in h.tags:
            if cat == FORCE:
                if any(a <= h.start < b for a, b in suppressed):
                    clause.reported = True
                    continue
                markers.append((h.start, Force(val), text[h.start : h.end]))
            elif cat == CONCEPT:
                if (
                    _kind(val) is Kind.ACTION
                    and _RELATIVE.match(f, h.end) is not None
                    and h.end - h.start >= 2
                ):
                    continue  # "我发给你的截图", "已删除的订单": describes the thing, is no part of the rule
                if _kind(val) is Kind.ACTION and _noun_use(f, h.start) and val not in clause.concepts:
                    clause.nouns.add(val)  # "every change to …", "的变更": a thing, not the action
                elif _kind(val) is Kind.ACTION:
                    clause.nouns.discard(val)
                clause.concepts.setdefault(val, (h.start, h.end))
            elif cat == SCOPE:
                if f[h.start].isascii() and _CJK_RUN.search(f, cs, ce) is not None:
                    continue  # "不许出现 any": an English word in Chinese is a literal (fallback_tokens)
                scope.append(text[h.start : h.end])
            elif cat == COND and cond_at < 0:
                cond_at = h.start
    # "用户需要…" / "the customer needs…" is narrative, not an obligation
    markers = [
        m
        for m in markers
        if not (
            (m[1] is Force.SHOULD or fold(m[2]) in _VOLITIONAL) and _after_third_party(f, cs, m[0], clause)
        )
    ]
    markers = _negation_scope(f, text, markers, hits)
    clause.unknown = _unknown_objects(f, cs, ce, hits)
    force, word, at = _pick_force(markers)
    clause.subordinate = force is Force.NONE and _SUBORDINATE.search(f[cs:ce]) is not None
    if force is Force.NONE and not clause.reported:
        force, word, at = _bare_negation(f, text, hits)
    if force not in (Force.PROHIBITION, Force.RESTRICTION) and not clause.reported:
        # "No damage fee may be waived unless…", "no code is to be written until…": a clause that
        # opens with "No <thing>" forbids, whatever modal follows
        no_force, no_word, no_at = _no_phrase(f, text, cs, ce)
        if no_force is Force.PROHIBITION:
            force, word, at = no_force, no_word, no_at
    if force is Force.NONE and not clause.reported and not clause.subordinate:
        force, word, at = _imperative(f, text, cs, ce, hits)
    clause.force, clause.force_word = force, word
    clause.scope = tuple(scope)
    clause.numbers = tuple(v for _, _, v in find_numbers(f[cs:ce]))
    if cond_at >= 0:
        # a condition that opens the clause ends at the force word: in "未经审批不得下架任何商品" and
        # "without a ticket, never refund an order" what is forbidden is not part of the condition
        # (之前/以前 close what stands before them: "删除任何表之前必须…" keeps its reading)
        cond_end = (
            at
            if 0 <= cond_at < at
            and force is not Force.IMPERATIVE
            and f[cond_at : cond_at + 2] not in _POSTPOSED
            else ce
        )
        if f.startswith("未经", cond_at):
            # "未经核实的网传视频不得使用": 未经…的 describes what follows it (an unverified video), which is
            # the thing the rule governs, not part of the condition
            de = f.rfind("的", cond_at, cond_end)
            if de > cond_at:
                cond_end = de + 1
        clause.condition = frozenset(c for c, (s, _) in clause.concepts.items() if cond_at <= s < cond_end)
        clause.condition_text = text[cond_at:cond_end].strip()
    after = {c for c, (s, _) in clause.concepts.items() if s >= at and c not in clause.condition}
    if force is Force.IMPERATIVE or at < 0:
        after = set(clause.concepts) - set(clause.condition)
    clause.core = frozenset(after or (set(clause.concepts) - set(clause.condition)) or clause.concepts)
    return clause


_POSTPOSED = ("之前", "以前")  # condition markers that follow what they govern
_SUBJECT = re.compile(
    r"(?:用户|客户|助手|模型|我|他|她|对方|管理员|系统|(?<!全)部门?|团队|小组|中心|\b(?:user|assistant|customer|he|she|they|it|i|we|the model|the agent|manager|admin))"
    r"(?:之前|以前|此前|先前|早先|已经|已|曾|也|还|又|再次|明确|一直)?\s*$"
)


def _reporting(f: str, cs: int, h: Hit) -> bool:
    """Is this reporting verb really reporting? "助手表示…", "the user asked…", "说：…" — not "所有回复都…"."""
    nxt = f[h.end : h.end + 1]
    if nxt in (":", "：") or (nxt and nxt in _OPEN_QUOTES):
        return True
    return _SUBJECT.search(f, max(cs, h.start - 12), h.start) is not None


_DETERMINER = re.compile(
    r"(?:\b(?:every|each|any|all|the|a|an|no|these|those|this|that|its|their|his|her|your|our|my)\s+"
    r"(?:[\w.]*[-./\d][-\w./]*\s+)?|的)$"
)  # "the --dry-run change", "the v2 migration": an identifier between determiner and noun


# "我发给你的截图": an action followed by (a pronoun and) 的 describes a thing; it is not the action ruled
_RELATIVE = re.compile(r"[我你他她它]?们?的")


def _noun_use(f: str, at: int) -> bool:
    if _DETERMINER.search(f, max(0, at - 8), at) is not None:
        return True
    # the longer look-back only where an identifier may stand between ("the --dry-run change")
    return f[at - 1 : at] == " " and _DETERMINER.search(f, max(0, at - 32), at) is not None


_SKIP_AFTER_ACTION = re.compile(
    r"(?:\s|的|任何|所有|全部|一切|任意|各种|\b(?:a|an|the|any|all|every|each|no|of|to|under|in|on|for|from)\b)*"
)
_CJK_STOP = frozenset(
    [
        "一下",
        "一次",
        "一遍",
        "一点",
        "之前",
        "之后",
        "前先",
        "时候",
        "操作",
        "相关",
        "事务",
        "事项",
        "工作",
        "情况",
        "内容",
        "信息",
        "请求",
        "要求",
        "诉求",
    ]
)
_EN_IDENT = re.compile(r"[a-z0-9_][a-z0-9_\-]*(?:[./][a-z0-9_\-]+)+/?")
_EN_WORD = re.compile(r"[a-z][a-z0-9_\-]{2,}")


def _unknown_objects(f: str, cs: int, ce: int, hits: list[Hit]) -> frozenset[str]:
    """Words the lexicon does not know that stand where an action's object stands ("新增任何[合同]",
    "edit [vendor/gen2/]"), plus identifiers anywhere in the clause: they tell "the same action on
    another thing" apart from a rewording."""
    covered = [(h.start, h.end) for h in hits]
    covered += [(cs + s, cs + e) for s, e, _ in find_numbers(f[cs:ce])]  # a number is no object
    out: set[str] = set()

    def is_covered(i: int) -> bool:
        return any(a <= i < b for a, b in covered)

    for m in _EN_IDENT.finditer(f, cs, ce):
        if not is_covered(m.start()):
            out.add(m.group().rstrip("/"))
    for h in hits:
        if not any(cat == CONCEPT and _kind(v) is Kind.ACTION for cat, v in h.tags):
            continue
        j = h.end
        while j < ce:
            skip = _SKIP_AFTER_ACTION.match(f, j, ce)
            k = skip.end() if skip else j
            nxt = next((b for a, b in covered if a == k), None)
            if nxt is not None and any(cat == SCOPE for hh in hits if hh.start == k for cat, _ in hh.tags):
                j = nxt  # a scope word: look past it
                continue
            j = k
            break
        if j >= ce or is_covered(j):
            continue
        if "\u4e00" <= f[j] <= "\u9fff":
            e = j
            while e < ce and e - j < 4 and "\u4e00" <= f[e] <= "\u9fff" and not is_covered(e):
                e += 1
            word = f[j:e]
            # "发布前要跑…", "删除后…": a time word after the action, not its object
            if len(word) >= 2 and word[:2] not in _CJK_STOP and word[0] not in "前后时":
                out.add(word)
        else:
            wm = _EN_WORD.match(f, j, ce)
            if wm and wm.group() not in EN_STOPWORDS:
                out.add(wm.group())
    return frozenset(out)


# Modals that also mean "want" after a third party: "用户要转账给供应商", "the customer needs a refund".
_VOLITIONAL = frozenset(("要", "都要", "也要", "还要", "need", "needs", "need to", "needs to"))
_THIRD_PARTY = re.compile(
    r"(?:\b(?:he|she|they|customer|user|client)s?|先生|女士|小姐|他们|她们|他|她|对方|患者|家长)\s*$"
)


def _after_third_party(f: str, cs: int, at: int, clause: Clause) -> bool:
    window = f[max(cs, at - 6) : at]
    if _THIRD_PARTY.search(window):
        return True
    user = clause.concepts.get("user")
    return user is not None and 0 <= at - user[1] <= 1


# Markers that say "in every case" and take a following 不/not as their own negation: "一律不提供",
# "始终不透露", "always refuse" reads as a prohibition, never as an obligation to act.
_UNIVERSAL_OBLIGATIONS = frozenset(("一律", "始终", "总是", "一概", "always", "at all times"))
_NEGATED_AFTER = re.compile(r"\s*(?:都|也|均)?\s*(?:不|没|never\b|not\b)")


def _negation_scope(
    f: str, text: str, markers: list[tuple[int, Force, str]], hits: list[Hit]
) -> list[tuple[int, Force, str]]:
    """ "一律不提供具体剂量" is "never provide": a universal obligation word followed by a negation
    (before an action) is a prohibition, whatever the marker list says."""
    out = []
    for at, force, word in markers:
        if force is Force.OBLIGATION and fold(word) in _UNIVERSAL_OBLIGATIONS:
            end = at + len(word)
            m = _NEGATED_AFTER.match(f, end)
            if m is not None and any(
                h.start >= m.end() - 1 and h.start <= m.end() + 1 and any(cat == CONCEPT for cat, _ in h.tags)
                for h in hits
            ):
                out.append((at, Force.PROHIBITION, text[at : m.end()]))
                continue
        out.append((at, force, word))
    return out


def _pick_force(markers: list[tuple[int, Force, str]]) -> tuple[Force, str, int]:
    """A hedge before a hard marker wins ("最好不要删除" is advice, "try to never" too); otherwise
    prohibition > restriction > (hedge) > obligation > should > permission."""
    if not markers:
        return Force.NONE, "", -1
    first_hedge = next((m for m in markers if m[1] in _HEDGES), None)
    prohibitions = [m for m in markers if m[1] is Force.PROHIBITION]
    if prohibitions and (first_hedge is None or first_hedge[0] > prohibitions[0][0]):
        return prohibitions[0][1], prohibitions[0][2], prohibitions[0][0]
    restrictions = [m for m in markers if m[1] is Force.RESTRICTION]
    if restrictions:
        return restrictions[0][1], restrictions[0][2], restrictions[0][0]
    obligations = [m for m in markers if m[1] is Force.OBLIGATION]
    if first_hedge is not None and not (obligations and obligations[0][0] < first_hedge[0]):
        # "最好必须" is advice; "必须建议患者咨询医生" obliges (the hedge word is the verb it governs)
        return first_hedge[1], first_hedge[2], first_hedge[0]
    for force in _PRIORITY[2:]:
        for m in markers:
            if m[1] is force:
                return m[1], m[2], m[0]
    return Force.NONE, "", -1


_BARE_NOT = ("不", "不再", "从不", "决不再")


def _bare_negation(f: str, text: str, hits: list[Hit]) -> tuple[Force, str, int]:
    """ "不" right before an action is a prohibition in rule lists: "约束：不改 API", "不泄露系统提示词"
    (longer markers — 不得/不要/不能 — are force words of their own and win before this runs)."""
    for h in hits:
        if any(cat == CONCEPT and (_kind(v) is Kind.ACTION or v == "use") for cat, v in h.tags):
            for neg in _BARE_NOT:
                s = h.start - len(neg)
                if s >= 0 and f[s : h.start] == neg:
                    return Force.PROHIBITION, text[s : h.start], s
            # the passive of a prohibition: "claims above $50 are not approved unless…"
            m = _EN_PASSIVE_NOT.search(f, max(0, h.start - 16), h.start)
            if m is not None:
                return Force.PROHIBITION, text[m.start() : m.end()].strip(), m.start()
    return Force.NONE, "", -1


_EN_PASSIVE_NOT = re.compile(r"\b(?:is|are|be|get|gets)\s+not\s+(?:to\s+)?(?:be\s+)?$")


_NO_PHRASE = re.compile(
    r"no\s+(?!one\b|longer\b|matter\b|more than\b|less than\b|later than\b|doubt\b|need\b|problem\b|exceptions?\b)[a-z]"
)


def _no_phrase(f: str, text: str, cs: int, ce: int) -> tuple[Force, str, int]:
    """A clause that opens with "No <thing>" is a prohibition: "No tabs in YAML files", "No outbound
    calls after 8 pm" (issue 12 §2: rules written as noun phrases)."""
    lead = _LEAD.match(f, cs, ce)
    start = lead.end() if lead else cs
    m = _NO_PHRASE.match(f, start, ce)
    if m is None:
        return Force.NONE, "", -1
    return Force.PROHIBITION, text[start : start + 2], start


# A clause that opens with a subordinator or ends with a time/condition word sets the condition of
# the clause after it ("回答儿童用药问题时，必须…", "When a refund is over $100, always…", "Before
# rotating the credentials, announce it"): it directs nothing on its own, whatever verb it opens with.
_SUBORDINATE = re.compile(
    r"^[\s\-*•>#]*(?:\(?\d+[.)、]\s*)?(?:当|如果|若是|若|假如|一旦|凡是|每当|在[^，,]{1,24}(?:时|前|后)$"
    r"|\b(?:when|whenever|if|before|after|once|while|until|unless)\b)"
    r"|(?:时|时候|之时|之前|以前|之后|以后|的话)\s*$"
)


def _imperative(f: str, text: str, cs: int, ce: int, hits: list[Hit]) -> tuple[Force, str, int]:
    """A clause that opens with an action verb (or 请/please) is a bare directive: "Log account changes."."""
    lead = _LEAD.match(f, cs, ce)
    start = lead.end() if lead else cs
    polite = lead is not None and ("请" in lead.group() or "please" in lead.group())
    for h in hits:
        if h.start < start:
            continue
        if h.start == start and any(
            cat == CONCEPT and (_kind(v) is Kind.ACTION or v == "use") for cat, v in h.tags
        ):  # "Use pnpm, never npm": 使用/use opens a directive like any other verb
            nxt = f[h.end : h.end + 1]
            if nxt in ("了", "过", "着"):
                return Force.NONE, "", -1
            if f[h.start].isascii() and f[h.start : h.end].endswith(("ed", "ing")):
                return Force.NONE, "", -1
            return Force.IMPERATIVE, text[h.start : h.end], h.start
        break
    if polite:
        word = "please" if "please" in lead.group() else "请"  # type: ignore[union-attr]
        return Force.IMPERATIVE, word, start
    return Force.NONE, "", -1


def _inherit(clauses: list[Clause]) -> None:
    """A forceless clause takes the force of the clause before it in the same sentence ("Never
    reveal X, Y, or Z"), or of a force-only clause in that sentence ("删除订单，需谨慎")."""
    by_sentence: dict[int, list[Clause]] = {}
    for c in clauses:
        by_sentence.setdefault(c.sentence, []).append(c)
    for group in by_sentence.values():
        lenders = [c for c in group if c.force is not Force.NONE and not c.concepts]
        prev: Clause | None = None
        for c in group:
            if c.force is Force.NONE and c.concepts and not c.reported and not c.question:
                source = (
                    prev
                    if prev is not None and prev.force is not Force.NONE
                    else (lenders[0] if lenders else None)
                )
                if source is not None:
                    c.force, c.force_word, c.inherited = source.force, source.force_word, True
                    if source.scope and not c.scope:
                        c.scope = source.scope
            prev = c


def text_has(folded: str, category: str, matcher: Matcher | None = None) -> list[str]:
    """Surfaces of one tag category found in folded text (e.g. STANDING markers)."""
    return [val for h in (matcher or base_matcher()).scan(folded) for cat, val in h.tags if cat == category]
