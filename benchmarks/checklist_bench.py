"""The checklist page against its event page, for events up to the 8 MiB body limit (issue 13).

    DATABASE_URL=postgres://… DEBUG=true python benchmarks/checklist_bench.py [--repeat 5] [--only small,275k]

Four events, made once through the ingest service and checked by the real engine (embedded
default), in a project "checklist-bench", reused by later runs:
  small   a 6-message context compressed to a summary (a few KB)
  275k    an agent session of ~610 messages with tool output (~275 KB body), compressed to a
          summary and its last 30 % of messages
  828k    the same at ~1,860 messages (~828 KB)
  many    65,000 short messages a side (~7.2 MiB body, under the 8 MiB limit), every 10th edited after
A logged-in member asks, interleaved (same load), for the event page `/events/<id>/`, the
checklist `/events/<id>/checklist/`, the checklist's last line-diff page (`?diff_page=<last>`) and
the event page's last `?full=1` page. Printed per event: body size, the medians and p95 of each
page, and each page's ratio of medians to the event page (goal ≤ 2× for the checklist). Timings
on a shared 2-core machine are noisy; the ratios are of pages measured in the same loop.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RULES = (
    "Never delete customer data without a second confirmation from an administrator.",
    "Always answer in the customer's language.",
    "Refunds above 500 EUR must be approved by a supervisor.",
    "Do not reveal internal ticket numbers to customers.",
)
MANY = 65_000  # messages a side of the "many" event: ~7.2 MiB of JSON, under the 8 MiB limit
WORDS = [
    "order",
    "customer",
    "refund",
    "shipping",
    "address",
    "payment",
    "status",
    "invoice",
    "warehouse",
    "ticket",
    "record",
    "update",
]


def _setup() -> None:
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ctxaudit.settings")
    import django

    django.setup()


def _text(rnd: random.Random, words: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(words))


def _session(rnd: random.Random, turns: int) -> list[dict[str, Any]]:
    """A system message with the rules, then user / assistant / tool-output turns (~900 B each)."""
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a support agent.\n" + "\n".join(RULES)}
    ]
    for i in range(turns):
        msgs.append({"role": "user", "content": f"Please check order {10000 + i}: " + _text(rnd, 12)})
        msgs.append({"role": "assistant", "content": "Looking it up. " + _text(rnd, 10)})
        lines = [json.dumps({"order": 10000 + i, "line": k, "status": rnd.choice(WORDS)}) for k in range(14)]
        msgs.append({"role": "tool", "content": "\n".join(lines)})
    return msgs


def _bodies() -> dict[str, dict[str, Any]]:
    rnd = random.Random(13)
    out: dict[str, dict[str, Any]] = {}
    small_before = _session(rnd, 2)[:6]
    out["small"] = {
        "before": small_before,
        "after": [small_before[0], {"role": "user", "content": "Summary: two orders checked."}],
    }
    for name, kb in (("275k", 275), ("828k", 828)):
        # Turns of ~1.2 KB of JSON each, the after-context a tenth of the before (summary + tail).
        turns = kb * 1024 * 10 // 11 // 1120
        before = _session(rnd, turns)
        summary = {"role": "user", "content": "Summary of earlier work: " + _text(rnd, 120)}
        # The system message loses its first rule: the checks have something to find.
        system = {"role": "system", "content": "You are a support agent.\n" + "\n".join(RULES[1:])}
        tail = before[-(3 * turns // 10) :]
        out[name] = {"before": before, "after": [system, summary, *tail]}
    many_before = [{"role": "system", "content": "\n".join(RULES)}] + [
        {"role": "user" if i % 2 else "assistant", "content": f"message {i} {rnd.choice(WORDS)}"}
        for i in range(MANY)
    ]
    many_after = [
        m if i % 10 else {**m, "content": m["content"] + " (edited)"} for i, m in enumerate(many_before)
    ]
    out["many"] = {"before": many_before, "after": many_after}
    return out


def _make(project: Any, name: str, body: dict[str, Any]) -> int:
    """The event of `name` in the project (ingested and checked once), its id."""
    from django.test import TestCase

    from ctxaudit.ingest.models import Event
    from ctxaudit.ingest.schemas import EventIn
    from ctxaudit.ingest.services import event_ingest

    sid = f"checklist-{name}-{len(json.dumps(body))}"  # another body, another event
    found = Event.objects.filter(project=project, session__external_id=sid).first()
    if found is not None:
        return found.pk
    spec = EventIn.model_validate({"session_id": sid, "strategy": "summary", **body})
    t0 = time.perf_counter()
    with TestCase.captureOnCommitCallbacks(execute=True):
        ev, _ = event_ingest(project=project, spec=spec)
    ev.refresh_from_db()
    print(
        f"made {name}: event {ev.pk}, status {ev.status}, verdict {ev.verdict} in {time.perf_counter() - t0:.0f} s"
    )
    return ev.pk


def _last_page(body: str, pattern: str) -> int:
    pages = [int(x) for x in re.findall(pattern, body)]
    return max(pages) if pages else 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated event names (small,275k,828k,many)")
    args = ap.parse_args()
    _setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from ctxaudit.projects.models import Membership, Project

    settings.ALLOWED_HOSTS = ["testserver"]
    call_command("migrate", verbosity=0)
    project, _ = Project.objects.get_or_create(name="checklist-bench")
    user = get_user_model().objects.filter(username="checklist-bench").first()
    if user is None:
        user = get_user_model().objects.create_user(username="checklist-bench", password="checklist-bench-pw")  # noqa: S106 - a local benchmark user
        Membership.objects.create(user=user, project=project, role="admin")
    from django.test import Client

    client = Client()
    assert client.login(username="checklist-bench", password="checklist-bench-pw")  # noqa: S106 - the benchmark user
    wanted = [x for x in args.only.split(",") if x]
    bodies = _bodies()
    print(
        f"{args.repeat} interleaved repeats; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    for name, body in bodies.items():
        if wanted and name not in wanted:
            continue
        size = len(json.dumps(body).encode())
        assert size <= 8 * 1024 * 1024, f"{name}: {size:,} bytes is over the body limit"
        pk = _make(project, name, body)
        event_url, checklist_url = f"/events/{pk}/", f"/events/{pk}/checklist/"
        first = client.get(checklist_url).content.decode()
        diff_last = _last_page(first, r"lines page \d+ of (\d+)")
        full = client.get(event_url + "?full=1").content.decode()
        full_last = _last_page(full, r"messages page \d+ of (\d+)")
        urls = {
            "event page": event_url,
            "checklist": checklist_url,
            f"checklist diff page {diff_last}": f"{checklist_url}?diff_page={diff_last}",
            f"event ?full=1 page {full_last}": f"{event_url}?full=1&page={full_last}",
        }
        times: dict[str, list[float]] = {k: [] for k in urls}
        sizes: dict[str, int] = {}
        for _ in range(args.repeat):
            for label, url in urls.items():
                t0 = time.perf_counter()
                r = client.get(url)
                times[label].append(time.perf_counter() - t0)
                assert r.status_code == 200, (url, r.status_code)
                sizes[label] = len(r.content)
        base = statistics.median(times["event page"])
        print(
            f"{name}: body {size / 1024:,.0f} KB, {len(body['before']):,} → {len(body['after']):,} messages"
        )
        for label, xs in times.items():
            xs.sort()
            p95 = xs[max(0, round(0.95 * len(xs)) - 1)]
            print(
                f"  {label:28s} p50 {statistics.median(xs) * 1000:8.1f} ms p95 {p95 * 1000:8.1f} ms | "
                f"{statistics.median(xs) / base:5.2f}× the event page | HTML {sizes[label] / 1024:,.0f} KB"
            )
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
