"""Analysis: one compression event analysed once, handed to every check.

Pipeline: formats (raw JSON → Context) → language (sentences, clauses, folded text) → **analysis**
(what every check shares about this pair, computed on first use) → checks → report.

A check never re-derives what another already computed: the before/after message fingerprints,
the messages the compressor wrote, the summaries among them, each message's clauses. Every part
is a cached attribute, so a check that does not need one costs nothing for it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any, TypeVar, cast

from ctxaudit.engine.language.clauses import Clause, PairIndex, clauses_of, lowered
from ctxaudit.engine.language.constraints import fold
from ctxaudit.engine.rules import extract_rules, open_rules
from ctxaudit.engine.types import Context, ContextPair, Rule

T = TypeVar("T")


class Analysis:
    """The shared view of one event.

    pair: the event; rules: the rules in force (pair.rules without the phase instructions the
    before-context shows closed, else extracted from pair.before by rules.extract_rules). Linear in
    the size of the pair; nothing is computed until asked for, and nothing twice:

    - `clauses(side, i)`: the clauses of a message (language/clauses.py);
    - `folded(side, i)` / `lowered(side, i)`: a message folded for lexicon matching
      (constraints.fold: width and case, offsets kept) / lowered for literal triggers;
    - `joined_lowered(side, roles=None)`: the lowered text of a side's messages (of `roles`, or of
      every role but those in `exclude`), newline-joined, for substring look-ups;
    - `index`: the before/after message fingerprints (clauses.PairIndex);
    - `memo(key, build)`: any other structure a check derives (retention's rule matcher and sentence
      indexes live there), built once and shared with every later check.

    semantic: whether checks may use sentence embeddings (embeddings.py) — the worker and the
    offline tools do; the gate and other synchronous paths do not unless configured.
    """

    def __init__(
        self, pair: ContextPair, rules: tuple[Rule, ...] | None = None, semantic: bool = False
    ) -> None:
        self.pair = pair
        self.semantic = semantic
        given = rules if rules is not None else pair.rules
        # a phase instruction carried over in the session's rule set ("Don't code yet") that the
        # before-context shows closed is neither lost nor enforced (rules.open_rules)
        self.rules: tuple[Rule, ...] = (
            open_rules(given, pair.before) if given else tuple(extract_rules(pair.before))
        )
        self._clauses: dict[tuple[str, int], list[Clause]] = {}
        self._folded: dict[tuple[str, int], str] = {}
        self._lowered: dict[tuple[str, int], str] = {}
        self._joined: dict[tuple[str, tuple[str, ...] | None, tuple[str, ...]], str] = {}
        self._memo: dict[str, Any] = {}

    @property
    def before(self) -> Context:
        return self.pair.before

    @property
    def after(self) -> Context:
        return self.pair.after

    def side(self, side: str) -> Context:
        """The before or after context ("before" | "after"; anything else raises ValueError)."""
        if side not in ("before", "after"):
            raise ValueError(f"side must be 'before' or 'after', not {side!r}")
        return self.pair.before if side == "before" else self.pair.after

    @cached_property
    def index(self) -> PairIndex:
        """Fingerprints of the before messages; the after messages that are new, written, summaries."""
        return PairIndex(self.pair.before, self.pair.after)

    def clauses(self, side: str, message_index: int) -> list[Clause]:
        """The clauses of one message (side "before" or "after"), computed once per message."""
        key = (side, message_index)
        found = self._clauses.get(key)
        if found is None:
            m = self.side(side).messages[message_index]
            found = self._clauses[key] = list(clauses_of(m.content, message_index, m.role))
        return found

    def folded(self, side: str, message_index: int) -> str:
        """constraints.fold of one message (same length as its content), computed once."""
        key = (side, message_index)
        found = self._folded.get(key)
        if found is None:
            found = self._folded[key] = fold(self.side(side).messages[message_index].content)
        return found

    def lowered(self, side: str, message_index: int) -> str:
        """clauses.lowered of one message (same length as its content), computed once."""
        key = (side, message_index)
        found = self._lowered.get(key)
        if found is None:
            found = self._lowered[key] = lowered(self.side(side).messages[message_index].content)
        return found

    def joined_lowered(
        self, side: str, roles: tuple[str, ...] | None = None, exclude: tuple[str, ...] = ()
    ) -> str:
        """The lowered contents of a side's messages whose role is in `roles` (all when None) and not
        in `exclude`, joined with newlines; computed once per (side, roles, exclude)."""
        key = (side, roles, exclude)
        found = self._joined.get(key)
        if found is None:
            found = self._joined[key] = "\n".join(
                self.lowered(side, i)
                for i, m in enumerate(self.side(side).messages)
                if (roles is None or m.role in roles) and m.role not in exclude
            )
        return found

    def memo(self, key: str, build: Callable[[], T]) -> T:
        """The structure stored under `key`, built by `build()` on first use (e.g. retention's rule
        matcher and sentence indexes, so a later check reuses them)."""
        if key not in self._memo:
            self._memo[key] = build()
        return cast(T, self._memo[key])


def analyse(pair: ContextPair, rules: tuple[Rule, ...] | None = None, semantic: bool = False) -> Analysis:
    """The Analysis of `pair` (see Analysis). Pure; raises nothing on well-formed pairs."""
    return Analysis(pair, rules, semantic)
