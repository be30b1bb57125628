"""Speed and memory of the whole check (issue 3 "Speed"), against tiktoken's own time.

    .venv/bin/python benchmarks/engine_bench.py [--tokens 200000] [--rules 50] [--repeat 3] [--clock wall|cpu]
                                                     [--variant mixed|json|nowhitespace|cjk|all]

For each variant a deterministic generator (random.Random(7)) builds ONE compression event whose
before- and after-contexts are about --tokens cl100k tokens each, with --rules rules (Chinese and
English; a third kept verbatim after compression, a third weakened, a third dropped):
- mixed:         English and Chinese chat turns, tool output, a summary;
- json:          repetitive JSON lines (logs pasted by the user and returned by tools), every line
                 naming rule words ("delete", "orders", "refund"…);
- nowhitespace:  a 1 MB user message with no whitespace and no punctuation (minified blob with
                 rule words jammed in), plus chat up to the token target;
- cjk:           Chinese-heavy chat.

Measured in the same process, tokenizer warm:
- T_tok:    tiktoken (cl100k_base) encoding every message of both contexts, as token_stats does;
- T_check:  run_checks(pair) end to end (rules given, so no extraction; it includes T_tok);
- stages:   rule extraction (used when an event has no rules), retention, claims, hierarchy,
            failures alone (to see which check costs what);
- peak MB:  tracemalloc peak during one run_checks (a separate run: tracemalloc slows Python;
            Python allocations only), and the process's max RSS so far (contexts, tiktoken included).
Goal (issue 3, issue 12 W2): T_check ≤ 3 × T_tok, never above 10 ×; peak ≤ 500 MB. T_tok and
T_check are measured in turn, --repeat times each (a T_tok, then a T_check, then the next pair), so
each ratio compares two figures taken under the same load of a shared machine; the ratio shown is
the median of those --repeat ratios (and their range), the times shown the best of each. Before
each run the per-text memos are cleared (warmup.clear_text_caches), so a run costs what a new event
costs. A rule set is prepared once per process (retention.prepared_rule_set:
a project's rules are the same for every event), so T_check is what the next event of a known rule
set costs; "new rule set" is the first event of one (the preparation cleared before each run).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxaudit.engine import Context, ContextPair, Message, Rule, run_checks  # noqa: E402
from ctxaudit.engine.checks.retention import check_rule_retention, prepared_rule_set  # noqa: E402
from ctxaudit.engine.rules import extract_rules  # noqa: E402
from ctxaudit.engine.tokens import default_counter  # noqa: E402
from ctxaudit.engine.warmup import clear_text_caches  # noqa: E402

ZH_ACTIONS = ["删除", "修改", "新增", "导出", "发送", "输出", "转账", "退款"]
ZH_OBJECTS = [
    "订单",
    "用户手机号",
    "身份证号",
    "银行卡号",
    "业务数据",
    "账户",
    "日志文件",
    "合同",
    "发票",
    "库存记录",
]
EN_ACTIONS = ["delete", "modify", "export", "send", "reveal", "refund", "transfer", "publish"]
EN_OBJECTS = [
    "orders",
    "card numbers",
    "customer records",
    "invoices",
    "passwords",
    "account settings",
    "payroll files",
    "audit logs",
]
WEAK_ZH = ["需谨慎", "要小心", "最好先确认一下", "注意一下"]
WEAK_EN = [
    "Be careful when you {a} {o}.",
    "Try to avoid having to {a} {o}.",
    "Consider checking before you {a} {o}.",
]

FILLER_EN = (
    "The user asked about the build; I ran the tests and they passed. Next we looked at the parser module, "
    "renamed two helpers and updated the README with the new flags. The CI job took four minutes. "
)
FILLER_ZH = "用户询问了构建情况，我运行了测试并全部通过。接着我们查看了解析模块，重命名了两个辅助函数，并在说明文档中补充了新的参数。持续集成任务耗时四分钟。"


def make_rules(n: int, rnd: random.Random) -> list[Rule]:
    """n distinct rules: Chinese prohibitions/obligations, English never/always, project-specific ones."""
    out: list[Rule] = []
    seen: set[str] = set()
    templates: list[Callable[[], str]] = [
        lambda: f"禁止{rnd.choice(ZH_ACTIONS)}任何{rnd.choice(ZH_OBJECTS)}。",
        lambda: f"{rnd.choice(ZH_ACTIONS)}{rnd.choice(ZH_OBJECTS)}必须经过管理员二次确认。",
        lambda: f"所有{rnd.choice(ZH_OBJECTS)}的变更必须记录日志。",
        lambda: f"Never {rnd.choice(EN_ACTIONS)} {rnd.choice(EN_OBJECTS)} without a manager approval ticket.",
        lambda: f"Always log every change to {rnd.choice(EN_OBJECTS)}.",
        lambda: (
            f"Only {rnd.choice(EN_ACTIONS)} {rnd.choice(EN_OBJECTS)} for project {rnd.randint(100, 999)}-{rnd.choice('abcdef')}."
        ),
        lambda: (
            f"Never edit files under vendor/{rnd.choice(['lib', 'gen', 'third_party'])}{rnd.randint(1, 99)}/ directly."
        ),
    ]
    while len(out) < n:
        text = rnd.choice(templates)()
        if text not in seen:
            seen.add(text)
            out.append(Rule(f"P{len(out) + 1}", text))
    return out


def weaken(rule: Rule, rnd: random.Random) -> str:
    """A weakened rewording of a generated rule (seed 000 §3.4 style)."""
    t = rule.text
    if t.startswith("禁止"):
        return t.removeprefix("禁止").rstrip("。").replace("任何", "") + rnd.choice(WEAK_ZH) + "。"
    if "必须" in t:
        return t.replace("必须", "最好")
    if t.startswith("Never "):
        words = t.removeprefix("Never ").split(" without")[0].split(" ", 1)
        return rnd.choice(WEAK_EN).format(a=words[0], o=words[1] if len(words) > 1 else "it")
    if t.startswith("Always "):
        return t.replace("Always ", "Please try to ").replace("every ", "")
    return t.replace("Only ", "Prefer to ")


def fill(target_tokens: int, kind: str, rnd: random.Random, enc_count: Callable[[str], int]) -> list[Message]:
    """Chat turns (and tool output) until about target_tokens tokens."""
    msgs: list[Message] = []
    total = 0
    turn = 0
    while total < target_tokens:
        turn += 1
        if kind == "json":
            lines = [
                json.dumps(
                    {
                        "op": rnd.choice(EN_ACTIONS),
                        "table": rnd.choice(["orders", "refunds", "accounts"]),
                        "id": rnd.randint(1, 10**6),
                        "user": f"u{rnd.randint(1, 999)}",
                        "note": "must not delete orders without approval",
                    }
                )
                for _ in range(60)
            ]
            text = "\n".join(lines)
            role = "tool" if turn % 2 else "user"
        elif kind == "cjk":
            text = (
                FILLER_ZH * rnd.randint(3, 8)
                + f"订单 {rnd.randint(10000, 99999)} 已处理，用户要求删除订单，助手已拒绝。"
            )
            role = rnd.choice(["user", "assistant", "tool"])
        else:
            text = (FILLER_EN * rnd.randint(2, 6)) if turn % 3 else (FILLER_ZH * rnd.randint(2, 5))
            text += f" Order {rnd.randint(10000, 99999)}: the user wants to delete it; I said I cannot."
            role = ["user", "assistant", "tool"][turn % 3]
        msgs.append(Message(role, text, name="fetch" if role == "tool" else None))
        total += enc_count(text)
    return msgs


def blob(size: int, rnd: random.Random) -> str:
    """size characters, no whitespace or punctuation; rule words jammed in every ~5 kB."""
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    chunks = []
    n = 0
    while n < size:
        piece = "".join(rnd.choices(alphabet, k=5000)) + rnd.choice(
            ["deleteorders", "删除订单", "nevershare", "refund"]
        )
        chunks.append(piece)
        n += len(piece)
    return "".join(chunks)[:size]


def make_event(variant: str, tokens: int, n_rules: int, seed: int = 0) -> tuple[ContextPair, int, int]:
    """The event of `variant` (see the module docstring); `seed` other than 0 gives other texts of
    the same sizes and shapes (the rules stay those of seed 0)."""
    rnd = random.Random(7)
    counter = default_counter()
    rules = make_rules(n_rules, rnd)
    system_before = "You are the operations assistant.\n安全规则（任何时候都不得违反）：\n" + "\n".join(
        f"{i + 1}. {r.text}" for i, r in enumerate(rules)
    )
    kept, weak = rules[: n_rules // 3], rules[n_rules // 3 : 2 * n_rules // 3]
    system_after = (
        "You are the operations assistant.\n"
        + "\n".join(r.text for r in kept)
        + "\n"
        + "\n".join(weaken(r, rnd) for r in weak)
    )
    kind = variant if variant in ("json", "cjk") else "mixed"
    history = fill(tokens, kind, random.Random(seed) if seed else rnd, counter.count)
    before_msgs = [Message("system", system_before), *history]
    if variant == "nowhitespace":
        before_msgs.insert(1, Message("user", blob(1_000_000, rnd)))
    # after: most of the history survives (key-message retention), plus a summary in the user role
    summary = Message(
        "user",
        "【历史摘要】" + FILLER_ZH * 20 + " The user asked to delete several orders; the assistant refused.",
        kind="summary",
    )
    after_hist = fill(tokens, kind, random.Random(11 + seed * 1000), counter.count)
    after_msgs = [Message("system", system_after), summary, *after_hist]
    if variant == "nowhitespace":
        after_msgs.insert(2, Message("user", blob(1_000_000, random.Random(13))))
    pair = ContextPair(Context(tuple(before_msgs)), Context(tuple(after_msgs)), tuple(rules))
    tb = sum(counter.count(m.content) for m in before_msgs)
    ta = sum(counter.count(m.content) for m in after_msgs)
    return pair, tb, ta


# wall: time.perf_counter; cpu: this process's CPU time, which other processes on a shared
# machine barely disturb (both sides of the ratio are single-threaded CPU work).
CLOCK: Callable[[], float] = time.perf_counter


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        clear_text_caches()  # every run is a new event: nothing memoised from the last one
        t0 = CLOCK()
        fn()
        times.append(CLOCK() - t0)
    return min(times)


def stages(pair: ContextPair, repeat: int) -> dict[str, float]:
    """Each registered check alone (checks.CHECKS), on a fresh Analysis each time (nothing cached)."""
    from ctxaudit.engine.analysis import analyse
    from ctxaudit.engine.checks import CHECKS

    out = {
        "extract_rules": best_of(repeat, lambda: extract_rules(pair.before)),  # when the event gives no rules
        "retention": best_of(repeat, lambda: check_rule_retention(pair.before, pair.after, pair.rules)),
    }
    for name, fn in CHECKS.items():
        if name != "rule_retention":
            out[name] = best_of(repeat, lambda fn=fn: fn(analyse(pair)))
    return out


def run(variant: str, tokens: int, n_rules: int, repeat: int) -> dict[str, object]:
    pair, tb, ta = make_event(variant, tokens, n_rules)
    counter = default_counter()
    chars = sum(len(m.content) for m in pair.before.messages) + sum(
        len(m.content) for m in pair.after.messages
    )
    run_checks(pair)  # warm (encoding, lexicon automaton)
    toks, checks = [], []
    for _ in range(repeat):  # interleaved: a shared machine's load changes within seconds
        toks.append(
            best_of(
                1, lambda: [counter.count(m.content) for c in (pair.before, pair.after) for m in c.messages]
            )
        )
        checks.append(best_of(1, lambda: run_checks(pair)))
    ratios = sorted(c / t for c, t in zip(checks, toks, strict=True))
    t_tok, t_check = min(toks), min(checks)

    def new_rule_set() -> None:
        prepared_rule_set.cache_clear()  # the first event of a rule set prepares it (~11 ms for 50)
        run_checks(pair)

    t_cold = best_of(repeat, new_rule_set)
    tracemalloc.start()
    report = run_checks(pair)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    states: dict[str, int] = {}
    for r in report.rules:
        states[r.state.value] = states.get(r.state.value, 0) + 1
    return {
        "variant": variant,
        "tokens_before": tb,
        "tokens_after": ta,
        "chars": chars,
        "rules": len(pair.rules),
        "states": states,
        "t_tok_ms": round(t_tok * 1000, 1),
        "t_check_ms": round(t_check * 1000, 1),
        "ratio": round(statistics.median(ratios), 2),
        "ratio_range": [round(ratios[0], 2), round(ratios[-1], 2)],
        "t_check_new_rules_ms": round(t_cold * 1000, 1),
        "ratio_new_rules": round(t_cold / t_tok, 2),
        "stages_ms": {k: round(v * 1000, 1) for k, v in stages(pair, repeat).items()},
        "peak_mb": round(peak / 2**20, 1),
        "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=200_000)
    ap.add_argument("--rules", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--variant", default="all", choices=["all", "mixed", "json", "nowhitespace", "cjk"])
    ap.add_argument("--json", action="store_true", help="print one JSON object per variant")
    ap.add_argument(
        "--clock",
        default="wall",
        choices=["wall", "cpu"],
        help="cpu: process CPU time, for a machine other jobs share (default: wall time)",
    )
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    variants = ["mixed", "json", "nowhitespace", "cjk"] if args.variant == "all" else [args.variant]
    worst = 0.0
    for v in variants:
        res = run(v, args.tokens, args.rules, args.repeat)
        worst = max(worst, float(res["ratio"]))  # type: ignore[arg-type]
        if args.json:
            print(json.dumps(res, ensure_ascii=False))
            continue
        print(
            f"{v:13s} tokens {res['tokens_before']:>7}/{res['tokens_after']:<7} chars {res['chars']:>9}  "
            f"T_tok {res['t_tok_ms']:>7} ms  T_check {res['t_check_ms']:>7} ms  ratio {res['ratio']:>5}× "
            f"{res['ratio_range']}  "
            f"(new rule set {res['t_check_new_rules_ms']} ms, {res['ratio_new_rules']}×)  "
            f"peak {res['peak_mb']:>6} MB (process max RSS {res['rss_mb']} MB)  stages {res['stages_ms']}  states {res['states']}"
        )
    print(f"worst ratio {worst}× (goal ≤ 3×, defect above 10×; {args.clock} clock)")
    return 0 if worst <= 10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
