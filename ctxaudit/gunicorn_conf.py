"""gunicorn settings for the web service (docker-compose.yml, README "Production"): use with
`gunicorn -c python:ctxaudit.gunicorn_conf ctxaudit.wsgi`. Every value can be overridden by its
environment variable below, or by gunicorn's own GUNICORN_CMD_ARGS.

Why these values (2 cores; measured with benchmarks/load_bench.py):
- gthread workers: load shedding (ctxaudit/core/shedding.py) needs threads, so that a request
  beyond the few a process runs at once is answered 503 by a spare thread instead of waiting in
  the kernel's backlog until its client times out. Threads beyond the shedder's active slots
  only ever answer 503s, which take well under a millisecond each.
- workers = cores (WEB_CONCURRENCY): a check is CPU-bound Python; more processes only contend.
- backlog 256: a short kernel queue; a longer one holds connections the server cannot reach
  before their clients give up (Linux default is 2048 with gunicorn).
- timeout 30 s: a worker silent that long is killed and replaced (the gate answers well below it,
  bench: p95 ≤ 0.5 s at 20k tokens); graceful_timeout 20 s lets running requests finish on a
  restart; keepalive 2 s frees idle connections quickly under load.
"""

from __future__ import annotations

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "16"))
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS", "256"))
backlog = int(os.environ.get("GUNICORN_BACKLOG", "256"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "20"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "2"))
accesslog = os.environ.get("GUNICORN_ACCESSLOG") or None
