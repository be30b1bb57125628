"""Alert fixtures: olga (ops of "acme"), checked events with chosen findings, a real webhook receiver."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ctxaudit.audits.models import Finding
from ctxaudit.ingest.models import Event
from ctxaudit.projects.models import Project
from tests.factories import event as ingest_event
from tests.factories import member


@pytest.fixture
def olga(db, alice):
    return member("olga", "acme", "ops")


def checked_event(
    project: str = "acme",
    *,
    findings: list[tuple[str, str, str | None, str]],
    session_id: str = "s-1",
    sequence: int = 1,
    rules: list[dict[str, Any]] | None = None,
) -> Event:
    """An ingested event marked checked with exactly `findings` [(kind, severity, rule_id, message)],
    so alert tests do not depend on how the engine rates a given context."""
    ev = ingest_event(
        project, session_id=session_id, sequence=sequence, **({"rules": rules} if rules else {})
    )
    Finding.objects.filter(event=ev).delete()
    Finding.objects.bulk_create(
        Finding(event=ev, kind=k, severity=s, rule_id=r, message=m) for k, s, r, m in findings
    )
    Event.objects.filter(pk=ev.pk).update(status=Event.Status.CHECKED, verdict="fail")
    ev.refresh_from_db()
    return ev


@pytest.fixture
def make_event():
    return checked_event


class Receiver:
    """A real HTTP server on 127.0.0.1 that answers with the next queued status (then 200)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        # Answer 500 to the first request of each notification id (several alerts at once).
        self.fail_first_per_notification = False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                nid = self.headers.get("X-Ctxaudit-Notification-Id")
                seen = any(r["headers"].get("X-Ctxaudit-Notification-Id") == nid for r in outer.requests)
                outer.requests.append({"headers": dict(self.headers), "body": body, "path": self.path})
                if outer.fail_first_per_notification:
                    status = 200 if seen else 500
                else:
                    status = outer.statuses.pop(0) if outer.statuses else 200
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(json.dumps({"ok": status < 300}).encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/ctxaudit"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(settings):
    settings.CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS = True  # a self-hosted receiver on 127.0.0.1
    with Receiver() as r:
        yield r


PUBLIC_DNS = {"hooks.example.com": ["93.184.215.14"], "rebind.example.com": ["93.184.215.14"]}


@pytest.fixture
def public_dns(monkeypatch):
    """hooks.example.com resolves to a public address (the sandbox has no outside DNS); other names
    resolve for real (localhost -> 127.0.0.1). Returns the table, so a test can change an answer."""
    from ctxaudit.core import netguard

    table = {k: list(v) for k, v in PUBLIC_DNS.items()}
    real = netguard._getaddrinfo
    monkeypatch.setattr(netguard, "_getaddrinfo", lambda host, port: table.get(host) or real(host, port))
    return table


@pytest.fixture
def acme(project) -> Project:
    return project
