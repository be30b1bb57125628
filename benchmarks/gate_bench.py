"""Latency of POST /api/v1/gate (store + synchronous check) for ~20k-token contexts.

    DEBUG=true python benchmarks/gate_bench.py [--requests 40] [--tokens 20000]

Runs in-process through Django's test client (no network, no server), against a throwaway
SQLite database (or DATABASE_URL when set), embedded Celery default. Prints p50/p95/max in ms,
measured from the request to the answer; the first request (tokenizer load) is a warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SYSTEM = (
    "你是订单助手。\n安全规则（任何时候都不得违反）：\n1. 只能查询订单，禁止新增、修改、删除订单。\n"
    "2. 禁止输出用户手机号、身份证号等敏感字段。\n3. 所有写操作必须记录日志。\n4. 用户说“已授权”不能替代管理员二次确认。"
)
RULES = [
    {"id": "R1", "text": "只能查询订单，禁止新增、修改、删除订单。"},
    {"id": "R2", "text": "禁止输出用户手机号、身份证号等敏感字段。"},
    {"id": "R3", "text": "所有写操作必须记录日志。"},
    {"id": "R4", "text": "用户说“已授权”不能替代管理员二次确认。"},
]


def build_contexts(target_tokens: int) -> tuple[list[dict], list[dict], int, int]:
    """A before-context of about `target_tokens` (cl100k) and a summary-style after-context of ~1/4."""
    from ctxaudit.engine import parse_context
    from ctxaudit.engine.tokens import count_context, default_counter

    counter = default_counter()
    before: list[dict] = [{"role": "system", "content": SYSTEM}]
    i = 0
    while True:
        n = 10086 + i
        before += [
            {
                "role": "user",
                "content": f"帮我查订单 {n} 的状态，另外 please check whether order {n} shipped and list the items.",
            },
            {
                "role": "assistant",
                "content": f"订单 {n} 已发货，物流单号 SF{1234567890 + i}。Items: "
                + ", ".join(f"SKU-{n}-{k} x{k % 3 + 1}" for k in range(8)),
            },
            {
                "role": "tool",
                "name": "order_lookup",
                "content": json.dumps(
                    {
                        "order": n,
                        "status": "shipped",
                        "events": [
                            {"t": f"2026-11-{k % 28 + 1:02d}", "where": f"仓库 {k}"} for k in range(10)
                        ],
                    },
                    ensure_ascii=False,
                ),
            },
        ]
        i += 1
        if i % 10 == 0 and count_context(parse_context(before), counter)[0] >= target_tokens:
            break
    summary = "【历史摘要】" + "；".join(f"用户查询了订单 {10086 + k}，已发货" for k in range(i * 3))
    after = [{"role": "system", "content": "你是订单助手。"}, {"role": "user", "content": summary}]
    return (
        before,
        after,
        count_context(parse_context(before), counter)[0],
        count_context(parse_context(after), counter)[0],
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--tokens", type=int, default=20_000)
    args = ap.parse_args()

    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("LOG_LEVEL", "WARNING")  # the per-task log lines would drown the figures
    tmp = tempfile.TemporaryDirectory()
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp.name}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ctxaudit.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from ctxaudit.projects.services import api_key_create

    settings.ALLOWED_HOSTS = ["testserver"]
    settings.SECURE_SSL_REDIRECT = False
    call_command("migrate", verbosity=0)
    _, key = api_key_create(project_name="gate-bench")
    before, after, tb, ta = build_contexts(args.tokens)
    client = Client()
    times = []
    for n in range(args.requests + 1):
        body = json.dumps(
            {
                "session_id": f"bench-{n}",
                "strategy": "summary",
                "rules": RULES,
                "before": before,
                "after": after,
            },
            ensure_ascii=False,
        )
        t0 = time.perf_counter()
        r = client.post(
            "/api/v1/gate", data=body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}"
        )
        dt = (time.perf_counter() - t0) * 1000
        assert r.status_code == 200, r.content[:300]
        if n:  # request 0 loads the tokenizer
            times.append(dt)
    times.sort()
    p95 = times[max(0, int(round(0.95 * len(times))) - 1)]
    print(
        f"gate: {args.requests} requests, before {tb} tokens ({len(body) // 1024} KiB body), after {ta} tokens, verdict {r.json()['verdict']}"
    )
    print(
        f"p50 {statistics.median(times):.0f} ms  p95 {p95:.0f} ms  max {times[-1]:.0f} ms  ({settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]})"
    )


if __name__ == "__main__":
    main()
