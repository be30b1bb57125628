"""gc_paused: the cyclic garbage collector held off while one event is checked."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_resume = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Within this block the cyclic collector does not run (gc.disable); on leaving it runs again
    if it ran before. Nested and concurrent blocks (threads) share one pause: the first to enter
    disables it, the last to leave restores it.

    Why: a check allocates a few hundred thousand short-lived tuples, lists and dicts (clauses,
    hits, spans) that reference counting frees at once, yet the collector walks the young
    generation every 700 allocations and, now and then, every object of the process. Measured on
    the 200k-token Chinese pair of benchmarks/engine_bench.py: ~45 collections, 5-8 ms of a
    ~170 ms check; on the mixed pair a full collection took 34 ms. Nothing a check builds needs
    the collector before the event is done, and what it leaves is collected after.
    """
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()


def freeze_startup_objects() -> None:
    """Collect once, then move every object alive now into the collector's permanent generation
    (gc.freeze): what a server or worker process loaded at start-up (Django, the tokenizer, the
    lexicon's automata) lives as long as the process, and a full collection no longer walks it.
    Call it at the end of a process's warm-up. Measured in the embedded default's request path:
    a full collection took ~78 ms of a ~440 ms POST before, a few ms after.
    """
    gc.collect()
    gc.freeze()
