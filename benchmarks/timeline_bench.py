"""Render time of the session timeline page and JSON endpoint for a big session.

    DEBUG=true /work/venv/bin/python benchmarks/timeline_bench.py [--events 500] [--rules 50] [--repeat 5]

Builds the session in a throwaway SQLite database (or DATABASE_URL if set), then times, with
Django's test client (full middleware stack, login, template rendering), the page
/sessions/<pk>/ (first page of rule charts + all events + the rule summary), its htmx partial,
and GET /api/v1/sessions/<id>/timeline. Prints the median and the query count of each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=500)
    ap.add_argument("--rules", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="ctxaudit-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DEBUG", "true")
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    setup_test_environment()
    settings.ALLOWED_HOSTS = ["testserver"]
    call_command("migrate", verbosity=0)

    from tests.factories import api_key_for, member
    from tests.timelines.build import build_session

    user = member("bench", "bench", "admin")
    project = user.memberships.get().project
    key = api_key_for("bench", scopes=("read",))
    series = {
        f"R{k:02d}": [max(0.0, 1.0 - 0.002 * i * (k % 3)) for i in range(args.events)]
        for k in range(args.rules)
    }
    t0 = time.perf_counter()
    session, _ = build_session(project, series, external_id="bench-session")
    print(
        f"built {args.events} events x {args.rules} rules = {args.events * args.rules} outcomes in {time.perf_counter() - t0:.2f}s"
    )

    client = Client()
    client.force_login(user)
    cases = [
        ("page /sessions/<pk>/", lambda: client.get(f"/sessions/{session.pk}/")),
        (
            "htmx partial ?rules_page=2",
            lambda: client.get(f"/sessions/{session.pk}/?rules_page=2", HTTP_HX_REQUEST="true"),
        ),
        (
            "JSON /api/v1/sessions/<id>/timeline",
            lambda: client.get("/api/v1/sessions/bench-session/timeline", HTTP_AUTHORIZATION=f"Bearer {key}"),
        ),
    ]
    for name, fn in cases:
        fn()  # warm up (template loading, url resolver)
        times, cpu = [], []
        for _ in range(args.repeat):
            with CaptureQueriesContext(connection) as q:
                t, c = time.perf_counter(), time.process_time()
                r = fn()
                times.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
            assert r.status_code == 200, r.status_code
        print(
            f"{name:38s} wall median {statistics.median(times) * 1000:7.1f} ms (min {min(times) * 1000:6.1f})  "
            f"cpu median {statistics.median(cpu) * 1000:7.1f} ms  {len(q.captured_queries)} queries  {len(r.content) / 1024:.0f} KiB"
        )

    from ctxaudit.timelines.selectors import session_timeline

    session = type(session).objects.select_related("project").get(pk=session.pk)
    times, cpu = [], []
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        session_timeline(session)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    print(
        f"{'selector session_timeline()':38s} wall median {statistics.median(times) * 1000:7.1f} ms (min {min(times) * 1000:6.1f})  "
        f"cpu median {statistics.median(cpu) * 1000:7.1f} ms"
    )
    from ctxaudit.ingest.models import Event
    from ctxaudit.timelines.services import session_decay_sync

    last = Event.objects.filter(session=session).order_by("-sequence").values_list("pk", flat=True).first()
    session_decay_sync(event_id=last)  # first run writes the findings
    times, cpu = [], []
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        session_decay_sync(event_id=last)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    print(
        f"{'decay sync after a check (no change)':38s} wall median {statistics.median(times) * 1000:7.1f} ms (min {min(times) * 1000:6.1f})  "
        f"cpu median {statistics.median(cpu) * 1000:7.1f} ms"
    )
    print(
        f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (other work on the machine inflates wall times)"
    )


if __name__ == "__main__":
    main()
