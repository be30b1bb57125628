"""decay_runs: pure, on plain lists of strengths."""

from __future__ import annotations

import pytest

from ctxaudit.timelines.decay import decay_runs


@pytest.mark.parametrize(
    ("strengths", "n", "ends"),
    [
        ([0.8, 0.6], 2, [1]),  # 1.0 → 0.8 → 0.6: two falls, no step lost it
        ([0.8, 0.6, 0.4, 0.2], 2, [1]),  # one run is reported once
        ([1.0, 1.0, 1.0], 2, []),  # stable
        ([0.6, 0.6, 0.6], 2, []),  # weakened once, then stable
        ([0.8, 0.8, 0.6, 0.4], 2, [3]),  # a flat step resets the run
        ([0.8, 0.6, 0.7, 0.5, 0.3], 2, [1, 4]),  # a rise ends a run; a new one starts
        ([0.9, 0.8], 3, []),
        ([0.9, 0.8, 0.7], 3, [2]),
        ([0.8], 1, [0]),
        ([0.8, 0.6], 0, []),  # n < 1 disables detection
        ([0.8, None, 0.6], 2, [2]),  # an unchecked compression neither breaks nor extends a run
        ([0.5, 0.0], 2, [1]),  # falling to missing completes a run too
        ([0.6, 0.598], 2, []),  # float noise is not a fall
    ],
)
def test_it_finds_decay_runs(strengths, n, ends) -> None:
    assert [r.end for r in decay_runs(strengths, n)] == ends


def test_it_reports_the_values_of_the_run() -> None:
    (run,) = decay_runs([1.0, 0.7, 0.4], 2)
    assert run.indices == (1, 2)
    assert run.values == (1.0, 0.7, 0.4)
