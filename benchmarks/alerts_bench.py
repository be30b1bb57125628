"""Cost of alert evaluation and of webhook delivery.

    DEBUG=true python benchmarks/alerts_bench.py [--events 500] [--rules 20] [--deliveries 100]

Throwaway SQLite database (or DATABASE_URL when set). Events are stored already checked, each with
a `rule_missing` finding for one of `--rules` rules and a `claim_promoted` finding, so most
evaluations update an existing alert (the common case once a project has history).
Prints p50/p95/max of `alerts_for_event` for a first evaluation and for a repeated one (the
idempotent no-op), then the time per signed webhook delivery to a local HTTP receiver
(claim, sign, POST, log).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[max(0, int(round(p * len(xs))) - 1)]


def line(name: str, xs: list[float]) -> str:
    return f"{name}: n={len(xs)}  p50 {statistics.median(xs):.2f} ms  p95 {pct(xs, 0.95):.2f} ms  max {max(xs):.2f} ms"


class _Ok(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=500)
    ap.add_argument("--rules", type=int, default=20)
    ap.add_argument("--deliveries", type=int, default=100)
    args = ap.parse_args()

    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    tmp = tempfile.TemporaryDirectory()
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp.name}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ctxaudit.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.CELERY_TASK_ALWAYS_EAGER = False  # deliveries are timed on their own below
    call_command("migrate", verbosity=0)

    from ctxaudit.alerts import services
    from ctxaudit.alerts.models import Channel, Delivery

    services.delivery_enqueue = lambda pk: None  # type: ignore[assignment] # sent by hand below, timed
    from ctxaudit.alerts.services import alerts_for_event, deliveries_create, delivery_attempt
    from ctxaudit.audits.models import Finding
    from ctxaudit.ingest.models import Event, Session
    from ctxaudit.projects.models import Project

    project = Project.objects.create(name="alerts-bench")
    events = []
    for n in range(args.events):
        session, _ = Session.objects.get_or_create(project=project, external_id=f"s-{n % 50}")
        rule = f"R{n % args.rules}"
        ev = Event.objects.create(
            project=project,
            session=session,
            sequence=n,
            before=[],
            after=[],
            status=Event.Status.CHECKED,
            rules=[{"id": rule, "text": f"rule {rule}", "severity": "high"}],
        )
        Finding.objects.bulk_create(
            [
                Finding(
                    event=ev,
                    kind="rule_missing",
                    severity="high",
                    rule_id=rule,
                    message=f"Rule {rule} is missing.",
                ),
                Finding(
                    event=ev,
                    kind="claim_promoted",
                    severity="medium",
                    rule_id=None,
                    message="claim stated as fact",
                ),
            ]
        )
        events.append(ev.pk)

    first, again = [], []
    for pk in events:
        t0 = time.perf_counter()
        alerts_for_event(pk)
        first.append((time.perf_counter() - t0) * 1000)
    for pk in events:
        t0 = time.perf_counter()
        alerts_for_event(pk)
        again.append((time.perf_counter() - t0) * 1000)

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    Channel.objects.create(
        project=project, kind="webhook", target=f"http://127.0.0.1:{server.server_address[1]}/hook"
    )
    from ctxaudit.alerts.models import Alert

    alert = Alert.objects.filter(project=project).first()
    sends = []
    for n in range(args.deliveries):
        (d,) = deliveries_create(
            alert=alert, event=Event.objects.get(pk=events[n % len(events)]), reason=f"bench{n}"
        )
        t0 = time.perf_counter()
        assert delivery_attempt(delivery_id=str(d.pk)) == "sent"
        sends.append((time.perf_counter() - t0) * 1000)
    server.shutdown()

    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    print(
        f"alerts: {args.events} events, {args.rules} rules, {Alert.objects.count()} alerts, {Delivery.objects.count()} deliveries ({engine})"
    )
    print(line("evaluate (first)", first))
    print(line("evaluate (again, no-op)", again))
    print(line("webhook delivery", sends))


if __name__ == "__main__":
    main()
