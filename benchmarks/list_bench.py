"""The event list (`/`) at 100,000 events against a keyset query of the same rows (issue 13).

    DATABASE_URL=postgres://… DEBUG=true python benchmarks/list_bench.py [--events 100000] [--repeat 15]

PostgreSQL (DATABASE_URL; the figures are meant for it, SQLite works too). The events are made
once by a bulk path (bulk_create of events, sessions and two findings per event, no API, no
checks) in a project "list-bench" and reused by later runs. A logged-in member of that project
asks, through Django's test client (or, with `--server URL`, a running server over HTTP: one
connection per request, as a browser's first; then the page's SQL is not counted), for:
  first     `/`                      the home page
  deep      `/?after=<row 50,000>`   a keyset page half-way down (what "older ›" links carry)
  offset    `/?page=1000`            the same depth by an old-style page number (OFFSET)
  filtered  `/?verdict=fail&severity=high`
  kind      `/?kind=rule_weakened`
  session   `/?session=<one session's id>` (a narrow session filter)
  sessions* `/?session=bench` (a session filter every session matches)
  session~  `/?session=bench-0-1` (1,111 of the 5,001 sessions, their events far down the list)
and, interleaved with each request (same load), two references: one keyset SQL query of that
page's 50 rows, `WHERE project_id = … AND (occurred_at, id) < (…) ORDER BY occurred_at DESC,
id DESC LIMIT 50` through a raw cursor, and the same keyset read the usual Django way, as 50
Event models (`list(Event.objects.filter(keyset, project_id=…).order_by(…)[:50])`; the issue's
259× at 723 ms puts its reference at 2.8 ms, which is what this read costs, not the raw one). For
`filtered` and `kind` both references read those pages' rows: the same query with the filter's
conditions (the finding filters as an EXISTS); the session pages are measured against the
unfiltered read. Then the session list (issue 13), `/sessions/`, its page 50 and `?q=` part of
a session id, against the keyset query of 50 sessions by their latest event
(`ORDER BY last_event_at DESC NULLS LAST, id DESC LIMIT 50`). Printed per page: p50/p95 of the whole request, of the page's SQL alone, the
reference's p50/p95, the ratios (request p50 / reference p50, request p95 / reference p95, and
the page's SQL p50 / reference p50), and the number of queries (the same for every page without a
session filter; a session filter adds one, its matching sessions). Timings on a shared machine are
noisy: the reference is measured in the same loop so that the ratios are comparable.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import re
import statistics
import sys
import time
import urllib.parse
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _setup() -> None:
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ctxaudit.settings")
    import django

    django.setup()


def _populate(n: int) -> tuple[int, int]:
    """(project id, user id); creates the events when the project has fewer than n."""
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone

    from ctxaudit.audits.models import Finding
    from ctxaudit.ingest.models import Event, Session
    from ctxaudit.projects.models import Membership, Project

    project, _ = Project.objects.get_or_create(name="list-bench")
    user = get_user_model().objects.filter(username="list-bench").first()
    if user is None:
        user = get_user_model().objects.create_user(username="list-bench", password="list-bench-pw")  # noqa: S106 - a local benchmark user
        Membership.objects.create(user=user, project=project, role="admin")
    have = Event.objects.filter(project=project).count()
    if have >= n:
        return project.pk, user.pk
    rnd = random.Random(13)
    t0 = time.perf_counter()
    start = timezone.now() - timedelta(days=60)
    sessions = Session.objects.bulk_create(
        [Session(project=project, external_id=f"bench-{have}-{i}") for i in range((n - have) // 20 + 1)]
    )
    batch = 5000
    kinds = [("rule_missing", "high"), ("rule_weakened", "medium"), ("summary_unmarked", "low")]
    for lo in range(have, n, batch):
        with transaction.atomic():
            events = Event.objects.bulk_create(
                [
                    Event(
                        project=project,
                        session=sessions[(i - have) // 20],
                        sequence=(i - have) % 20,
                        occurred_at=start + timedelta(seconds=50 * i + rnd.randint(0, 40)),
                        strategy=rnd.choice(Event.STRATEGIES),
                        before=[{"role": "user", "content": f"order {i}"}],
                        after=[{"role": "user", "content": "summary"}],
                        status="checked",
                        verdict="fail" if i % 3 == 0 else "pass",
                        tokens_before=20000,
                        tokens_after=2000,
                    )
                    for i in range(lo, min(n, lo + batch))
                ],
                batch_size=1000,
            )
            Finding.objects.bulk_create(
                [
                    Finding(event=e, kind=k, severity=s, rule_id="R1", message="m", evidence=[])
                    for e in events
                    for k, s in rnd.sample(kinds, 2)
                ],
                batch_size=2000,
            )
    print(f"made {n - have:,} events (and {2 * (n - have):,} findings) in {time.perf_counter() - t0:.0f} s")
    return project.pk, user.pk


class _HttpClient:
    """Just enough of Django's test Client over real HTTP: log in through the login form, then
    GET with the session cookie (one connection per request, as a browser's first request).
    X-Forwarded-Proto says https so a server with DEBUG off serves plain HTTP on loopback."""

    def __init__(self, base: str) -> None:
        u = urllib.parse.urlsplit(base)
        self.host, self.port, self.cookies = u.hostname or "127.0.0.1", u.port or 80, {}
        self.origin = f"https://{u.netloc}"

    def _send(
        self, method: str, url: str, body: str | None = None, headers: dict[str, str] | None = None
    ) -> Any:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        conn.request(
            method,
            url,
            body=body,
            headers={"X-Forwarded-Proto": "https", "Cookie": cookie, **(headers or {})},
        )
        r = conn.getresponse()
        r.content = r.read()
        r.status_code = r.status
        for name, value in r.getheaders():
            if name.lower() == "set-cookie":
                k, _, v = value.split(";")[0].partition("=")
                self.cookies[k] = v
        conn.close()
        return r

    def login(self, username: str, password: str) -> bool:
        page = self._send("GET", "/login/").content.decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        form = {
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": token.group(1) if token else "",
        }
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Referer": f"{self.origin}/login/"}
        self._send("POST", "/login/", urllib.parse.urlencode(form), headers)
        return "sessionid" in self.cookies

    def get(self, url: str) -> Any:
        return self._send("GET", url)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument(
        "--server",
        help="a running server's base URL (gunicorn on the same DATABASE_URL): requests go over HTTP, "
        "the page's own SQL and queries are not counted",
    )
    args = ap.parse_args()
    _setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Exists, OuterRef, Q
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from ctxaudit.audits.models import Finding
    from ctxaudit.ingest.models import Event
    from ctxaudit.ingest.selectors import cursor_of

    settings.ALLOWED_HOSTS = ["testserver"]
    call_command("migrate", verbosity=0)
    project_id, _ = _populate(args.events)
    with connection.cursor() as c:
        c.execute("ANALYZE") if connection.vendor == "postgresql" else None
    client: Any = _HttpClient(args.server) if args.server else Client()
    assert client.login(username="list-bench", password="list-bench-pw")  # noqa: S106 - the benchmark user

    ordered = Event.objects.filter(project_id=project_id).order_by("-occurred_at", "-id")
    total = ordered.count()
    mid = ordered.only("id", "occurred_at", "session__external_id").select_related("session")[total // 2]
    # A filtered page's reference reads the same 50 rows: the keyset query with the filter's
    # conditions (the finding filters as the EXISTS any such query needs), raw and as models.
    finding = Finding._meta.db_table
    filters: dict[str, tuple[str, Any]] = {
        "filtered": (
            f" AND verdict = 'fail' AND EXISTS (SELECT 1 FROM {finding} f WHERE f.event_id = ingest_event.id "  # noqa: S608 - constants
            "AND f.severity IN ('high', 'critical'))",
            Q(verdict="fail")
            & Q(Exists(Finding.objects.filter(event=OuterRef("pk"), severity__in=["high", "critical"]))),
        ),
        "kind": (
            f" AND EXISTS (SELECT 1 FROM {finding} f WHERE f.event_id = ingest_event.id AND f.kind = 'rule_weakened')",  # noqa: S608 - constants
            Q(Exists(Finding.objects.filter(event=OuterRef("pk"), kind="rule_weakened"))),
        ),
    }
    pages = {
        "first": ("/", None),
        "deep": (f"/?after={cursor_of(mid)}", mid),
        "offset": (f"/?page={total // 2 // 50}", None),
        "filtered": ("/?verdict=fail&severity=high", None),
        "kind": ("/?kind=rule_weakened", None),
        "session": (f"/?session={mid.session.external_id}", None),
        "sessions*": ("/?session=bench", None),
        "session~": ("/?session=bench-0-1", None),
    }
    session_pages = {
        "/sessions/": "/sessions/",
        "/sessions/ deep": "/sessions/?page=50",
        "/sessions/ q": f"/sessions/?q={mid.session.external_id[:-1]}",
    }
    session_ref_sql = (
        "SELECT id, external_id, project_id, last_event_at FROM ingest_session WHERE project_id = %s "
        "ORDER BY last_event_at DESC NULLS LAST, id DESC LIMIT 50"
    )

    def session_reference(_row: object, _name: str = "") -> float:
        t0 = time.perf_counter()
        with connection.cursor() as c:
            c.execute(session_ref_sql, [project_id])
            rows = c.fetchall()
        dt = time.perf_counter() - t0
        assert len(rows) == 50
        return dt

    ref_sql = (
        "SELECT id, occurred_at, session_id, sequence, strategy, verdict, status, tokens_before, tokens_after "
        "FROM ingest_event WHERE project_id = %s AND (occurred_at, id) < (%s, %s){} "
        "ORDER BY occurred_at DESC, id DESC LIMIT 50"
    )
    far = ordered.only("id", "occurred_at").first()

    def reference(cursor_row: Event | None, name: str = "") -> float:
        row = cursor_row or far
        at, pk = (row.occurred_at, row.pk + 1) if cursor_row is None else (row.occurred_at, row.pk)
        sql = ref_sql.format(filters[name][0] if name in filters else "")
        t0 = time.perf_counter()
        with connection.cursor() as c:
            c.execute(sql, [project_id, at, pk])
            rows = c.fetchall()
        dt = time.perf_counter() - t0
        assert len(rows) == 50
        return dt

    def orm_reference(cursor_row: Event | None, name: str = "") -> float:
        row = cursor_row or far
        at, pk = (row.occurred_at, row.pk + 1) if cursor_row is None else (row.occurred_at, row.pk)
        t0 = time.perf_counter()
        keyset = Q(occurred_at__lt=at) | Q(occurred_at=at, id__lt=pk)
        # occurred_at <= at as the list writes it: without, PostgreSQL does not range-scan the index.
        ordered = Event.objects.filter(keyset, project_id=project_id, occurred_at__lte=at)
        if name in filters:
            ordered = ordered.filter(filters[name][1])
        rows = list(ordered.order_by("-occurred_at", "-id")[:50])
        dt = time.perf_counter() - t0
        assert len(rows) == 50
        return dt

    print(
        f"{total:,} events in the project; database {connection.vendor}; {args.repeat} interleaved repeats; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    runs = [(name, url, reference, row) for name, (url, row) in pages.items()]
    runs += [(name, url, session_reference, None) for name, url in session_pages.items()]
    for name, url, ref_of, row in runs:
        client.get(url)  # warm
        req, sql, ref, orm = [], [], [], []
        nq = set()
        for _ in range(args.repeat):
            ref.append(ref_of(row, name))
            if ref_of is reference:
                orm.append(orm_reference(row, name))
            with CaptureQueriesContext(connection) as q:
                t0 = time.perf_counter()
                r = client.get(url)
                req.append(time.perf_counter() - t0)
            assert r.status_code == 200, r.status_code
            sql.append(sum(float(x["time"]) for x in q.captured_queries))
            nq.add(len(q.captured_queries))
        req.sort()
        sql.sort()
        ref.sort()
        p95 = max(0, round(0.95 * len(req)) - 1)
        m_ref = statistics.median(ref)
        own_sql = "" if args.server else f"its SQL p50 {statistics.median(sql) * 1000:5.1f} ms | "
        own_ratio = (
            "" if args.server else f", SQL {statistics.median(sql) / m_ref:4.1f}× | queries {sorted(nq)}"
        )
        print(
            f"{name:15s} request p50 {statistics.median(req) * 1000:6.1f} ms p95 {req[p95] * 1000:6.1f} ms | "
            f"{own_sql}keyset reference p50 {m_ref * 1000:4.2f} ms p95 {ref[p95] * 1000:4.2f} ms | "
            f"ratio p50 {statistics.median(req) / m_ref:5.1f}×, p95 {req[p95] / ref[p95]:5.1f}×{own_ratio}"
        )
        if orm:
            orm.sort()
            print(
                f"{'':15s} ORM reference (50 Event models, the same keyset) p50 {statistics.median(orm) * 1000:4.2f} ms "
                f"p95 {orm[p95] * 1000:4.2f} ms | ratio p50 {statistics.median(req) / statistics.median(orm):4.1f}×, "
                f"p95 {req[p95] / orm[p95]:4.1f}×"
            )
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
