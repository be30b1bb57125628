"""check_depth's fast pass (no paths built) accepts exactly what the path-building walk accepts:
100 levels pass, 101 are refused naming where (issue 13 made the common, shallow case cheap)."""

from __future__ import annotations

from typing import Any

import pytest

from ctxaudit.ingest.nesting import MAX_DEPTH, TooDeep, check_depth


def dicts(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"role": "user", "a": value}
    return value


def lists(levels: int) -> Any:
    value: Any = 7
    for _ in range(levels):
        value = ["x", value]
    return value


def test_the_limit_itself_passes() -> None:
    check_depth(dicts(MAX_DEPTH), "metadata")
    check_depth(lists(MAX_DEPTH), "before")
    check_depth("text", "after")
    check_depth([], "after")


def test_one_level_more_is_refused_with_its_path() -> None:
    with pytest.raises(TooDeep) as exc:
        check_depth(dicts(MAX_DEPTH + 1), "metadata")
    assert exc.value.field == "metadata" + ".a" * MAX_DEPTH
    with pytest.raises(TooDeep) as exc:
        check_depth(lists(MAX_DEPTH + 1), "before")
    assert exc.value.field == "before" + "[1]" * MAX_DEPTH


def test_a_deep_branch_among_shallow_ones_is_found() -> None:
    value = [{"role": "user", "content": "hi"}] * 50 + [{"content": [dicts(MAX_DEPTH - 1)]}]
    with pytest.raises(TooDeep) as exc:
        check_depth(value, "before")
    assert exc.value.field == "before[50].content[0]" + ".a" * (MAX_DEPTH - 3)
    check_depth(value, "before", limit=MAX_DEPTH + 2)  # its deepest container is level 102
