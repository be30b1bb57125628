"""gunicorn settings for the web service (docker-compose.yml, README "Production"): use with
`gunicorn -c python:ctxaudit.gunicorn_conf ctxaudit.wsgi`. Every value can be overridden by its
environment variable below, or by gunicorn's own GUNICORN_CMD_ARGS.

Why these values (2 cores; measured with benchmarks/load_bench.py):
- gthread workers: load shedding (ctxaudit/core/shedding.py) needs threads, so that a request
  beyond the few a process runs at once is answered 503 by a spare thread instead of waiting in
  the kernel's backlog until its client times out. Threads beyond the shedder's active slots
  only ever answer 503s, which take well under a millisecond each. The worker class is gthread
  plus the time each request waited for a thread (ctxaudit/core/gunicorn_worker.py), which the
  shedder counts against the request's CTXAUDIT_SHED_MAX_WAIT_MS.
- one worker (WEB_CONCURRENCY=1) on 2 cores: with the shedder's one API slot per process, one
  check runs at a time and the other core is left to what overload brings besides the checks
  (accepting and refusing ~150 connections/s, the clients, other tenants). Two workers = two
  checks at once on 2 cores, each slowed by everything else: accepted p95 under 10x load was
  0.94-2.77x unloaded (median 1.61) with 2 workers against 0.75-1.49x (median 1.03) with 1, 6
  rounds each, interleaved (benchmarks/load_bench.py --capacity 16, 1 Dec 2026, README "gunicorn
  and load"). More cores: leave one without a worker (not measured here; use the benchmark).
- backlog 256: a short kernel queue; a longer one holds connections the server cannot reach
  before their clients give up (Linux default is 2048 with gunicorn).
- timeout 30 s: a worker silent that long is killed and replaced (the gate answers well below it,
  bench: p95 ≤ 0.5 s at 20k tokens); graceful_timeout 20 s lets running requests finish on a
  restart; keepalive 2 s frees idle connections quickly under load.
"""

from __future__ import annotations

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", "1"))
worker_class = "ctxaudit.core.gunicorn_worker.ThreadWorker"  # gthread + queue wait for the shedder
threads = int(os.environ.get("GUNICORN_THREADS", "16"))
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS", "256"))
backlog = int(os.environ.get("GUNICORN_BACKLOG", "256"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "20"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "2"))
accesslog = os.environ.get("GUNICORN_ACCESSLOG") or None
