"""Checklist step 3: search the rules' key terms in the after-context. Pure Python, returns
structured segments (text, is_hit) that templates render with autoescape; never HTML."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ctxaudit.engine.language.constraints import fold
from ctxaudit.engine.language.constraints import parse as parse_constraints
from ctxaudit.engine.language.lexicon import CONDITION_MARKERS, FORCE_MARKERS, SCOPE_WORDS

_EN_STOP = {
    "the",
    "and",
    "any",
    "all",
    "for",
    "with",
    "without",
    "from",
    "that",
    "this",
    "into",
    "only",
    "must",
    "never",
    "always",
    "should",
    "shall",
    "not",
    "don't",
    "do",
    "does",
    "are",
    "is",
    "be",
    "a",
    "an",
    "of",
    "to",
    "or",
    "on",
    "in",
    "by",
    "as",
    "at",
    "it",
    "its",
    "you",
    "your",
    "their",
    "every",
    "above",
    "below",
}
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_PIECE = re.compile(r"[^\s,.;:!?()\[\]{}\"'“”‘’「」『』【】《》〈〉、，。；：！？（）…—-]+")
# Function characters that separate Chinese content words (never searched alone).
_ZH_WEAK = "的了是在和与及或等也都就还把被给对向从为而且并之其这那个"
MAX_TERMS = 8


@lru_cache(maxsize=1)
def _zh_markers() -> re.Pattern[str]:
    """Chinese directive and scope words (禁止, 必须, 只能, 任何 ...) from the engine's lexicon: they say
    how strongly, not what, so they are no search terms. Single characters (勿, 别) are left alone."""
    words = {w for ws in FORCE_MARKERS.values() for w in ws} | set(SCOPE_WORDS) | set(CONDITION_MARKERS)
    zh = sorted((w for w in words if _CJK.search(w) and len(w) >= 2), key=len, reverse=True)
    return re.compile("|".join(re.escape(w) for w in zh) + f"|[{_ZH_WEAK}]")


def _chunks(run: str) -> list[str]:
    """A Chinese stretch the lexicon does not know, cut into 2–4 character pieces ("内部链接",
    "简体中文"; seven characters → 4 + 3). Single characters are dropped."""
    if len(run) < 2:
        return []
    n = -(-len(run) // 4)
    size, extra = divmod(len(run), n)
    out, pos = [], 0
    for i in range(n):
        step = size + (1 if i < extra else 0)
        out.append(run[pos : pos + step])
        pos += step
    return [c for c in out if len(c) >= 2]


def key_terms(rule_text: str) -> list[str]:
    """The words worth searching for one rule in the after-context, in the rule's order.

    First what the engine's constraint model reads in the rule (ctxaudit.engine.language.constraints.parse):
    its action and object concepts as the rule spells them, its numbers and the words it marks as
    unknown objects; then, for Chinese the lexicon does not cover, 2–4 character pieces of the
    content words (directive words such as 禁止/必须/只能 and function characters left out), and
    for English the remaining content words of 3+ letters.

    "只能查询订单，禁止新增、修改、删除订单。" → ["查询", "订单", "新增", "修改", "删除"];
    "不得泄露工单系统的内部链接。" → ["泄露", "工单", "系统", "内部链接"];
    "Never issue a refund above $100" → ["issue", "refund", "$100"]. At most MAX_TERMS.
    """
    found: list[tuple[int, str]] = []
    covered = [False] * len(rule_text)

    def take(start: int, end: int) -> None:
        if 0 <= start < end <= len(rule_text):
            found.append((start, rule_text[start:end]))
            for i in range(start, end):
                covered[i] = True

    folded = fold(rule_text)
    for clause in parse_constraints(rule_text):
        for start, end in clause.concepts.values():
            take(start, end)
        for word in (*clause.numbers, *clause.unknown):
            at = folded.find(fold(word))
            if at >= 0:
                take(at, at + len(word))
    for m in _PIECE.finditer(rule_text):
        piece, base = m.group(), m.start()
        if _CJK.search(piece):
            for run in _CJK_RUN.finditer(piece):
                start = base + run.start()
                rest = "".join(" " if covered[start + i] else ch for i, ch in enumerate(run.group()))
                rest = _zh_markers().sub(" ", rest)
                for wm in re.finditer(r"\S+", rest):
                    for chunk in _chunks(wm.group()):
                        found.append((start + wm.start() + wm.group().find(chunk), chunk))
        elif (
            len(piece) >= 3
            and piece.casefold() not in _EN_STOP
            and not any(covered[base : base + len(piece)])
        ):
            found.append((base, piece))
    uniq: dict[str, str] = {}
    for _, t in sorted(found, key=lambda x: x[0]):
        uniq.setdefault(t.casefold(), t)
    return list(uniq.values())[:MAX_TERMS]


@dataclass(frozen=True)
class Segment:
    text: str
    hit: bool


def highlight(text: str, terms: list[str]) -> list[Segment]:
    """Cut `text` into segments; segments matching any term (case-insensitive) have hit=True."""
    terms = [t for t in terms if t]
    if not terms:
        return [Segment(text, False)] if text else []
    pattern = re.compile("|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)), re.IGNORECASE)
    segments: list[Segment] = []
    pos = 0
    for m in pattern.finditer(text):
        if m.start() > pos:
            segments.append(Segment(text[pos : m.start()], False))
        segments.append(Segment(m.group(0), True))
        pos = m.end()
    if pos < len(text):
        segments.append(Segment(text[pos:], False))
    return segments


def parse_query(q: str) -> list[str]:
    """A search box's text → terms: whitespace-separated, or one "quoted phrase"."""
    return [a or b for a, b in re.findall(r'"([^"]+)"|(\S+)', q)][:20]


def excerpt(segments: list[Segment], *, context: int = 160) -> list[Segment]:
    """Shorten long stretches without a hit to their first and last `context` characters."""
    out = []
    for i, s in enumerate(segments):
        if s.hit or len(s.text) <= 2 * context + 20:
            out.append(s)
            continue
        head = s.text[:context] if i > 0 else ""
        tail = s.text[-context:] if i < len(segments) - 1 else ""
        out.append(Segment(f"{head} … {tail}".strip(" "), False))
    return out


MAX_LISTED_MESSAGES = 20  # messages with a hit shown per rule; the rest are counted


def search_context(messages: list[dict[str, Any]], terms: list[str]) -> dict[str, Any]:
    """Hits of `terms` in each message: {"terms", "found": [{"term", "count"}], "missing": [term],
    "messages": [{"index", "role", "segments", "hits"}], "more"} — only messages with a hit are
    listed, the first MAX_LISTED_MESSAGES of them ("more": how many others have one; found
    counts every message), and their long stretches without a hit are shortened (`excerpt`).
    Issue 13: a rule's common words hit thousands of messages of a large event (1.7 MB of HTML)."""
    found = dict.fromkeys(terms, 0)
    listed: list[dict[str, Any]] = []
    more = 0
    searched = [t for t in terms if t]
    # highlight()'s pattern, compiled once: only listed messages are cut into segments.
    pattern = re.compile(
        "|".join(re.escape(t) for t in sorted(searched, key=len, reverse=True)), re.IGNORECASE
    )
    folded = [(t, t.casefold()) for t in terms]
    for i, m in enumerate(messages):
        content = m.get("content") or ""
        hits = [h.group(0).casefold() for h in pattern.finditer(content)] if searched else []
        if not hits:
            continue
        for h in hits:
            for t, f in folded:
                if h == f:
                    found[t] += 1
        if len(listed) < MAX_LISTED_MESSAGES:
            segments = highlight(content, terms)
            listed.append(
                {"index": i, "role": m.get("role"), "segments": excerpt(segments), "hits": len(hits)}
            )
        else:
            more += 1
    return {
        "terms": terms,
        "found": [{"term": t, "count": n} for t, n in found.items()],
        "missing": [t for t, n in found.items() if n == 0],
        "messages": listed,
        "more": more,
    }
