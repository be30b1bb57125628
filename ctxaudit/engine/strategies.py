"""Compression strategy names as agents give them → the strategy family ctxaudit groups by.

Agents name their compaction whatever they like ("auto-compact", "condensation",
"sliding_window", "role-separated"); the name is kept as given and mapped to one of FAMILIES
(the seed's §2.2 taxonomy: truncation, LLM summary, structured extraction, vector retrieval,
key-message retention, role-separated compression; "other" for the rest). Matching is on the
words of the name, so "LLMSummarizingCondenser" and "summary_buffer" both read as "summary".
"""

from __future__ import annotations

import re

FAMILIES = ("truncation", "summary", "structured", "retrieval", "key_messages", "role_separated", "other")

# Checked in this order: the first family with a word in the name wins ("structured summary" is
# structured, "role-separated summary" is role_separated).
_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("role_separated", ("role separated", "role separation", "role aware", "layered", "hierarch")),
    ("structured", ("structur", "json", "schema", "extract", "state snapshot", "snapshot", "fact")),
    (
        "retrieval",
        ("retriev", "rag", "vector", "embedding", "semantic search", "recall", "memory search", "archival"),
    ),
    (
        "key_messages",
        ("key message", "keep important", "pin", "importance", "selective", "salien", "priority"),
    ),
    (
        "truncation",
        (
            "truncat",
            "trim",
            "sliding",
            "window",
            "drop oldest",
            "fifo",
            "tail",
            "head",
            "clip",
            "prune",
            "evict",
            "forget",
            "mask",
            "recent",
        ),
    ),
    (
        "summary",
        (
            "summar",
            "compact",
            "condens",
            "compress",
            "digest",
            "recap",
            "rollup",
            "memory buffer",
            "handoff",
            "hand off",
        ),
    ),
)
_SPLIT = re.compile(r"[\s_\-./:]+|(?<=[a-z])(?=[A-Z])")


def strategy_family(name: str | None) -> str:
    """The family (one of FAMILIES) of a strategy name; "other" for None, empty or unknown names.

    >>> strategy_family("auto-compact"), strategy_family("sliding_window"), strategy_family("RAG")
    ('summary', 'truncation', 'retrieval')
    """
    if not name:
        return "other"
    words = " ".join(w for w in _SPLIT.split(name.strip()) if w).lower()
    if words.replace(" ", "_") in FAMILIES:
        return words.replace(" ", "_")
    padded = f" {words} "
    for family, stems in _WORDS:
        if any(_has(padded, stem) for stem in stems):
            return family
    return "other"


def _has(padded: str, stem: str) -> bool:
    # Short stems ("rag", "pin", "tail") must be whole words: "storage" is not RAG, "shipping" not pin.
    if len(stem) <= 4:
        return f" {stem} " in padded
    return f" {stem}" in padded
