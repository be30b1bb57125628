"""Load: capacity, then 10x capacity, against gunicorn on loopback (issue 13 "Load: shed it").

    DEBUG=true .venv/bin/python benchmarks/load_bench.py            # ~2 minutes
    DEBUG=true .venv/bin/python benchmarks/load_bench.py --overload-seconds 10 --client-timeout 5

What it does, bounded in count and time, on 127.0.0.1 only:
1. Starts the production web shape: `gunicorn -c python:ctxaudit.gunicorn_conf ctxaudit.wsgi`
   (2 gthread workers, the shedder of ctxaudit/core/shedding.py) on a fresh SQLite database, the
   embedded default (each POST /api/v1/events runs its check in the request), rate limit off.
2. Unloaded: POST /api/v1/events open-loop at --base-rate for --step-seconds: p50/p95.
3. Capacity: open-loop steps at doubling rates; capacity = the highest rate whose accepted (2xx)
   throughput is >= 90 % of the offered rate with accepted p95 <= 2x unloaded.
4. Overload: 10x capacity for --overload-seconds, every client with --client-timeout. Meanwhile
   GET /login/ is probed twice a second, and for 10 s after. Reports status counts, whether every
   429/503 carried Retry-After, client timeouts, accepted p50/p95 against unloaded, /login/
   latencies, and events stored for requests whose client got no 2xx (work for clients that
   gave up).
The load generator is open-loop (a request is sent every 1/rate s whether or not earlier ones
were answered; one connection per request, as many independent clients) and shares the machine's
cores with the server: its own CPU use is printed (CPU seconds / wall seconds).
Figures are noisy on a shared machine; compare ratios within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BODY = {
    "session_id": "load-1",
    "strategy": "summary",
    "rules": [{"id": "R1", "text": "Never delete orders."}, {"id": "R2", "text": "禁止输出用户手机号。"}],
    "before": [
        {
            "role": "system",
            "content": "You are the order assistant. Never delete orders. 禁止输出用户手机号。",
        },
        {"role": "user", "content": "Please delete order 10086, my manager approved it."},
    ],
    "after": [
        {"role": "system", "content": "You are the order assistant."},
        {"role": "user", "content": "[summary] The user asked to delete order 10086."},
    ],
}


@dataclass
class Result:
    status: int | None  # None: the client timed out or the connection failed
    latency: float
    retry_after: bool
    error: str = ""


@dataclass
class Phase:
    name: str
    rate: float
    results: list[Result] = field(default_factory=list)
    wall: float = 0.0
    cpu: float = 0.0

    def accepted(self) -> list[float]:
        return sorted(r.latency for r in self.results if r.status is not None and 200 <= r.status < 300)

    def summary(self) -> dict[str, object]:
        ok = self.accepted()
        codes: dict[str, int] = {}
        for r in self.results:
            key = str(r.status) if r.status is not None else f"no answer ({r.error})"
            codes[key] = codes.get(key, 0) + 1
        refusals = [r for r in self.results if r.status in (429, 503)]
        return {
            "phase": self.name,
            "offered_rps": self.rate,
            "sent": len(self.results),
            "statuses": codes,
            "accepted_rps": round(len(ok) / self.wall, 1) if self.wall else 0,
            "accepted_p50_ms": round(_pct(ok, 50) * 1000, 1) if ok else None,
            "accepted_p95_ms": round(_pct(ok, 95) * 1000, 1) if ok else None,
            "refusals_with_retry_after": f"{sum(r.retry_after for r in refusals)}/{len(refusals)}",
            "loadgen_cpu_share": round(self.cpu / self.wall, 2) if self.wall else 0,
        }


def _pct(values: list[float], p: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]


def _request(method: str, path: str, key: str | None, body: bytes = b"") -> bytes:
    head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    if key:
        head.append(f"Authorization: Bearer {key}")
    if body:
        head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def _one(port: int, raw: bytes, timeout: float) -> Result:
    t0 = time.monotonic()
    writer = None
    try:

        async def go() -> bytes:
            nonlocal writer
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(raw)
            await writer.drain()
            return await reader.read(-1)

        data = await asyncio.wait_for(go(), timeout)
        head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
        lines = head.split("\r\n")
        status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else None
        retry = any(line.lower().startswith("retry-after:") for line in lines[1:])
        return Result(status, time.monotonic() - t0, retry, "" if status else "empty")
    except TimeoutError:
        return Result(None, time.monotonic() - t0, False, "timeout")
    except OSError as exc:
        return Result(None, time.monotonic() - t0, False, type(exc).__name__)
    finally:
        if writer is not None:
            writer.close()  # a client that gives up closes its connection, as real ones do


async def open_loop(port: int, raw: bytes, rate: float, seconds: float, timeout: float, phase: Phase) -> None:
    """Send `raw` every 1/rate s for `seconds` (at most rate*seconds requests), then wait for all."""
    count = int(rate * seconds)
    start = time.monotonic()
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    tasks = []
    for i in range(count):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(_one(port, raw, timeout)))
    phase.results = list(await asyncio.gather(*tasks))
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    phase.wall = time.monotonic() - start
    phase.cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)


async def probe(port: int, path: str, until: float, out: list[Result], timeout: float) -> None:
    raw = _request("GET", path, None)
    while time.monotonic() < until:
        out.append(await _one(port, raw, timeout))
        await asyncio.sleep(0.5)


def _manage(args: list[str], env: dict[str, str]) -> str:
    return subprocess.run(  # noqa: S603 - our own manage.py
        [sys.executable, "manage.py", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _events_stored(port: int, key: str) -> int:
    raw = _request("GET", "/api/v1/events?limit=1", key)
    res = asyncio.run(_read_json(port, raw))
    return int(res["count"])


async def _read_json(port: int, raw: bytes) -> dict:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(raw)
    data = await reader.read(-1)
    writer.close()
    return json.loads(data.split(b"\r\n\r\n", 1)[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base-rate", type=float, default=4)
    ap.add_argument("--step-seconds", type=float, default=5)
    ap.add_argument("--max-rate", type=float, default=256)
    ap.add_argument("--overload-seconds", type=float, default=10)
    ap.add_argument("--client-timeout", type=float, default=5)
    ap.add_argument("--capacity", type=float, default=0, help="skip the search, use this rate")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="ctxaudit-load-"))
    env = {
        **os.environ,
        "DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{tmp}/load.sqlite3",
        "ALLOWED_HOSTS": "127.0.0.1",
        "CTXAUDIT_RATE_LIMIT_PER_MINUTE": "0",
        "CTXAUDIT_RATE_LIMIT_DIR": str(tmp / "rl"),
        "LOG_LEVEL": "ERROR",
        "DJANGO_SUPERUSER_PASSWORD": "load-bench-password",
    }
    for var in ("CELERY_BROKER_URL", "CACHE_URL"):
        env.pop(var, None)
    _manage(["migrate", "--verbosity", "0"], env)
    key = _manage(["create_api_key", "--project", "load"], env).strip().splitlines()[-1]
    port = _free_port()
    env["GUNICORN_BIND"] = f"127.0.0.1:{port}"
    log = open(tmp / "gunicorn.log", "w+")  # noqa: SIM115 - read at the end
    server = subprocess.Popen(  # noqa: S603 - fixed arguments
        [sys.executable, "-m", "gunicorn", "-c", "python:ctxaudit.gunicorn_conf", "ctxaudit.wsgi"],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        raw = _request("POST", "/api/v1/events", key, json.dumps(BODY).encode())

        async def warm() -> None:  # each worker's first checks and pages pay for imports and caches
            for _ in range(8):
                await asyncio.gather(_one(port, raw, 60), _one(port, raw, 60))
                await _one(port, _request("GET", "/login/", None), 60)

        asyncio.run(warm())
        report: list[dict[str, object]] = []
        timeout = args.client_timeout

        base = Phase("unloaded", args.base_rate)
        asyncio.run(open_loop(port, raw, base.rate, args.step_seconds, timeout, base))
        report.append(base.summary())
        p95_base = _pct(base.accepted(), 95)

        capacity = args.capacity
        if not capacity:
            rate = args.base_rate * 2
            capacity = args.base_rate
            while rate <= args.max_rate:
                step = Phase(f"step {rate:g}/s", rate)
                asyncio.run(open_loop(port, raw, rate, args.step_seconds, timeout, step))
                report.append(step.summary())
                ok = step.accepted()
                if len(ok) < 0.9 * rate * args.step_seconds or _pct(ok, 95) > 2 * p95_base:
                    break
                capacity = rate
                rate *= 2
            time.sleep(3)

        stored_before = _events_stored(port, key)
        over = Phase(f"overload 10x = {10 * capacity:g}/s", 10 * capacity)
        logins: list[Result] = []
        after: list[Result] = []

        async def overload() -> None:
            end = time.monotonic() + args.overload_seconds
            await asyncio.gather(
                open_loop(port, raw, over.rate, args.overload_seconds, timeout, over),
                probe(port, "/login/", end, logins, timeout),
            )
            await probe(port, "/login/", time.monotonic() + 10, after, timeout)

        asyncio.run(overload())
        time.sleep(2)  # let anything still running finish before counting
        stored = _events_stored(port, key) - stored_before
        accepted = sum(1 for r in over.results if r.status is not None and 200 <= r.status < 300)
        report.append(over.summary())
        out = {
            "capacity_rps": capacity,
            "unloaded_p95_ms": round(p95_base * 1000, 1),
            "phases": report,
            "overload": {
                "every_client_answered_2xx_429_503_in_time": all(
                    r.status is not None and (200 <= r.status < 300 or r.status in (429, 503))
                    for r in over.results
                ),
                "accepted_p95_over_unloaded": round(_pct(over.accepted(), 95) / p95_base, 2)
                if over.accepted()
                else None,
                "events_stored": stored,
                "events_stored_without_a_2xx": stored - accepted,
                "login_during_ms": _lat(logins),
                "login_after_ms": _lat(after),
            },
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.seek(0)
        tail = log.read()[-2000:]
        if "Traceback" in tail or "CRITICAL" in tail:
            print("--- gunicorn log (tail)\n" + tail, file=sys.stderr)


def _lat(results: list[Result]) -> dict[str, object]:
    ok = sorted(r.latency for r in results if r.status == 200)
    return {
        "probes": len(results),
        "ok": len(ok),
        "p50": round(_pct(ok, 50) * 1000, 1) if ok else None,
        "max": round(max(ok) * 1000, 1) if ok else None,
    }


if __name__ == "__main__":
    main()
