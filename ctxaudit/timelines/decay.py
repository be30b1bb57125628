"""Decay detection on one rule's strength series: pure Python, no Django (unit-tested on lists).

Seed §3.5 (multi-round decay): each compression weakens a rule a little more and no single step
looks alarming. A *decay run* is `n` compressions in a row that each lowered the rule's
strength. The baseline before the rule's first compression is 1.0: a rule in force is stated
with full force by its rule set, and the engine measures each step against that text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Float noise (and the engine's 3-decimal rounding) must not count as a fall.
FALL_EPSILON = 0.005
BASELINE = 1.0


@dataclass(frozen=True, slots=True)
class DecayRun:
    """`n` consecutive falls ending at series index `end`.

    indices: the n series indices (oldest first) whose strengths fell; values: n + 1 strengths,
    the one before the run (the 1.0 baseline for the first compression) then each fallen one.
    """

    end: int
    indices: tuple[int, ...]
    values: tuple[float, ...]


def decay_runs(strengths: Sequence[float | None], n: int) -> list[DecayRun]:
    """Where a decay condition is met in `strengths` (one rule, compressions in session order).

    strengths: values in [0, 1]; None marks a compression not checked yet (pending or failed
    check), which is skipped: it neither breaks nor extends a run. n: falls in a row needed
    (Project.decay_compressions); n < 1 disables detection. One run is reported once, at the
    compression that makes it n long; after a step that does not fall, a new run can start.
    """
    if n < 1:
        return []
    runs: list[DecayRun] = []
    prev = BASELINE
    chain: list[int] = []  # indices of the current run of falls
    chain_start_value = BASELINE
    for i, s in enumerate(strengths):
        if s is None:
            continue
        if s < prev - FALL_EPSILON:
            if not chain:
                chain_start_value = prev
            chain.append(i)
            if len(chain) == n:
                values = (chain_start_value, *(float(strengths[j]) for j in chain))  # type: ignore[arg-type]
                runs.append(DecayRun(end=i, indices=tuple(chain), values=values))
        else:
            chain = []
        prev = s
    return runs
