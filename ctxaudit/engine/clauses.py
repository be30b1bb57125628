"""Sentence/clause splitting and cheap keys for the claims, hierarchy and failure checks.

Everything here is linear in the text length: one regex pass to split, one pass to build keys.
The checks index clauses once and compare only candidates that share a key (never all clauses
against all clauses), so a 200k-token context costs about as much as reading it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from ctxaudit.engine.normalize import normalize
from ctxaudit.engine.types import Context, Message

# Sentence ends: CJK and ASCII terminators, newlines, and "." followed by whitespace or the end
# (so "notes.txt" and "$10.50" stay whole).
_SENTENCE_END = re.compile(r"[。！？；!?;\n]+|\.(?=\s|$)")
# Clause breaks inside a sentence: full-width commas/colons, ASCII ones followed by a space
# (so "https://x", "10:30" and "1,000" stay whole).
_CLAUSE_BREAK = re.compile(r"[，：]\s*|[,:]\s+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[a-z0-9][a-z0-9_\-@.$/]*[a-z0-9]|[a-z0-9]")

STOPWORDS = frozenset(
    """a an the and or but if then of to in on at for from by with as is are was were be been being it its
    this that these those i you he she we they me my your our their his her them us do does did done
    have has had will would can could should may might must shall not no so than too very just also
    about into over under up down out off again further once here there when where why how all any
    both each few more most other some such only own same please ok okay""".split()
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
_TAIL = frozenset(" \t\r\n\u3000-–—<>")


def _trimmed(content: str, start: int, end: int) -> tuple[int, int]:
    """Drop surrounding whitespace and markup dashes/brackets ("<!-- x -->" quotes as "x")."""
    while start < end and content[start] in _LEAD:
        start += 1
    while end > start and content[end - 1] in _TAIL:
        end -= 1
    return start, end


def sentences(content: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each non-empty sentence in `content`."""
    pos = 0
    for m in _SENTENCE_END.finditer(content):
        s, e = _trimmed(content, pos, m.end())
        if e > s:
            yield s, e
        pos = m.end()
    s, e = _trimmed(content, pos, len(content))
    if e > s:
        yield s, e


_SUMMARY_MARKER = re.compile(r"(?:【[^】\n]{0,12}(?:摘要|总结|历史|记录)[^】\n]{0,6}】|\[[^\]\n]{0,24}(?:summary|history|recap|摘要)[^\]\n]{0,12}\])\s*", re.I)


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
    t = unicodedata.normalize("NFKC", text).casefold()
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


def message_fingerprints(ctx: Context) -> dict[tuple[str, str], int]:
    """(role, normalised content) → first index, to tell verbatim-kept messages from new text."""
    out: dict[tuple[str, str], int] = {}
    for i, m in enumerate(ctx.messages):
        out.setdefault((m.role, normalize(m.content)), i)
    return out


def new_messages(before: Context, after: Context) -> list[tuple[int, Message]]:
    """After-context messages that are not a verbatim copy (same role, same normalised text) of a
    before-context message: the text the compressor wrote or moved."""
    seen = message_fingerprints(before)
    return [(i, m) for i, m in enumerate(after.messages) if (m.role, normalize(m.content)) not in seen]


_SUMMARY_HINT = re.compile(
    r"摘要|总结|概要|历史|此前|之前的对话|summary|summari[sz]|previous conversation|earlier conversation|continued from|so far|recap",
    re.I,
)
SUMMARY_STRATEGIES = frozenset({"summary", "structured", "role_separated", "role-separated"})
SUMMARY_KINDS = frozenset({"summary", "compact_summary", "history_summary"})
# Above this many new messages, skip the "is it a cut-down copy?" substring test (keeps it linear).
_MAX_SUBSTRING_TESTS = 50


def written_messages(before: Context, after: Context) -> list[tuple[int, Message]]:
    """New after-context messages (see `new_messages`) that are not a cut-down copy of a before
    message of the same role: the text a compressor actually wrote."""
    fresh = new_messages(before, after)
    if len(fresh) > _MAX_SUBSTRING_TESTS:
        return fresh
    by_role: dict[str, str] = {}
    out = []
    for i, m in fresh:
        if m.role not in by_role:
            by_role[m.role] = "\x00".join(normalize(b.content) for b in before.messages if b.role == m.role)
        norm = normalize(m.content)
        if norm and m.kind != "encrypted_compaction" and norm in by_role[m.role]:
            continue
        out.append((i, m))
    return out


def summary_messages(before: Context, after: Context, strategy: str | None) -> list[tuple[int, Message]]:
    """Written messages outside the system role that carry a summary: marked by `kind`, by the
    event's strategy (summary/structured/role_separated), or by a summary word near their start."""
    out = []
    for i, m in written_messages(before, after):
        if m.role == "system" or m.kind == "encrypted_compaction":
            continue
        if m.kind in SUMMARY_KINDS or (strategy or "").lower() in SUMMARY_STRATEGIES or _SUMMARY_HINT.search(m.content[:300]):
            out.append((i, m))
    return out
