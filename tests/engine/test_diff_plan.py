"""plan_contexts: the diff's rows planned first and built when asked for (issue 13: `?full=1` of
an 832 KB event built every row's hunks to show one page of them). The rows it builds are
diff_contexts' rows, whichever of them are asked for and in whatever order."""

from __future__ import annotations

import pytest

from ctxaudit.engine.diff import Highlight, Limits, diff_contexts, plan_contexts
from ctxaudit.engine.diff import rows as rows_module
from ctxaudit.engine.types import Message


def _pair() -> tuple[list[Message], list[Message], list[Highlight]]:
    """A system message rewritten, 40 turns summarised away, a long equal run, a message moved
    to the end, one edited in place, 12 new turns; highlights on both sides, one on a message
    that does not exist."""
    system = Message("system", "You are a support agent.\nNever delete customer data.\nAnswer in English.")
    turns = [
        Message("user" if i % 2 else "assistant", f"turn {i}: order {1000 + i} shipped") for i in range(40)
    ]
    kept = [Message("user" if i % 2 else "assistant", f"kept {i}\nline two of {i}") for i in range(60)]
    moved = Message("tool", "lookup result: status=shipped\ncarrier=DHL\nweight=2kg", name="lookup")
    before = [system, *turns, *kept[:30], moved, *kept[30:]]
    edited = Message(kept[45].role, kept[45].content + " (edited)")
    after = [
        Message("system", "You are a support agent.\nAnswer in English."),
        Message("user", "Summary: 40 turns about orders 1000-1039, all shipped."),
        *kept[:45],
        edited,
        *kept[46:],
        *[Message("user", f"new {i}") for i in range(12)],
        moved,
    ]
    hls = [
        Highlight("before", 0, 25, 52, "rule-0-before", "hl-rule"),
        Highlight("after", 0, 0, 10, "rule-1-after", "hl-rule"),
        Highlight("before", 5, 0, 4, "finding-0-0", "hl-finding"),
        Highlight("after", 60, 0, 4, "finding-1-0", "hl-finding"),
        Highlight("before", 999, 0, 4, "finding-2-0", "hl-finding"),  # no such message
    ]
    return before, after, hls


@pytest.mark.parametrize("collapse", [True, False])
def test_the_planned_rows_are_the_diffs_rows_whichever_are_built_first(collapse: bool) -> None:
    before, after, hls = _pair()
    limits = Limits(collapse=collapse)
    eager = diff_contexts(before, after, highlights=hls, limits=limits)
    n = len(eager.rows)
    assert n == len(plan_contexts(before, after, highlights=hls, limits=limits))
    for start, end in [(0, 5), (n - 7, n), (n // 2, n // 2 + 3), (0, n)]:
        plan = plan_contexts(before, after, highlights=hls, limits=limits)
        assert plan.rows(start, end) == eager.rows[start:end]
    plan = plan_contexts(before, after, highlights=hls, limits=limits)
    plan.rows(n - 3, n)  # built out of order, then all
    assert plan.diff() == eager
    assert plan.counts == eager.counts and plan.zones == eager.zones


def test_uncollapsed_every_highlight_on_a_message_is_placeable_before_any_row_is_built() -> None:
    before, after, hls = _pair()
    plan = plan_contexts(before, after, highlights=hls, limits=Limits(collapse=False))
    assert plan.placeable == {"rule-0-before", "rule-1-after", "finding-0-0", "finding-1-0"}
    assert (
        plan.placeable == diff_contexts(before, after, highlights=hls, limits=Limits(collapse=False)).anchors
    )


def test_a_row_plan_names_the_messages_it_shows_and_their_characters() -> None:
    before, after, hls = _pair()
    plan = plan_contexts(before, after, highlights=hls, limits=Limits(collapse=False))
    shown = [m for p in plan.plans for m in p.messages]
    # every message of both sides is in exactly one row
    assert sorted(shown) == sorted(
        [("before", i) for i in range(len(before))] + [("after", j) for j in range(len(after))]
    )
    total = sum(len(m.content) for m in (*before, *after))
    assert sum(p.chars for p in plan.plans) == total


def test_only_the_asked_rows_are_built(monkeypatch) -> None:
    before = [Message("user", f"message {i}\nsecond line {i}") for i in range(600)]
    after = [Message("user", m.content + (" (edited)" if i % 3 == 0 else "")) for i, m in enumerate(before)]
    built: list[int] = []
    for name in ("_equal_hunks", "_pair_hunks", "_onesided_hunks"):
        real = getattr(rows_module, name)

        def counting(*args, _real=real, **kwargs):  # type: ignore[no-untyped-def]
            built.append(1)
            return _real(*args, **kwargs)

        monkeypatch.setattr(rows_module, name, counting)
    plan = plan_contexts(before, after, limits=Limits(collapse=False))
    assert len(plan) == 600 and built == []
    page = plan.rows(200, 210)
    assert len(page) == 10 and len(built) == 10
    assert [r.before.index for r in page] == list(range(200, 210))
    plan.rows(200, 210)  # asked again: not rebuilt
    assert len(built) == 10
