"""Checklist step 3: search the rules' key terms in the after-context. Pure Python, returns
structured segments (text, is_hit) that templates render with autoescape; never HTML."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Splits a rule into phrases: punctuation (either width), whitespace, quotes and brackets.
_SPLIT = re.compile(r"[\s,.;:!?()\[\]{}\"'“”‘’「」『』【】《》〈〉、，。；：！？（）…—-]+")
_EN_STOP = {
    "the", "and", "any", "all", "for", "with", "without", "from", "that", "this", "into", "only", "must", "never",
    "always", "should", "shall", "not", "don't", "do", "does", "are", "is", "be", "a", "an", "of", "to", "or", "on",
    "in", "by", "as", "at", "it", "its", "you", "your", "their", "every", "above", "below",
}
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
MAX_TERMS = 8


def key_terms(rule_text: str) -> list[str]:
    """The phrases worth searching for one rule: its CJK phrases and its English content words.

    "只能查询订单，禁止新增、修改、删除订单。" → ["只能查询订单", "禁止新增", "修改", "删除订单"];
    "Never issue a refund above $100" → ["issue", "refund", "$100"]. At most MAX_TERMS, in order.
    """
    out: list[str] = []
    for piece in _SPLIT.split(rule_text):
        if not piece:
            continue
        if _CJK.search(piece):
            if len(piece) >= 2:
                out.append(piece)
        elif len(piece) >= 3 and piece.casefold() not in _EN_STOP:
            out.append(piece)
    uniq: dict[str, str] = {}
    for t in out:
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


def search_context(messages: list[dict[str, Any]], terms: list[str]) -> dict[str, Any]:
    """Hits of `terms` in each message: {"terms", "found": [{"term", "count"}], "missing": [term],
    "messages": [{"index", "role", "segments", "hits"}]} — only messages with a hit are listed,
    and their long stretches without a hit are shortened (`excerpt`)."""
    found = {t: 0 for t in terms}
    listed = []
    for i, m in enumerate(messages):
        content = m.get("content") or ""
        segments = highlight(content, terms)
        hits = [s for s in segments if s.hit]
        if not hits:
            continue
        for s in hits:
            for t in terms:
                if s.text.casefold() == t.casefold():
                    found[t] += 1
        listed.append({"index": i, "role": m.get("role"), "segments": excerpt(segments), "hits": len(hits)})
    return {
        "terms": terms,
        "found": [{"term": t, "count": n} for t, n in found.items()],
        "missing": [t for t, n in found.items() if n == 0],
        "messages": listed,
    }
