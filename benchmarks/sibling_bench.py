"""Sibling rules (issue 12 §3): many rules sharing verbs and qualifiers, some dropped.

    .venv/bin/python benchmarks/sibling_bench.py [--rules 200] [--drop 7] [--seed 7]

A deterministic generator (random.Random(seed)) writes --rules rules from a few verbs ("Never
delete", "Never export", "禁止导出", "禁止删除"…), objects ("shipments", "tickets", "订单数据"…),
regions ("of the border region", "华东区的"…) and numbers ("at most 3 times"), half English, half
Chinese, every rule unique but sharing its verb and qualifier with many siblings. The system
prompt before holds all of them; after compression --drop of them are gone and the rest are
verbatim. A dropped rule that reads *retained* (or weakened) through a surviving sibling is an
error; so is a surviving rule not read retained. Prints the counts and the time of one retention
check. Exit 1 when any dropped rule reads retained.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxaudit.engine.checks.retention import check_rule_retention  # noqa: E402
from ctxaudit.engine.types import Context, Message, Rule  # noqa: E402

EN_VERBS = (
    "Never delete any",
    "Never export any",
    "Do not modify any",
    "Never share any",
    "Do not archive any",
)
EN_OBJECTS = (
    "shipments",
    "tickets",
    "invoices",
    "contracts",
    "payroll records",
    "customer notes",
    "audit logs",
    "vendor quotes",
)
EN_REGIONS = (
    "of the border region",
    "of the northern region",
    "of the coastal region",
    "of the capital region",
    "of the eastern branch",
)
ZH_VERBS = ("禁止删除", "禁止导出", "不得修改", "禁止外传", "不得归档")
ZH_REGIONS = ("华东区的", "华南区的", "华北区的", "西南区的", "东北区的")
ZH_OBJECTS = ("订单数据", "工单记录", "发票", "合同", "工资单", "客户备注", "审计日志", "供应商报价")
NUMBERED = ("Retry a failed {o} at most {n} times.", "每个{o}最多重试{n}次。")


def generate(n: int, rng: random.Random) -> list[str]:
    """n distinct rule texts, half English and half Chinese, sharing verbs and qualifiers."""
    en = [f"{v} {o} {r}." for v in EN_VERBS for o in EN_OBJECTS for r in EN_REGIONS]
    zh = [f"{v}{r}{o}。" for v in ZH_VERBS for r in ZH_REGIONS for o in ZH_OBJECTS]
    nums = [NUMBERED[0].format(o=o, n=k) for o in ("payment", "webhook", "export job") for k in (3, 5)]
    nums += [NUMBERED[1].format(o=o, n=k) for o in ("支付请求", "回调") for k in ("三", "五")]
    rng.shuffle(en)
    rng.shuffle(zh)
    out = nums + [t for pair in zip(en, zh, strict=False) for t in pair]
    return out[:n]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rules", type=int, default=200)
    ap.add_argument("--drop", type=int, default=7)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    texts = generate(args.rules, rng)
    rules = [Rule(f"R{i + 1}", t) for i, t in enumerate(texts)]
    dropped = set(rng.sample(range(len(rules)), args.drop))
    before = Context((Message("system", "Rules:\n" + "\n".join(f"- {t}" for t in texts)),))
    after = Context(
        (
            Message(
                "system", "Rules:\n" + "\n".join(f"- {t}" for i, t in enumerate(texts) if i not in dropped)
            ),
        )
    )
    t0 = time.perf_counter()
    results = check_rule_retention(before, after, rules)
    ms = (time.perf_counter() - t0) * 1000
    wrong_dropped = [
        (r.rule_id, r.text, r.state.value)
        for i, r in enumerate(results)
        if i in dropped and r.state.value != "missing"
    ]
    wrong_kept = [
        (r.rule_id, r.state.value)
        for i, r in enumerate(results)
        if i not in dropped and r.state.value != "retained"
    ]
    print(
        f"{len(rules)} rules, {len(dropped)} dropped: {len(wrong_dropped)} dropped rules not read missing, "
        f"{len(wrong_kept)} kept rules not read retained; retention {ms:.0f} ms"
    )
    for w in wrong_dropped:
        print("  dropped but", w[2], w[0], w[1])
    return 1 if any(w[2] == "retained" for w in wrong_dropped) else 0


if __name__ == "__main__":
    raise SystemExit(main())
