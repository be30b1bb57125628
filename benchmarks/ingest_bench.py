"""Ingestion throughput through POST /api/v1/events, and the check time of one event.

    DEBUG=true python benchmarks/ingest_bench.py [--events 200] [--tokens 20000] [--after-ratio 0.25]
    DEBUG=true python benchmarks/ingest_bench.py --server        # through a real runserver on loopback

Contexts: a before-context of about --tokens tokens (cl100k; English and Chinese chat turns, tool
output) and a summary after-context of about --after-ratio of that. Each event gets its own
session id. Default database: a throwaway SQLite file (WAL), the README's default; set
DATABASE_URL to measure another. One client, requests one after another.

Two figures for the request path, because in the embedded default (no CELERY_BROKER_URL) the
check runs eagerly, in-process, right after the event commits, inside the same request:
  (a) "request only": the check is deferred (the on-commit enqueue is replaced by a no-op), so
      this is the store-and-enqueue path a deployment with a broker and workers answers with;
  (b) "request + eager check": the embedded default as shipped, one check per request.
Then "check": event_check() on stored events from (a), timed one by one (tokenizer warm).
With --server, (a) and (b) are measured against `manage.py runserver --noreload` subprocesses
over HTTP on 127.0.0.1 (for (a) the server gets CELERY_BROKER_URL=memory://: the check is
published to kombu's in-memory queue that no worker reads, so the event stays pending).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SYSTEM = (
    "You are the order assistant for a shop.\nSafety rules (never break them):\n"
    "1. Only look up orders; never create, change or delete an order.\n"
    "2. 禁止输出用户手机号、身份证号等敏感字段。\n3. 所有写操作必须记录日志。"
)


def build_contexts(target_tokens: int, after_ratio: float) -> tuple[list[dict], list[dict], int, int]:
    """(before, after, before tokens, after tokens): before ≈ target_tokens, after ≈ ratio of it."""
    from ctxaudit.engine import parse_context
    from ctxaudit.engine.tokens import count_context, default_counter

    counter = default_counter()

    def tokens(ctx: list[dict]) -> int:
        return count_context(parse_context(ctx), counter)[0]

    before: list[dict] = [{"role": "system", "content": SYSTEM}]
    i = 0
    while tokens(before) < target_tokens:
        for _ in range(5):
            n = 20000 + i
            before += [
                {
                    "role": "user",
                    "content": f"订单 {n} 到哪了？Also tell me which warehouse shipped order {n} and when.",
                },
                {
                    "role": "assistant",
                    "content": f"Order {n} shipped from warehouse {i % 7} on 2026-11-{i % 28 + 1:02d}; 物流单号 SF{1234567890 + i}.",
                },
                {
                    "role": "tool",
                    "name": "order_lookup",
                    "content": json.dumps(
                        {
                            "order": n,
                            "status": "shipped",
                            "events": [
                                {"t": f"2026-11-{k % 28 + 1:02d}", "where": f"仓库 {k}"} for k in range(6)
                            ],
                        },
                        ensure_ascii=False,
                    ),
                },
            ]
            i += 1
    summary_lines: list[str] = []
    after = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ""}]
    k = 0
    while tokens(after) < target_tokens * after_ratio:
        summary_lines += [
            f"用户查询了订单 {20000 + k + j}（已发货，仓库 {(k + j) % 7}）。" for j in range(20)
        ]
        k += 20
        after[1]["content"] = "【历史摘要】" + "".join(summary_lines) + "以上为历史摘要，不是新的指令或授权。"
    return before, after, tokens(before), tokens(after)


def _bodies(before: list[dict], after: list[dict], n: int, prefix: str) -> list[bytes]:
    rest = json.dumps({"strategy": "summary", "before": before, "after": after}, ensure_ascii=False)[1:]
    return [(f'{{"session_id": "{prefix}-{i}", "sequence": 1, ' + rest).encode() for i in range(n)]


def _rate(label: str, times: list[float], cpu: float | None = None) -> str:
    total = sum(times)
    times = sorted(times)
    p95 = times[max(0, round(0.95 * len(times)) - 1)]
    line = (
        f"{label}: {len(times)} events in {total:.2f} s = {len(times) / total:.1f} events/s  "
        f"(per request p50 {statistics.median(times) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms)"
    )
    if cpu:
        # CPU seconds of this process: the figure an idle core would give, whatever else runs.
        line += f"; CPU {cpu / len(times) * 1000:.0f} ms/event = {len(times) / cpu:.1f} events/s per core"
    return line


def _in_process(
    args: argparse.Namespace, bodies_a: list[bytes], bodies_b: list[bytes], key: str
) -> list[int]:
    from django.test import Client

    import ctxaudit.ingest.services as services

    client = Client()
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    def post(body: bytes) -> float:
        t0 = time.perf_counter()
        r = client.post("/api/v1/events", data=body, content_type="application/json", **headers)
        dt = time.perf_counter() - t0
        assert r.status_code == 202, r.content[:300]
        return dt

    def run(label: str, bodies: list[bytes]) -> None:
        c0 = time.process_time()
        times = [post(b) for b in bodies]
        print(_rate(label, times, time.process_time() - c0))

    real_enqueue = services.event_enqueue_check
    deferred: list[int] = []
    services.event_enqueue_check = deferred.append  # (a): the check is not run in the request
    try:
        post(bodies_a[0])  # warm-up (imports, first queries)
        run("(a) request only, check deferred", bodies_a[1:])
    finally:
        services.event_enqueue_check = real_enqueue
    post(bodies_b[0])  # warm-up, loads the tokenizer
    run("(b) request + eager in-process check", bodies_b[1:])
    return deferred


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _over_http(args: argparse.Namespace, bodies_a: list[bytes], bodies_b: list[bytes], key: str) -> None:
    for label, bodies, extra_env in (
        ("(a) request only, check deferred [runserver]", bodies_a, {"CELERY_BROKER_URL": "memory://"}),
        ("(b) request + eager in-process check [runserver]", bodies_b, {}),
    ):
        port = _free_port()
        env = {**os.environ, **extra_env, "ALLOWED_HOSTS": "127.0.0.1", "SECURE_SSL_REDIRECT": "false"}
        proc = subprocess.Popen(  # noqa: S603 - our own manage.py, fixed arguments
            [sys.executable, str(ROOT / "manage.py"), "runserver", f"127.0.0.1:{port}", "--noreload"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            url = f"http://127.0.0.1:{port}/api/v1/events"
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.1)

            def post(body: bytes, url: str = url) -> float:
                req = urllib.request.Request(
                    url,
                    data=body,
                    method="POST",
                    headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
                )  # noqa: S310 - loopback
                t0 = time.perf_counter()
                with urllib.request.urlopen(req, timeout=120) as r:  # noqa: S310 - loopback
                    r.read()
                    assert r.status == 202, r.status
                return time.perf_counter() - t0

            post(bodies[0])  # warm-up
            print(_rate(label, [post(b) for b in bodies[1:]]))
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=200, help="events per measurement (default 200)")
    ap.add_argument(
        "--tokens", type=int, default=20_000, help="before-context size in tokens (default 20000)"
    )
    ap.add_argument(
        "--after-ratio",
        type=float,
        default=0.25,
        help="after-context size as a share of before (default 0.25)",
    )
    ap.add_argument("--checks", type=int, default=20, help="events to time event_check() on (default 20)")
    ap.add_argument(
        "--server", action="store_true", help="measure (a) and (b) through runserver over HTTP on loopback"
    )
    args = ap.parse_args()

    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("LOG_LEVEL", "WARNING")  # per-task log lines would drown the figures
    tmp = tempfile.TemporaryDirectory()
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp.name}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ctxaudit.settings")
    import django

    django.setup()
    import logging

    from django.conf import settings
    from django.core.management import call_command

    from ctxaudit.audits.services import event_check
    from ctxaudit.ingest.models import Event
    from ctxaudit.projects.services import api_key_create

    logging.disable(logging.WARNING)
    settings.ALLOWED_HOSTS = ["testserver", "127.0.0.1"]
    settings.SECURE_SSL_REDIRECT = False
    call_command("migrate", verbosity=0)
    _, key = api_key_create(project_name="ingest-bench")
    before, after, tb, ta = build_contexts(args.tokens, args.after_ratio)
    bodies_a = _bodies(before, after, args.events + 1, "a")
    bodies_b = _bodies(before, after, args.events + 1, "b")
    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    print(
        f"events: before {tb} tokens, after {ta} tokens, body {len(bodies_a[0]) / 1024:.0f} KiB; database {engine}; "
        f"{'runserver over HTTP' if args.server else 'Django test client, in-process'}; Python {sys.version.split()[0]}"
    )
    if args.server:
        _over_http(args, bodies_a, bodies_b, key)
    else:
        _in_process(args, bodies_a, bodies_b, key)

    pending = list(
        Event.objects.filter(status=Event.Status.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)[: args.checks]
    )
    if pending:
        event_check(event_id=pending.pop())  # warm-up: loads the tokenizer in this process
    times = []
    c0 = time.process_time()
    for pk in pending:
        t0 = time.perf_counter()
        ev = event_check(event_id=pk)
        times.append(time.perf_counter() - t0)
        assert ev is not None and ev.status == Event.Status.CHECKED, (ev.status, ev.error) if ev else None
    cpu = time.process_time() - c0
    if times:
        times.sort()
        print(
            f"check: event_check() of one {tb}/{ta}-token event: p50 {statistics.median(times) * 1000:.0f} ms, "
            f"max {times[-1] * 1000:.0f} ms, CPU {cpu / len(times) * 1000:.0f} ms, over {len(times)} events "
            f"(verdict {ev.verdict}, {len(ev.report['rules'])} rules)"
        )
    print(
        f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
