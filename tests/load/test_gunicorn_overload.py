"""The production web shape under a burst (gunicorn -c python:ctxaudit.gunicorn_conf, 2 gthread
workers, loopback): every client gets 202 or 503 with Retry-After, no 5xx; exactly the 202s are
stored; /login/ answers meanwhile; and without CACHE_URL the per-key rate limit is one count
across both worker processes (the file store), not one per process."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.factories import event_payload

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _call(url: str, key: str | None = None, body: dict | None = None) -> tuple[int, str | None]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")  # noqa: S310 - loopback
    try:
        with urllib.request.urlopen(req, timeout=60) as r:  # noqa: S310 - loopback
            return int(r.status), r.headers.get("Retry-After")
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.headers.get("Retry-After")


@pytest.fixture
def server(tmp_path):
    env = {
        **os.environ,
        "DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{tmp_path}/load.sqlite3",
        "ALLOWED_HOSTS": "127.0.0.1",
        "CTXAUDIT_RATE_LIMIT_PER_MINUTE": "12",
        "CTXAUDIT_RATE_LIMIT_DIR": str(tmp_path / "rl"),
        "LOG_LEVEL": "WARNING",
        "WEB_CONCURRENCY": "2",
    }
    for var in ("CELERY_BROKER_URL", "CACHE_URL"):
        env.pop(var, None)
    run = {"env": env, "cwd": ROOT, "capture_output": True, "text": True, "timeout": 300, "check": True}
    subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], **run)  # noqa: S603
    keys = [
        subprocess.run([sys.executable, "manage.py", "create_api_key", "--project", "load"], **run)  # noqa: S603
        .stdout.strip()
        .splitlines()[-1]
        for _ in range(2)
    ]
    port = _free_port()
    env["GUNICORN_BIND"] = f"127.0.0.1:{port}"
    log = open(tmp_path / "gunicorn.log", "w+")  # noqa: SIM115 - read after the server stops
    proc = subprocess.Popen(  # noqa: S603 - fixed arguments
        [sys.executable, "-m", "gunicorn", "-c", "python:ctxaudit.gunicorn_conf", "ctxaudit.wsgi"],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}", keys, log, tmp_path / "rl"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


def test_a_burst_gets_202_or_503_with_retry_after_and_nothing_else(server) -> None:
    base, (burst_key, limit_key), log, rl_dir = server
    # The rate limit: 12 a minute for one key, counted across both worker processes.
    if time.time() % 60 > 45:  # keep the 30 requests inside one fixed window
        time.sleep(61 - time.time() % 60)
    t0 = time.time()
    codes = Counter(_call(f"{base}/api/v1/events?limit=1", limit_key)[0] for _ in range(30))
    assert codes == {200: 12, 429: 18}, (codes, t0, time.time(), sorted(os.listdir(rl_dir)))
    # 40 posts at once, far more than 2 workers x (1 running + 1 waiting) slots.
    with ThreadPoolExecutor(40) as pool:
        futures = [
            pool.submit(_call, f"{base}/api/v1/events", burst_key, event_payload(session_id=f"b-{i}"))
            for i in range(40)
        ]
        login = [_call(f"{base}/login/") for _ in range(3)]
        answers = [f.result() for f in futures]
    statuses = Counter(code for code, _ in answers)
    assert set(statuses) <= {202, 503}, statuses
    assert statuses[503] > 0 and statuses[202] > 0, statuses
    assert all(retry == "1" for code, retry in answers if code == 503)
    assert [code for code, _ in login] == [200, 200, 200], login
    time.sleep(1)
    stored = json.loads(
        urllib.request.urlopen(  # noqa: S310 - loopback
            urllib.request.Request(
                f"{base}/api/v1/events?limit=1", headers={"Authorization": f"Bearer {burst_key}"}
            ),
            timeout=60,
        ).read()
    )["count"]
    assert stored == statuses[202], (stored, statuses)  # a shed request stored nothing
    log.seek(0)
    assert "Traceback" not in log.read()
