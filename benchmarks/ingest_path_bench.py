"""POST → checked on the embedded default, as a multiple of tiktoken's own time (issue 13).

    DEBUG=true python benchmarks/ingest_path_bench.py [--tokens 200000] [--rules 50] [--events 4]

The event is engine_bench's "mixed" pair (≈ --tokens cl100k tokens on each side, --rules rules,
a third kept, a third weakened, a third dropped). Every POST calls the WSGI application
(ctxaudit.wsgi, as gunicorn or runserver do) with `POST /api/v1/events` for a project with PII
redaction on (the default) and no broker, so the check runs in the request: the answer comes back
when the event is `checked` (asserted). The clock stops when the answer's body is read; the
alert evaluation that follows the answer (when the server closes the response) is timed apart.
(Until 2 Dec 04:00 UTC this went through Django's test client, which closes the response before
it returns: the alerts were counted as part of the wait, as they then were.) The events of
one run share a session (sequence 1, 2, …), so each check also reads the rules in force from the
earlier events, as a real session does.

T_tok is tiktoken (cl100k_base) encoding every message of both contexts — what the engine's
token count costs and cannot go below. It is measured right before each POST in the same
process, before and after each POST (their mean is the reference), so a ratio compares two
figures taken under the same machine load (2 shared cores). Both wall-clock and CPU time of
this process are reported (CPU time is what a core gave us, less sensitive to the other
processes on the machine); the median of the per-event ratios is the figure, their spread says
how noisy the run was.

"first check": a fresh Python process starts the app as a server or worker would (ctxaudit.wsgi,
which warms the engine), then POSTs one event (rules this process never saw) to a new project, and
then a warm one: the same rules, contexts of the same sizes with other texts, to another new
project (so both open their alerts, and no per-text memo of the first serves the second); first ÷
second is the cold-start cost that is left. (Until 2 Dec 00:10 UTC the second event was the first
one again, in another session of the same project: its texts were memoised and its alerts open.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _setup(db_url: str, query_log: bool = False) -> None:
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DATABASE_URL"] = db_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ctxaudit.settings")
    os.environ.pop("CELERY_BROKER_URL", None)
    from django.conf import settings

    import ctxaudit.wsgi  # noqa: F401 - what a server process imports first (engine warm-up included)

    # DEBUG=true is only for the development SECRET_KEY (and no HTTPS redirect): as deployed,
    # Django keeps no log of every query. With DEBUG on it does, and on SQLite that log quotes
    # each parameter through the database (2 MB of contexts per event: ~40 ms), so it is off
    # unless --query-log asks for it (figures before 1 Dec 12:30 UTC had it on).
    settings.DEBUG = query_log


_PAIRS: dict[tuple[int, int, int], object] = {}


def _body(
    tokens: int, n_rules: int, seed_rules: int, session: str, seq: int, texts_seed: int = 0
) -> tuple[bytes, list[list[str]]]:
    """(request body, message texts of both sides for T_tok). texts_seed: other contexts of the
    same sizes (engine_bench.make_event's seed)."""
    import random

    import engine_bench

    from ctxaudit.engine.formats import context_to_json

    if (tokens, n_rules, texts_seed) not in _PAIRS:
        _PAIRS[tokens, n_rules, texts_seed] = engine_bench.make_event("mixed", tokens, n_rules, texts_seed)[0]
    pair = _PAIRS[tokens, n_rules, texts_seed]
    # Other rule texts per process/seed, so the "first check" really meets rules it never compiled.
    rules = engine_bench.make_rules(n_rules, random.Random(seed_rules))
    body = {
        "session_id": session,
        "sequence": seq,
        "strategy": "summary",
        "before": context_to_json(pair.before),
        "after": context_to_json(pair.after),
        "rules": [{"id": r.id, "text": r.text} for r in rules],
    }
    texts = [[m.content for m in pair.before.messages], [m.content for m in pair.after.messages]]
    return json.dumps(body, ensure_ascii=False).encode(), texts


def _t_tok(texts: list[list[str]]) -> tuple[float, float]:
    """(wall, CPU) seconds of encoding every message once."""
    from ctxaudit.engine.tokens import default_counter

    counter = default_counter()
    t0, c0 = time.perf_counter(), time.process_time()
    for side in texts:
        for t in side:
            counter.count(t)
    return time.perf_counter() - t0, time.process_time() - c0


# (wall, CPU) seconds spent inside engine.run_checks during the current POST: the engine's own
# share, so what the path adds around it can be reported apart from it.
_ENGINE = [0.0, 0.0]


def _time_engine() -> None:
    """Wrap the run_checks that audits.services calls with a timer (same function, same result)."""
    import ctxaudit.audits.services as audit_services

    run_checks = audit_services.run_checks

    def timed(*a, **kw):  # type: ignore[no-untyped-def]
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return run_checks(*a, **kw)
        finally:
            _ENGINE[0] += time.perf_counter() - t0
            _ENGINE[1] += time.process_time() - c0

    audit_services.run_checks = timed  # type: ignore[assignment]


# Seconds of the work that followed the answer (alerts: core/after_response.py) in the last POST.
_AFTER = [0.0]


def _poster(key: str):  # type: ignore[no-untyped-def]
    """A POST as a WSGI server makes it (gunicorn, runserver): the application is called and its
    body read, which is when the client has its answer (the clock stops), then the response is
    closed, which runs the work that follows the answer (timed apart, in _AFTER). Django's test
    client closes the response before it returns, so it would count that work as waiting."""
    import io

    from ctxaudit.ingest.models import Event
    from ctxaudit.wsgi import application

    _time_engine()

    def post(body: bytes) -> tuple[float, float, float, float]:
        """(wall, CPU, wall in run_checks, CPU in run_checks) seconds of one POST up to its
        answer; the event is checked when it answers (asserted)."""
        _ENGINE[:] = [0.0, 0.0]
        environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": "/api/v1/events",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "HTTP_HOST": "127.0.0.1",
            "wsgi.input": io.BytesIO(body),
            "wsgi.url_scheme": "http",
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(body)),
            "HTTP_AUTHORIZATION": f"Bearer {key}",
        }
        status: list[str] = []
        t0, c0 = time.perf_counter(), time.process_time()
        result = application(environ, lambda s, h, exc_info=None: status.append(s))
        answer = b"".join(result)
        dt = time.perf_counter() - t0, time.process_time() - c0, _ENGINE[0], _ENGINE[1]
        t1 = time.perf_counter()
        result.close()  # type: ignore[attr-defined]
        _AFTER[0] = time.perf_counter() - t1
        assert status and status[0].startswith("202"), (status, answer[:300])
        ev = Event.objects.get(pk=json.loads(answer)["id"])
        assert ev.status == Event.Status.CHECKED, (ev.status, ev.error)
        return dt

    return post


def _fresh_key() -> str:
    """An API key of a new project: an event there opens its alerts (none are open yet)."""
    from ctxaudit.projects.services import api_key_create

    _, key = api_key_create(project_name=f"path-bench-first-{time.monotonic_ns()}")
    return key


def child_first(args: argparse.Namespace) -> None:
    """In a fresh process: one cold POST, then a warm one; prints a JSON line."""
    t0 = time.perf_counter()
    _setup(args.db, args.query_log)
    startup = time.perf_counter() - t0
    body1, texts = _body(args.tokens, args.rules, 1000 + os.getpid(), f"first-{os.getpid()}", 1)
    # The warm event: the same rules (prepared now), but contexts of its own and a project of its
    # own, so it opens its alerts as the first did and no per-text memo of the first serves it.
    body2, _ = _body(args.tokens, args.rules, 1000 + os.getpid(), f"second-{os.getpid()}", 1, texts_seed=2)
    post = _poster(args.key)
    first = post(body1)
    tok = _t_tok(texts)
    second = _poster(args.key2)(body2)
    print(json.dumps({"startup": startup, "first": first, "second": second, "t_tok": tok}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=200_000)
    ap.add_argument("--rules", type=int, default=50)
    ap.add_argument("--events", type=int, default=4, help="warm POSTs in one session (default 4)")
    ap.add_argument("--first", type=int, default=2, help="fresh processes for the first-check figure")
    ap.add_argument(
        "--query-log", action="store_true", help="keep Django's DEBUG log of every query (not as deployed)"
    )
    ap.add_argument("--child-first", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--key", help=argparse.SUPPRESS)
    ap.add_argument("--key2", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_first:
        child_first(args)
        return

    tmp = tempfile.TemporaryDirectory()
    db = os.environ.get("DATABASE_URL") or f"sqlite:///{tmp.name}/bench.sqlite3"
    _setup(db, args.query_log)
    from django.conf import settings
    from django.core.management import call_command

    from ctxaudit.projects.services import api_key_create

    call_command("migrate", verbosity=0)
    _, key = api_key_create(project_name=f"path-bench-{os.getpid()}")
    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]

    post = _poster(key)
    warm_body, texts = _body(args.tokens, args.rules, 7, "warm-up", 1)
    post(warm_body)  # imports, first queries
    n_chars = sum(len(t) for side in texts for t in side)
    print(
        f"pair: {n_chars:,} characters, body {len(warm_body) / 2**20:.1f} MiB, {args.rules} rules; "
        f"database {engine}; PII redaction on; embedded default (check in the request); "
        f"Django query log {'on (--query-log)' if args.query_log else 'off, as deployed'}"
    )
    walls, cpus, afters = [], [], []
    for i in range(args.events):
        body, texts = _body(args.tokens, args.rules, 7, "session", i + 1)
        tok_a = _t_tok(texts)
        dt = post(body)
        afters.append(_AFTER[0])
        tok_b = _t_tok(texts)
        # T_tok before and after the POST, averaged: the reference sees the same machine load.
        walls.append((dt[0], (tok_a[0] + tok_b[0]) / 2, dt[2]))
        cpus.append((dt[1], (tok_a[1] + tok_b[1]) / 2, dt[3]))
    for label, rows in (("wall", walls), ("CPU", cpus)):
        ratios = [p / t for p, t, _ in rows]
        # What the path adds around the engine: (POST total - run_checks) / T_tok.
        around = [(p - e) / t for p, t, e in rows]
        print(
            f"warm POST→checked ({label}): median {statistics.median(p for p, _, _ in rows) * 1000:.0f} ms, "
            f"T_tok median {statistics.median(t for _, t, _ in rows) * 1000:.0f} ms → ratio median "
            f"{statistics.median(ratios):.2f}× (per event {', '.join(f'{r:.2f}' for r in ratios)}; goal ≤ 3×); "
            f"run_checks median {statistics.median(e for _, _, e in rows) * 1000:.0f} ms = "
            f"{statistics.median(e / t for _, t, e in rows):.2f}× T_tok; around it (total - run_checks) "
            f"median {statistics.median(around):.2f}× T_tok (per event {', '.join(f'{r:.2f}' for r in around)})"
        )
    print(
        f"after the answer (alerts, in the same thread; not waited for): median "
        f"{statistics.median(afters) * 1000:.0f} ms"
    )

    firsts = []
    for _ in range(args.first):
        out = subprocess.run(  # noqa: S603 - this script, fixed arguments
            [
                sys.executable,
                __file__,
                "--child-first",
                "--db",
                db,
                "--key",
                _fresh_key(),
                "--key2",
                _fresh_key(),
            ]
            + (["--query-log"] if args.query_log else [])
            + ["--tokens", str(args.tokens), "--rules", str(args.rules)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ},
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        firsts.append(r)
    if firsts:
        for label, k in (("wall", 0), ("CPU", 1)):
            rs = [r["first"][k] / r["second"][k] for r in firsts]
            print(
                f"first check in a fresh process ({label}): "
                + "; ".join(
                    f"startup {r['startup']:.2f} s, first {r['first'][k] * 1000:.0f} ms, second "
                    f"{r['second'][k] * 1000:.0f} ms ({r['first'][k] / r['t_tok'][k]:.2f}× / "
                    f"{r['second'][k] / r['t_tok'][k]:.2f}× T_tok)"
                    for r in firsts
                )
                + f" → first ÷ warm median {statistics.median(rs):.2f}× (goal ≤ 1.2×)"
            )
    print(
        f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
