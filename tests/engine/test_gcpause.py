"""The collector pause around a check: restored after, whatever happens inside."""

from __future__ import annotations

import gc
import threading

import pytest

from ctxaudit.engine.gcpause import gc_paused
from ctxaudit.engine.runner import run_checks
from ctxaudit.engine.types import Context, ContextPair, Message, Rule


def _pair() -> ContextPair:
    rule = Rule("r1", "Never delete customer records.")
    before = Context((Message("system", rule.text), Message("user", "Delete record 7.")))
    after = Context((Message("system", "Be helpful."),))
    return ContextPair(before, after, (rule,))


def test_the_collector_is_off_during_a_check_and_on_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    from ctxaudit.engine import runner

    real = runner.token_stats
    monkeypatch.setattr(runner, "token_stats", lambda *a: (seen.append(gc.isenabled()), real(*a))[1])
    report = run_checks(_pair())
    assert seen == [False]
    assert gc.isenabled()
    assert report.rules[0].state.value == "missing"


def test_a_failing_check_still_restores_the_collector() -> None:
    with pytest.raises(KeyError):
        run_checks(_pair(), enabled=["no_such_check"])
    assert gc.isenabled()


def test_nested_and_concurrent_pauses_restore_the_collector_once_all_have_left() -> None:
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            entered.set()
            release.wait(5)

    t = threading.Thread(target=other)
    with gc_paused():
        t.start()
        entered.wait(5)
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread is still checking
    release.set()
    t.join(5)
    assert gc.isenabled()


def test_a_collector_switched_off_by_the_host_stays_off() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
