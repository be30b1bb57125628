"""Analysis: one compression event analysed once, handed to every check.

Pipeline: formats (raw JSON → Context) → language (sentences, clauses, folded text) → **analysis**
(what every check shares about this pair, computed on first use) → checks → report.

A check never re-derives what another already computed: the before/after message fingerprints,
the messages the compressor wrote, the summaries among them, each message's clauses. Every part
is a cached attribute, so a check that does not need one costs nothing for it.
"""

from __future__ import annotations

from functools import cached_property

from ctxaudit.engine.language.clauses import Clause, PairIndex, clauses_of
from ctxaudit.engine.rules import extract_rules, open_rules
from ctxaudit.engine.types import Context, ContextPair, Rule


class Analysis:
    """The shared view of one event.

    pair: the event; rules: the rules in force (pair.rules without the phase instructions the
    before-context shows closed, else extracted from pair.before by rules.extract_rules). Linear in the size of the pair; nothing is computed until asked for.
    """

    def __init__(self, pair: ContextPair, rules: tuple[Rule, ...] | None = None) -> None:
        self.pair = pair
        given = rules if rules is not None else pair.rules
        # a phase instruction carried over in the session's rule set ("Don't code yet") that the
        # before-context shows closed is neither lost nor enforced (rules.open_rules)
        self.rules: tuple[Rule, ...] = (
            open_rules(given, pair.before) if given else tuple(extract_rules(pair.before))
        )
        self._clauses: dict[tuple[str, int], list[Clause]] = {}

    @property
    def before(self) -> Context:
        return self.pair.before

    @property
    def after(self) -> Context:
        return self.pair.after

    @cached_property
    def index(self) -> PairIndex:
        """Fingerprints of the before messages; the after messages that are new, written, summaries."""
        return PairIndex(self.pair.before, self.pair.after)

    def clauses(self, side: str, message_index: int) -> list[Clause]:
        """The clauses of one message (side "before" or "after"), computed once per message."""
        key = (side, message_index)
        found = self._clauses.get(key)
        if found is None:
            ctx = self.pair.before if side == "before" else self.pair.after
            m = ctx.messages[message_index]
            found = self._clauses[key] = list(clauses_of(m.content, message_index, m.role))
        return found


def analyse(pair: ContextPair, rules: tuple[Rule, ...] | None = None) -> Analysis:
    """The Analysis of `pair` (see Analysis). Pure; raises nothing on well-formed pairs."""
    return Analysis(pair, rules)
