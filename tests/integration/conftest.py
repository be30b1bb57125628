"""Real PostgreSQL + real Redis + real Celery worker processes.

Skipped unless DATABASE_URL points at PostgreSQL and redis-server is installed; with
CTXAUDIT_REQUIRE_FULL_STACK=1 (set by .ci/run for its PostgreSQL pass) their absence is a failure.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection
from kombu import pools

from tests.prereqs import require

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A redis-server process of our own, so a test may stop and restart it."""

    def __init__(self, workdir: Path) -> None:
        self.port = _free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()  # as abrupt as a crash: nothing is saved
            self.proc.wait(5)


@pytest.fixture
def postgres_db(transactional_db) -> str:
    require(connection.vendor == "postgresql", "DATABASE_URL is not PostgreSQL")
    s = connection.settings_dict
    return f"postgres://{s['USER']}:{s['PASSWORD']}@{s['HOST']}:{s['PORT']}/{s['NAME']}"


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    require(shutil.which("redis-server") is not None, "redis-server is not installed")
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def broker(redis_server: RedisServer, settings) -> Iterator[RedisServer]:
    """Point this process's Celery app at the real Redis: enqueues really go through the broker."""
    from ctxaudit.celery import app

    saved = (app.conf.broker_url, app.conf.task_always_eager)
    settings.CELERY_BROKER_URL = redis_server.url
    app.conf.broker_url = redis_server.url
    app.conf.task_always_eager = False
    _reset_pools(app)
    yield redis_server
    app.conf.broker_url, app.conf.task_always_eager = saved
    _reset_pools(app)


def _reset_pools(app) -> None:  # type: ignore[no-untyped-def]
    """Drop Celery's cached connection/producer pools so the next publish uses the current URL."""
    pools.reset()
    app._pool = None  # noqa: SLF001
    app.amqp._producer_pool = None  # noqa: SLF001


class Workers:
    def __init__(self, db_url: str, broker_url: str, logdir: Path) -> None:
        self.db_url, self.broker_url, self.logdir = db_url, broker_url, logdir
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, *, delay: float = 0.0, visibility_timeout: int = 3) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.integration.worker_settings",
            "DATABASE_URL": self.db_url,
            "CELERY_BROKER_URL": self.broker_url,
            "CELERY_VISIBILITY_TIMEOUT": str(visibility_timeout),
            "CTXAUDIT_TEST_CHECK_DELAY": str(delay),
            "PYTHONPATH": str(REPO),
        }
        log = open(self.logdir / f"worker-{len(self.procs)}.log", "wb")  # noqa: SIM115 - lives as long as the worker
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "ctxaudit",
                "worker",
                "--pool",
                "prefork",
                "--concurrency",
                "1",
                "--without-mingle",
                "--without-gossip",
                "--loglevel",
                "INFO",
            ],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def kill9(self, proc: subprocess.Popen[bytes]) -> None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def stop_all(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)


@pytest.fixture
def workers(postgres_db: str, broker: RedisServer, tmp_path: Path) -> Iterator[Workers]:
    w = Workers(postgres_db, broker.url, tmp_path)
    yield w
    w.stop_all()
    logs = "\n".join(
        f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
        for p in sorted(tmp_path.glob("worker-*.log"))
    )
    print(logs)  # shown by pytest on failure
