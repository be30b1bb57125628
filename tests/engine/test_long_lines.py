"""Hostile shapes of one long line must not make a check quadratic (a key holder could stall the
workers). Found by the security pass: one 50,000-character line took 17.6 s in the hierarchy
check's identifier regex; linear code does 100,000 characters of each shape in well under a second."""

from __future__ import annotations

import time

import pytest

from ctxaudit.engine import ContextPair, run_checks
from ctxaudit.engine.formats import parse_context
from ctxaudit.engine.tokens import CharCounter

N = 100_000
SHAPES = {
    "letters": "x" * N,
    "id-like": "HX9 " + "A" * N,
    "digits": "1" * N,
    "at-signs": "a@" * (N // 2),
    "dots": "." * N,
    "cjk": "删" * N,
    "url": "http://" + "a" * N,
    "json": '{"a":' * (N // 5),
    "newlines": "a\n" * (N // 2),
    "rules": "禁止删除订单，" * (N // 7),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_it_checks_a_hostile_long_line_in_linear_time(shape: str) -> None:
    text = SHAPES[shape]
    before = parse_context(
        [
            {"role": "system", "content": "你是助手。\n禁止删除订单。"},
            {"role": "user", "content": text},
            {"role": "tool", "content": text},
        ]
    )
    after = parse_context(
        [{"role": "system", "content": "【历史摘要】" + text}, {"role": "user", "content": text}]
    )
    t0 = time.perf_counter()
    run_checks(ContextPair(before=before, after=after), counter=CharCounter())
    # Generous bound for loaded CI machines; the quadratic version took minutes here.
    assert time.perf_counter() - t0 < 15
