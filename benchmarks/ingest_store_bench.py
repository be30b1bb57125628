"""Ingest with a broker (store only) against its floor, side by side (issue 13).

    DATABASE_URL=postgres://… DEBUG=true python benchmarks/ingest_store_bench.py [--tokens 20000] [--requests 40]

`POST /api/v1/events` through Django's test client with the check deferred (what a deployment
with CELERY_BROKER_URL answers with: store, enqueue, 202), PII redaction on. Interleaved with
each request, the floor for the same body: `json.loads` of it, the redaction of its strings
(engine.pii.redact_many of all of them, keyed: the one joined scan ingestion does) and one psycopg
INSERT of the body as jsonb into a scratch table on the same connection. Prints p50/p95 of both,
the ratio of p95s (goal ≤ 2×), the redaction alone in MB/s of text (goal ≥ 20 MB/s), and the load
average. For comparison with figures measured before the joined scan, the same floor with
engine.pii.redact on each string (what ingestion used to do) is timed too.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _strings(value: object, out: list[str]) -> list[str]:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(str(k))
            _strings(v, out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=20_000)
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument(
        "--query-log", action="store_true", help="keep Django's DEBUG log of every query (not as deployed)"
    )
    args = ap.parse_args()
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    tmp = tempfile.TemporaryDirectory()
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp.name}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ctxaudit.settings")
    import django

    django.setup()
    import ingest_bench
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    import ctxaudit.ingest.services as services
    from ctxaudit.engine.pii import redact, redact_many
    from ctxaudit.ingest.sanitize import pii_key_for
    from ctxaudit.projects.models import Project
    from ctxaudit.projects.services import api_key_create

    settings.ALLOWED_HOSTS = ["testserver"]
    # DEBUG=true is only for the development SECRET_KEY: as deployed, Django keeps no log of
    # every query (request and floor alike), unless --query-log asks for it.
    settings.DEBUG = args.query_log
    call_command("migrate", verbosity=0)
    _, key = api_key_create(project_name=f"store-bench-{os.getpid()}")
    project = Project.objects.get(name=f"store-bench-{os.getpid()}")
    pii_key = pii_key_for(project.pk)
    before, after, tb, ta = ingest_bench.build_contexts(args.tokens, 0.25)
    bodies = ingest_bench._bodies(before, after, args.requests + 1, f"store-{os.getpid()}")
    services.event_enqueue_check = lambda _pk: None  # store only: a worker would check it later
    settings.CELERY_TASK_ALWAYS_EAGER = False  # as with a broker: the answer does not ask how the check went
    client = Client()
    pg = connection.vendor == "postgresql"
    with connection.cursor() as c:
        if pg:
            c.execute("CREATE TEMP TABLE IF NOT EXISTS bench_body (id serial primary key, body jsonb)")
        else:
            c.execute("CREATE TEMP TABLE IF NOT EXISTS bench_body (id integer primary key, body text)")

    def floor(body: bytes, per_string: bool = False) -> tuple[float, float, int]:
        t0 = time.perf_counter()
        data = json.loads(body)
        t1 = time.perf_counter()
        texts = _strings(data, [])
        if per_string:
            for s in texts:
                redact(s, key=pii_key)
        else:
            redact_many(texts, key=pii_key)
        t2 = time.perf_counter()
        with connection.cursor() as c:
            c.execute("INSERT INTO bench_body (body) VALUES (%s)", [json.dumps(data)])
        t3 = time.perf_counter()
        return t3 - t0, t2 - t1, sum(len(s.encode()) for s in texts)

    def post(body: bytes) -> float:
        t0 = time.perf_counter()
        r = client.post(
            "/api/v1/events", data=body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}"
        )
        assert r.status_code == 202, r.content[:200]
        return time.perf_counter() - t0

    post(bodies[0])
    floor(bodies[0])
    req, ref, red, old, old_red, nbytes = [], [], [], [], [], 0
    for b in bodies[1:]:
        f, rd, nbytes = floor(b)
        ref.append(f)
        red.append(rd)
        f, rd, _ = floor(b, per_string=True)
        old.append(f)
        old_red.append(rd)
        req.append(post(b))
    req.sort()
    ref.sort()
    old.sort()
    p95 = max(0, round(0.95 * len(req)) - 1)
    print(
        f"body {len(bodies[0]) / 1024:.0f} KiB ({tb} + {ta} tokens), {nbytes / 1e6:.2f} MB of strings; database "
        f"{connection.vendor}; {args.requests} interleaved requests; Django query log "
        f"{'on' if args.query_log else 'off, as deployed'}; load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"POST (store only): p50 {statistics.median(req) * 1000:.1f} ms, p95 {req[p95] * 1000:.1f} ms | floor "
        f"(json.loads + redaction + one INSERT): p50 {statistics.median(ref) * 1000:.1f} ms, p95 {ref[p95] * 1000:.1f} ms "
        f"| ratio p95 {req[p95] / ref[p95]:.2f}×, p50 {statistics.median(req) / statistics.median(ref):.2f}× (goal ≤ 2×)"
    )
    print(
        f"redaction alone: p50 {statistics.median(red) * 1000:.1f} ms = {nbytes / statistics.median(red) / 1e6:.0f} MB/s "
        "of text (goal ≥ 20 MB/s)"
    )
    print(
        f"for comparison, the floor with redact() on each of its strings: p50 {statistics.median(old) * 1000:.1f} ms, "
        f"p95 {old[p95] * 1000:.1f} ms (redaction {statistics.median(old_red) * 1000:.1f} ms); POST p95 ÷ that floor's "
        f"p95 {req[p95] / old[p95]:.2f}×"
    )


if __name__ == "__main__":
    main()
