"""Sentence/clause splitting and cheap keys for the claims, hierarchy and failure checks.

Everything here is linear in the text length: one regex pass to split, one pass to build keys.
The checks index clauses once and compare only candidates that share a key (never all clauses
against all clauses), so a 200k-token context costs about as much as reading it.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ctxaudit.engine.language.automata import Automaton
from ctxaudit.engine.language.normalize import nfkc
from ctxaudit.engine.strategies import strategy_family
from ctxaudit.engine.types import Context, Message

# Sentence ends: CJK and ASCII terminators, newlines, and "." followed by whitespace or the end
# (so "notes.txt" and "$10.50" stay whole): a run of terminators, or such a ".". Written to begin
# with one character class, so the regex engine skips to candidates at C speed instead of trying
# the pattern at every character (2x faster on Chinese text); it matches what
# `[。！？；!?;\n]+|\.(?=\s|$)` matches.
_SENTENCE_END = re.compile(r"[。！？；!?;\n.](?:(?<=\.)(?=\s|$)|(?<!\.)[。！？；!?;\n]*)")
# Clause breaks inside a sentence: full-width commas/colons, ASCII ones followed by a space
# (so "https://x", "10:30" and "1,000" stay whole).
_CLAUSE_BREAK = re.compile(r"[，：]\s*|[,:]\s+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[a-z0-9][a-z0-9_\-@.$/]*[a-z0-9]|[a-z0-9]")

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "with",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "i",
        "you",
        "he",
        "she",
        "we",
        "they",
        "me",
        "my",
        "your",
        "our",
        "their",
        "his",
        "her",
        "them",
        "us",
        "do",
        "does",
        "did",
        "done",
        "have",
        "has",
        "had",
        "will",
        "would",
        "can",
        "could",
        "should",
        "may",
        "might",
        "must",
        "shall",
        "not",
        "no",
        "so",
        "than",
        "too",
        "very",
        "just",
        "also",
        "about",
        "into",
        "over",
        "under",
        "up",
        "down",
        "out",
        "off",
        "again",
        "further",
        "once",
        "here",
        "there",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "only",
        "own",
        "same",
        "please",
        "ok",
        "okay",
    ]
)
# Chinese function characters that make weak bigrams on their own.
_ZH_WEAK = frozenset("的了是在和与及或也都就还又把被给对向从为而且并吗呢吧啊之其这那个")


def has_cjk(text: str) -> bool:
    """True when the text holds any CJK ideograph (used to pick the message language)."""
    return _CJK.search(text) is not None


@dataclass(frozen=True, slots=True)
class Clause:
    """A clause of one message: content[start:end] == text; sentence is the enclosing sentence's span."""

    message_index: int
    role: str
    start: int
    end: int
    text: str
    sent_start: int
    sent_end: int


_LEAD = frozenset(" \t\r\n\u3000-–—<>!#*•·")
_TAIL = frozenset(" \t\r\n\u3000-–—<>，：,:")


def _trimmed(content: str, start: int, end: int) -> tuple[int, int]:
    """Drop surrounding whitespace and markup dashes/brackets ("<!-- x -->" quotes as "x")."""
    while start < end and content[start] in _LEAD:
        start += 1
    while end > start and content[end - 1] in _TAIL:
        end -= 1
    return start, end


_LEAD_CHARS = "".join(sorted(_LEAD))
_TAIL_CHARS = "".join(sorted(_TAIL))


def _split(content: str) -> list[tuple[int, int]]:
    pos = 0
    lead, tail = _LEAD_CHARS, _TAIL_CHARS
    out = []
    ends = [m.end() for m in _SENTENCE_END.finditer(content)]
    ends.append(len(content))
    for end in ends:
        seg = content[pos:end]
        s = end - len(seg.lstrip(lead))
        e = pos + len(seg.rstrip(tail))
        if e > s:
            out.append((s, e))
        pos = end
    return out


# The sentence bounds of each text split during one run of the checks: several checks read the
# same messages sentence by sentence. Scoped to the run (see sentence_memo), so no text outlives it.
_RUN_SENTENCES: ContextVar[dict[str, list[tuple[int, int]]] | None] = ContextVar(
    "run_sentences", default=None
)


@contextmanager
def sentence_memo() -> Iterator[None]:
    """Within this block, each text is split into sentences once (runner.run_checks uses it)."""
    token = _RUN_SENTENCES.set({})
    try:
        yield
    finally:
        _RUN_SENTENCES.reset(token)


def sentences(content: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each non-empty sentence in `content`, trimmed as _trimmed trims (by
    str.lstrip/rstrip, at C speed); split once per text inside a sentence_memo block."""
    memo = _RUN_SENTENCES.get()
    if memo is None:
        return iter(_split(content))
    got = memo.get(content)
    if got is None:
        got = memo[content] = _split(content)
    return iter(got)


_SUMMARY_MARKER = re.compile(
    r"(?:【[^】\n]{0,12}(?:摘要|总结|历史|记录)[^】\n]{0,6}】|\[[^\]\n]{0,24}(?:summary|history|recap|摘要)[^\]\n]{0,12}\])\s*",
    re.I,
)


def clauses_of(content: str, message_index: int, role: str) -> Iterator[Clause]:
    """Clauses of one message, each with its sentence span (attribution is judged per sentence).
    A leading summary marker ("【历史摘要】", "[History summary]") is not part of any clause."""
    for s_start, s_end in sentences(content):
        marker = _SUMMARY_MARKER.match(content, s_start, s_end)
        if marker:
            s_start = marker.end()
        pos = s_start
        sentence = content[s_start:s_end]
        for m in _CLAUSE_BREAK.finditer(sentence):
            a, b = _trimmed(content, pos, s_start + m.start())
            if b > a:
                yield Clause(message_index, role, a, b, content[a:b], s_start, s_end)
            pos = s_start + m.end()
        a, b = _trimmed(content, pos, s_end)
        if b > a:
            yield Clause(message_index, role, a, b, content[a:b], s_start, s_end)


def keys(text: str) -> set[str]:
    """Comparison keys: CJK character bigrams (weak function-word pairs dropped) and lowercase
    Latin words that are not stopwords. "我有管理员授权" → {"我有", "管理", "理员", "员授", "授权"}."""
    t = nfkc(text).casefold()
    out: set[str] = set()
    for run in _CJK_RUN.findall(t):
        if len(run) == 1:
            if run not in _ZH_WEAK:
                out.add(run)
            continue
        for i in range(len(run) - 1):
            pair = run[i : i + 2]
            if pair[0] in _ZH_WEAK and pair[1] in _ZH_WEAK:
                continue
            out.add(pair)
    for w in _WORD.findall(t):
        w = w.strip(".")
        if w and w not in STOPWORDS and (len(w) > 1 or w.isdigit()):
            out.add(w)
    return out


_SENT_DELIM = re.compile(r"[。！？；!?;\n]|\.(?=\s)")
_CLAUSE_DELIM = re.compile(r"[。！？；!?;\n，：]|\.(?=\s)|[,:](?=\s)")
# How far clause_at looks for a delimiter on each side: bounded, so one lookup is O(1).
_WINDOW = 240


# The same delimiters, read backwards (".x" before a space reads " ." reversed).
_SENT_DELIM_REV = re.compile(r"[。！？；!?;\n]|(?<=\s)\.")
_CLAUSE_DELIM_REV = re.compile(r"[。！？；!?;\n，：]|(?<=\s)\.|(?<=\s)[,:]")


def _bounds(content: str, pos: int, delim: re.Pattern[str], rev: re.Pattern[str]) -> tuple[int, int]:
    lo = max(0, pos - _WINDOW)
    back = rev.search(content[lo:pos][::-1])
    start = pos - back.start() if back else lo
    m = delim.search(content, pos, min(len(content), pos + _WINDOW))
    end = m.end() if m else min(len(content), pos + _WINDOW)
    return start, end


class _Delimiters:
    """Where one message's delimiters are (one scan of the whole message), so each clause_at
    bound is a bisection instead of two regex searches. Gives exactly what _bounds gives: a
    delimiter that needs whitespace after it ("." before a space) does not count when that
    whitespace lies outside the searched window."""

    def __init__(self, content: str, at: list[int], needs_space: str) -> None:
        """at: where the delimiters are in `content` (their start), in order."""
        self.content = content
        self.at = at
        self.needs_space = needs_space

    def bounds(self, pos: int) -> tuple[int, int]:
        content, at, n = self.content, self.at, len(self.content)
        lo = max(0, pos - _WINDOW)
        start = lo
        k = bisect_left(at, pos) - 1
        if k >= 0 and at[k] == pos - 1 and content[at[k]] in self.needs_space:
            k -= 1  # its whitespace is at pos, outside content[lo:pos]
        if k >= 0 and at[k] >= lo:
            start = at[k] + 1
        endpos = min(n, pos + _WINDOW)
        end = endpos
        k = bisect_left(at, pos)
        if k < len(at) and at[k] == endpos - 1 and content[at[k]] in self.needs_space:
            k += 1  # its whitespace is at endpos, outside the window
        if k < len(at) and at[k] < endpos:
            end = at[k] + 1
        return start, end


class _MessageDelimiters:
    def __init__(self, content: str) -> None:
        # every sentence delimiter is a clause delimiter too: one scan finds both kinds
        clause = [m.start() for m in _CLAUSE_DELIM.finditer(content)]
        self.sentence = _Delimiters(content, [p for p in clause if content[p] not in _CLAUSE_ONLY], ".")
        self.clause = _Delimiters(content, clause, ".,:")


# The clause delimiters that do not end a sentence (_CLAUSE_DELIM less _SENT_DELIM).
_CLAUSE_ONLY = frozenset("，：,:")


def clause_at(
    content: str, pos: int, message_index: int, role: str, delimiters: _MessageDelimiters | None = None
) -> Clause:
    """The clause (and its sentence) around character `pos` of a message, found by looking for
    delimiters at most a few hundred characters away: checks scan a whole message with one regex
    and build clauses only around the hits. `delimiters` (the message's, when many clauses of one
    message are wanted) gives the same bounds by bisection."""
    if delimiters is None:
        s_start, s_end = _bounds(content, pos, _SENT_DELIM, _SENT_DELIM_REV)
    else:
        s_start, s_end = delimiters.sentence.bounds(pos)
    marker = _SUMMARY_MARKER.match(content, s_start, s_end)
    if marker and marker.end() <= pos:
        s_start = marker.end()
    if delimiters is None:
        c_start, c_end = _bounds(content, pos, _CLAUSE_DELIM, _CLAUSE_DELIM_REV)
    else:
        c_start, c_end = delimiters.clause.bounds(pos)
    c_start, c_end = max(c_start, s_start), min(c_end, s_end)
    s_start, s_end = _trimmed(content, s_start, s_end)
    c_start, c_end = _trimmed(content, c_start, c_end)
    if c_end <= c_start:
        c_start, c_end = s_start, s_end
    return Clause(message_index, role, c_start, c_end, content[c_start:c_end], s_start, s_end)


# Above this many hits in one message, its delimiters are found once instead of around each hit.
_MANY_HITS = 8


def hit_clauses(content: str, index: int, role: str, patterns: Iterable[re.Pattern[str]]) -> list[Clause]:
    """The clauses around every hit of `patterns` in one message, each once, in text order: one
    regex scan per pattern over the message, clauses built only where something matched."""
    found: dict[tuple[int, int], Clause] = {}
    for pattern in patterns:
        for hit in pattern.finditer(content):
            c = clause_at(content, hit.start(), index, role)
            found.setdefault((c.start, c.end), c)
    return [found[k] for k in sorted(found)]


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def lowered(text: str) -> str:
    """Lowercase with the same length as `text` (so offsets carry over): str.lower, or ASCII-only
    lowering when a character would change length."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


class LiteralTrigger:
    """Lowercase literals found in `lowered` text with one Aho-Corasick pass: where any of them
    starts, the longest that starts there, left to right without overlap (what an alternation of
    the literals, longest first, finds, at a fraction of the cost of Python's re on long text).

    That is the leftmost-longest match kind of the Rust aho-corasick crate (automata.py): 2-3x
    faster than pyahocorasick's automaton on these texts.
    """

    def __init__(self, words: Iterable[str]) -> None:
        self.words = tuple(sorted({w for w in words if w}, key=len, reverse=True))
        self._auto = Automaton(self.words, longest=True) if self.words else None

    def found(self, low: str) -> bool:
        """Whether any of the literals occurs in `low`."""
        return self._auto is not None and bool(self._auto.matches(low))

    def spans(self, low: str) -> list[tuple[int, int]]:
        """(start, end) of each hit in `low`, in text order."""
        if self._auto is None:
            return []
        return [(start, end) for _, start, end in self._auto.matches(low)]


def literal_trigger(words: Iterable[str]) -> LiteralTrigger:
    """A trigger of lowercase literals, run on `lowered` text: checks find candidate positions with
    it and run their full (case-insensitive, lookaround) patterns on the clauses there only."""
    return LiteralTrigger(words)


# Summary words near a message's start (a case-insensitive literal search: an automaton on the
# casefolded text costs an eighth of re.I's alternation, once per new message)
_SUMMARY_HINT = literal_trigger(
    [
        *("摘要", "总结", "概要", "历史", "此前", "之前的对话"),
        *("summary", "summaris", "summariz", "previous conversation", "earlier conversation"),
        *("continued from", "so far", "recap"),
    ]
)


def trigger_clauses(
    content: str, index: int, role: str, trigger: LiteralTrigger, low: str | None = None
) -> list[Clause]:
    """Clauses around the hits of a `literal_trigger` in one message, in text order, each once."""
    low = lowered(content) if low is None else low
    out: list[Clause] = []
    last_end = -1
    delimiters: _MessageDelimiters | None = None
    for n, (start, end) in enumerate(trigger.spans(low)):
        if start < last_end:
            continue
        if n == _MANY_HITS and delimiters is None:
            delimiters = _MessageDelimiters(content)
        c = clause_at(content, start, index, role, delimiters)
        out.append(c)
        last_end = max(c.end, end)
    return out


# Strategy families whose compressor writes one summary (engine/strategies.py maps any name to its family).
SUMMARY_STRATEGIES = frozenset({"summary", "structured", "role_separated"})
SUMMARY_KINDS = frozenset({"summary", "compact_summary", "history_summary"})
# Above this many new messages, skip the "is it a cut-down copy?" substring test (keeps it linear).
_MAX_SUBSTRING_TESTS = 50


def _fold(text: str) -> str:
    """Whitespace-folded text: what "a verbatim copy" compares (C-speed split/join)."""
    return " ".join(text.split())


class PairIndex:
    """What the claims/hierarchy/failure checks share about one event, each part computed once:
    before-message fingerprints, the after messages the compressor wrote, the summaries among
    them. A copy is verbatim when role and text are equal up to whitespace. Linear in size."""

    def __init__(self, before: Context, after: Context) -> None:
        self.before, self.after = before, after
        self._exact = {(m.role, m.content): i for i, m in reversed(list(enumerate(before.messages)))}
        self._folded: dict[tuple[str, str], int] | None = None
        self._answers: dict[tuple[str, str], int | None] = {}
        self._new: list[tuple[int, Message]] | None = None
        self._written: list[tuple[int, Message]] | None = None
        self._summaries: dict[str | None, list[tuple[int, Message]]] = {}

    def source_of(self, m: Message) -> int | None:
        """Index of the before message `m` is a verbatim copy of, else None (answered once per
        role and text: several checks ask about every after message)."""
        key = (m.role, m.content)
        i = self._exact.get(key)
        if i is not None:
            return i
        if key in self._answers:
            return self._answers[key]
        if self._folded is None:
            self._folded = {}
            for j, b in enumerate(self.before.messages):
                self._folded.setdefault((b.role, _fold(b.content)), j)
        found = self._answers[key] = self._folded.get((m.role, _fold(m.content)))
        return found

    def new_messages(self) -> list[tuple[int, Message]]:
        """After messages that are not a verbatim copy of a before message: text written or moved."""
        if self._new is None:
            self._new = [(i, m) for i, m in enumerate(self.after.messages) if self.source_of(m) is None]
        return self._new

    def written_messages(self) -> list[tuple[int, Message]]:
        """New messages that are not a cut-down copy (a piece) of a before message of the same role."""
        if self._written is None:
            fresh = self.new_messages()
            if len(fresh) > _MAX_SUBSTRING_TESTS:
                self._written = fresh
            else:
                by_role: dict[str, str] = {}
                out = []
                for i, m in fresh:
                    if m.role not in by_role:
                        by_role[m.role] = "\x00".join(
                            _fold(b.content) for b in self.before.messages if b.role == m.role
                        )
                    folded = _fold(m.content)
                    if folded and m.kind != "encrypted_compaction" and folded in by_role[m.role]:
                        continue
                    out.append((i, m))
                self._written = out
        return self._written

    def summary_messages(self, strategy: str | None) -> list[tuple[int, Message]]:
        """Written messages outside the system role that carry a summary: marked by `kind` or by a
        summary word near their start; with a summarising strategy (summary/structured/
        role_separated) also the first written message (compressors write one summary). Computed
        once per strategy; the list is shared, do not change it."""
        found = self._summaries.get(strategy)
        if found is None:
            found = self._summaries[strategy] = self._find_summaries(strategy)
        return found

    def _find_summaries(self, strategy: str | None) -> list[tuple[int, Message]]:
        out: list[tuple[int, Message]] = []
        by_strategy = strategy_family(strategy) in SUMMARY_STRATEGIES
        for i, m in self.written_messages():
            if m.role == "system" or m.kind == "encrypted_compaction":
                continue
            if (
                m.kind in SUMMARY_KINDS
                or _SUMMARY_HINT.found(m.content[:300].casefold())
                or (by_strategy and not out)
            ):
                out.append((i, m))
        return out
