"""Benchmark engine/diff.py on 200k-token context pairs (about 1 MB a side).

Run from the repository root:  python benchmarks/diff_bench.py [--repeat 3]

Scenarios (each side about 200k tokens, counted with tiktoken cl100k_base when available):
  summary      500 messages before; after: the system message rewritten, a summary, the last 40 kept
  edits        the same 500 messages after, every 10th one edited in a few words (200k both sides)
  giant        one 200k-token message each side (a long document) with 50 scattered line edits
  json-log     one tool output of ~10k near-identical JSON lines (the difflib autojunk trap), one changed
  rewrite      200k tokens of chat before, a different 200k-token text after (nothing in common)
Prints the best wall time of each, and how many rows/changed lines the diff found.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxaudit.engine.diff import diff_contexts  # noqa: E402
from ctxaudit.engine.types import Message  # noqa: E402

WORDS = [
    "order",
    "customer",
    "delete",
    "query",
    "refund",
    "shipping",
    "address",
    "payment",
    "status",
    "agent",
    "tool",
    "result",
    "must",
    "never",
    "always",
    "policy",
    "account",
    "invoice",
    "item",
    "warehouse",
    "ticket",
    "escalate",
    "confirm",
    "approve",
    "deny",
    "record",
    "update",
]
ZH = "订单客户删除查询退款地址支付状态工具结果必须禁止政策账户发票仓库工单升级确认审批记录更新"


def _para(rnd: random.Random, words: int) -> str:
    lines = []
    for _ in range(max(1, words // 14)):
        if rnd.random() < 0.3:
            lines.append("".join(rnd.choice(ZH) for _ in range(18)) + "。")
        else:
            lines.append(" ".join(rnd.choice(WORDS) for _ in range(14)) + ".")
    return "\n".join(lines)


def _tool(rnd: random.Random, rows: int) -> str:
    return json.dumps(
        [
            {
                "id": rnd.randint(1, 10**6),
                "status": rnd.choice(["open", "paid", "shipped"]),
                "total": rnd.randint(1, 999),
            }
            for _ in range(rows)
        ],
        indent=2,
    )


def chat(rnd: random.Random, n: int) -> list[Message]:
    msgs = [
        Message(
            "system",
            "You are the order assistant.\nRules:\n1. Never delete any order.\n2. 禁止输出用户手机号。\n"
            + _para(rnd, 300),
        )
    ]
    for i in range(n):
        role = ("user", "assistant", "tool")[i % 3]
        msgs.append(
            Message(
                role,
                _tool(rnd, 20) if role == "tool" else _para(rnd, 280),
                name="orders.query" if role == "tool" else None,
            )
        )
    return msgs


def scenarios() -> dict[str, tuple[list[Message], list[Message]]]:
    rnd = random.Random(7)  # noqa: S311 - synthetic text, not security
    before = chat(rnd, 500)
    out = {}
    out["summary"] = (
        before,
        [
            Message("system", "You are the order assistant.\nRules:\n1. Be careful with deletions."),
            Message("user", _para(rnd, 2000), kind="compact_summary"),
            *before[-40:],
        ],
    )
    edited = list(before)
    for i in range(5, len(edited), 10):
        t = edited[i].content.split("\n")
        t[len(t) // 2] = t[len(t) // 2].replace("order", "ORDER").replace("订单", "单子") + " (edited)"
        edited[i] = Message(edited[i].role, "\n".join(t), edited[i].name)
    out["edits"] = (before, edited)
    doc = _para(rnd, 165_000).split("\n")
    doc2 = list(doc)
    for k in range(50):
        j = (k * 7919) % len(doc2)
        doc2[j] = doc2[j][: len(doc2[j]) // 2] + " inserted words here" + doc2[j][len(doc2[j]) // 2 :]
    out["giant"] = ([Message("user", "\n".join(doc))], [Message("user", "\n".join(doc2))])
    line = '    {"level": "info", "msg": "heartbeat ok", "service": "orders"},'
    log = ["["] + [line] * 10000 + ["]"]
    log2 = list(log)
    log2[5000] = '    {"level": "error", "msg": "delete all orders", "service": "orders"},'
    out["json-log"] = ([Message("tool", "\n".join(log))], [Message("tool", "\n".join(log2))])
    out["rewrite"] = (before, chat(random.Random(99), 500))  # noqa: S311 - synthetic text
    return out


def _tokens(msgs: list[Message]) -> str:
    try:
        from ctxaudit.engine.tokens import default_counter

        c = default_counter()
        return f"{sum(c.count(m.content) for m in msgs):,} tokens"
    except Exception:  # tokenizer unavailable: report characters
        return f"{sum(len(m.content) for m in msgs):,} chars"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for name, (b, a) in scenarios().items():
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            d = diff_contexts(b, a)
            best = min(best, time.perf_counter() - t0)
        changed = sum(1 for r in d.rows for h in r.hunks if h.kind == "change" for _ in h.before)
        size = sum(len(m.content.encode()) for m in b) / 1e6
        print(
            f"{name:9s} before {_tokens(b):>16s} ({size:.2f} MB), after {_tokens(a):>16s}: {best * 1000:7.0f} ms  rows={len(d.rows)} counts={d.counts} changed_before_lines={changed}"
        )


if __name__ == "__main__":
    main()
