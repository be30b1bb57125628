"""gunicorn's own queue counts against a request's wait (ctxaudit/core/gunicorn_worker.py): with
one thread busy for 1 s, a request queued behind it for longer than CTXAUDIT_SHED_MAX_WAIT_MS is
answered 503 with Retry-After when a thread reaches it, not served late."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _get(url: str) -> tuple[int, str | None, float]:
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=30) as r:  # noqa: S310 - loopback
            return int(r.status), r.headers.get("Retry-After"), time.monotonic() - t0
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.headers.get("Retry-After"), time.monotonic() - t0


@pytest.fixture
def one_thread_server(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {
        **os.environ,
        "DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{tmp_path}/q.sqlite3",
        "ALLOWED_HOSTS": "127.0.0.1",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
        "GUNICORN_THREADS": "1",
        "CTXAUDIT_SHED_MAX_ACTIVE": "4",  # the gate never refuses here: only the queue wait can
        "CTXAUDIT_SHED_MAX_WAIT_MS": "300",
        "CTXAUDIT_SHED_RETRY_AFTER": "3",
    }
    log = open(tmp_path / "gunicorn.log", "w+")  # noqa: SIM115 - read after the server stops
    proc = subprocess.Popen(  # noqa: S603 - fixed arguments
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "python:ctxaudit.gunicorn_conf",
            "tests.load.slow_wsgi:application",
        ],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            _get(f"{base}/api/ping")
            break
        except OSError:
            time.sleep(0.1)
    try:
        yield base, log
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


def test_a_request_queued_behind_a_busy_thread_past_its_budget_gets_503(one_thread_server) -> None:
    base, log = one_thread_server
    answers: dict[str, tuple[int, str | None, float]] = {}
    busy = threading.Thread(target=lambda: answers.update(busy=_get(f"{base}/api/slow?s=1")))
    busy.start()
    time.sleep(0.2)  # the only thread is now asleep for 1 s
    answers["queued"] = _get(f"{base}/api/next")
    busy.join(10)
    assert answers["busy"][0] == 200
    status, retry_after, took = answers["queued"]
    assert (status, retry_after) == (503, "3")
    assert took > 0.5  # it was answered when the thread came free, after waiting in the queue
    assert _get(f"{base}/api/next")[:2] == (200, None)  # not queued: served
    log.seek(0)
    assert "Traceback" not in log.read()
