"""Concurrent POSTs to a real multi-process server never answer 500 (issue 13: with gunicorn,
2 workers and 2-4 concurrent POSTs, 16-21 % answered HTTP 500 "database is locked" on SQLite).

The server is gunicorn with 2 worker processes on loopback, the embedded default (each POST also
runs its check in the request), against a fresh SQLite file, and against a fresh PostgreSQL
database when DATABASE_URL points at PostgreSQL. Half the posts share one session, so the
session's get_or_create races between the workers; the other half each open a session.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.factories import event_payload

ROOT = Path(__file__).resolve().parents[2]
POSTS = 24
CLIENTS = 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(args: list[str], env: dict[str, str]) -> str:
    out = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)  # noqa: S603 - our own manage.py
    return out.stdout


def _post(url: str, key: str, body: dict) -> int:
    req = urllib.request.Request(  # noqa: S310 - loopback
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as r:  # noqa: S310 - loopback
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def _postgres_url() -> str | None:
    url = os.environ.get("DATABASE_URL", "")
    return url if url.startswith(("postgres://", "postgresql://")) else None


@pytest.fixture(params=["sqlite", "postgresql"])
def server_db(request, tmp_path):
    """A database URL of a fresh, empty database of each kind; dropped afterwards."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/concurrent.sqlite3"
        return
    base = _postgres_url()
    if base is None:
        from tests.prereqs import require

        require(False, "DATABASE_URL does not point at PostgreSQL")
    import psycopg

    name = f"conc_{uuid.uuid4().hex[:10]}"
    admin = base.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield base.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_concurrent_posts_to_two_workers_all_succeed(server_db, tmp_path) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": server_db,
        "DEBUG": "true",
        "ALLOWED_HOSTS": "127.0.0.1",
        "CTXAUDIT_RATE_LIMIT_PER_MINUTE": "0",
        "LOG_LEVEL": "WARNING",
    }
    env.pop("CELERY_BROKER_URL", None)
    env.pop("CACHE_URL", None)
    _run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], env)
    key = (
        _run([sys.executable, "manage.py", "create_api_key", "--project", "conc"], env)
        .strip()
        .splitlines()[-1]
    )
    port = _free_port()
    log = open(tmp_path / "gunicorn.log", "w+")  # noqa: SIM115 - read after the server stops
    server = subprocess.Popen(  # noqa: S603 - fixed arguments
        [
            sys.executable,
            "-m",
            "gunicorn",
            "ctxaudit.wsgi",
            "-w",
            "2",
            "-b",
            f"127.0.0.1:{port}",
            "--timeout",
            "120",
        ],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/api/v1/events"
        bodies = [
            event_payload(session_id="shared" if i % 2 else f"own-{i}", sequence=i) for i in range(POSTS)
        ]
        with ThreadPoolExecutor(CLIENTS) as pool:
            statuses = Counter(pool.map(lambda b: _post(url, key, b), bodies))
        listing = urllib.request.Request(  # noqa: S310 - loopback
            f"{url}?limit=500", headers={"Authorization": f"Bearer {key}"}
        )
        with urllib.request.urlopen(listing, timeout=60) as r:  # noqa: S310 - loopback
            events = json.loads(r.read())
    finally:
        server.terminate()
        server.wait(timeout=30)
    log.seek(0)
    output = log.read()
    assert statuses == {202: POSTS}, (statuses, output[-3000:])
    assert "database is locked" not in output
    assert events["count"] == POSTS
    assert sum(1 for e in events["events"] if e["session_id"] == "shared") == POSTS // 2
    assert {e["status"] for e in events["events"]} == {"checked"}
