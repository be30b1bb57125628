"""Load: capacity, then 10x capacity, against gunicorn on loopback (issue 13 "Load: shed it").

    DEBUG=true .venv/bin/python benchmarks/load_bench.py                 # ~1.5 minutes
    DEBUG=true .venv/bin/python benchmarks/load_bench.py --rounds 5 --capacity 16

What it does, bounded in count and time, on 127.0.0.1 only:
1. Starts the production web shape: `gunicorn -c python:ctxaudit.gunicorn_conf ctxaudit.wsgi`
   (the gthread worker(s) and the shedder of ctxaudit/core/shedding.py) on a fresh SQLite
   database, the embedded default (each POST /api/v1/events runs its check in the request), rate
   limit off.
2. Unloaded: POST /api/v1/events open-loop at --base-rate (for --step-seconds in the capacity
   search, --unloaded-seconds in a round): p50/p95. Also
   "one at a time" (one client, the next request 50 ms after the previous answer): the time of a
   request that never meets another.
3. Capacity (unless --capacity): open-loop steps at doubling rates; capacity = the highest rate
   whose accepted (2xx) throughput is >= 90 % of the offered rate with accepted p95 <= 2x unloaded.
4. --rounds times, interleaved so that both sides of each ratio see the same machine: unloaded
   (as 2.), then 10x capacity for --overload-seconds, every client with --client-timeout, while
   GET /login/ is probed twice a second (and for 5 s after). Per round: status counts, whether
   every 429/503 carried Retry-After, client timeouts, accepted p95 / that round's unloaded p95,
   /login/ latencies, events stored for requests whose client got no 2xx. Then the median and
   the spread (min-max) over the rounds.
The load generator is open-loop (a request is sent every 1/rate s whether or not earlier ones
were answered; one connection per request, as many independent clients) and shares the machine's
cores with the server. Each phase reports where the CPU went, in cores (/proc/stat and
/proc/<pid>/stat): the whole machine, the gunicorn processes, the load generator, everything
else (the other users of a shared machine), and the load average at the start and end.
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
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _machine_cpu() -> float:
    """CPU seconds spent busy on all cores since boot (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / CLOCK_TICKS


def _tree_cpu(pid: int) -> float:
    """CPU seconds of process `pid` and its children (the gunicorn master and its workers)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == pid or int(fields[1]) == pid:
            total += int(fields[11]) + int(fields[12])  # utime + stime
    return total / CLOCK_TICKS


class Meter:
    """Where the CPU went during a phase, in cores (CPU seconds per wall second)."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.start = self._sample()

    def _sample(self) -> tuple[float, float, float, float]:
        use = resource.getrusage(resource.RUSAGE_SELF)
        return (time.monotonic(), _machine_cpu(), _tree_cpu(self.server_pid), use.ru_utime + use.ru_stime)

    def stop(self) -> dict[str, float]:
        end = self._sample()
        wall, machine, server, loadgen = (e - s for e, s in zip(end, self.start, strict=True))
        return {
            "machine": round(machine / wall, 2),
            "server": round(server / wall, 2),
            "loadgen": round(loadgen / wall, 2),
            "others": round(max(0.0, machine - server - loadgen) / wall, 2),
        }


@dataclass
class Phase:
    name: str
    rate: float
    results: list[Result] = field(default_factory=list)
    wall: float = 0.0
    cores: dict[str, float] = field(default_factory=dict)

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
            "cores": self.cores,
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
    """One request on its own connection. Raw non-blocking sockets rather than asyncio streams:
    the generator shares the cores with the server, and this costs ~330 us of CPU a request
    against ~460 us with streams (measured against a canned responder at 200/s)."""
    loop = asyncio.get_running_loop()
    t0 = time.monotonic()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        async with asyncio.timeout(timeout):
            await loop.sock_connect(sock, ("127.0.0.1", port))
            await loop.sock_sendall(sock, raw)
            chunks = []
            while chunk := await loop.sock_recv(sock, 65536):
                chunks.append(chunk)
        data = b"".join(chunks)
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
        sock.close()  # a client that gives up closes its connection, as real ones do


async def open_loop(port: int, raw: bytes, rate: float, seconds: float, timeout: float, phase: Phase) -> None:
    """Send `raw` every 1/rate s for `seconds` (at most rate*seconds requests), then wait for all."""
    count = int(rate * seconds)
    start = time.monotonic()
    tasks = []
    for i in range(count):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(_one(port, raw, timeout)))
    phase.results = list(await asyncio.gather(*tasks))
    phase.wall = time.monotonic() - start


async def one_at_a_time(port: int, raw: bytes, count: int, timeout: float, phase: Phase) -> None:
    """One client: `count` requests, each 50 ms after the previous answer (none meets another)."""
    start = time.monotonic()
    for _ in range(count):
        phase.results.append(await _one(port, raw, timeout))
        await asyncio.sleep(0.05)
    phase.wall = time.monotonic() - start


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
    ap.add_argument("--rounds", type=int, default=3, help="interleaved unloaded + overload rounds")
    ap.add_argument("--unloaded-seconds", type=float, default=10, help="unloaded phase of a round")
    args = ap.parse_args()
    load_start = os.getloadavg()

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
        timeout = args.client_timeout

        def run(phase: Phase, work: Coroutine[Any, Any, None]) -> Phase:
            meter = Meter(server.pid)
            asyncio.run(work)
            phase.cores = meter.stop()
            return phase

        def unloaded(name: str, seconds: float) -> Phase:
            base = Phase(name, args.base_rate)
            return run(base, open_loop(port, raw, base.rate, seconds, timeout, base))

        search: list[dict[str, object]] = []
        capacity = args.capacity
        if not capacity:
            base = unloaded("unloaded", args.step_seconds)
            search.append(base.summary())
            p95_base = _pct(base.accepted(), 95)
            rate = args.base_rate * 2
            capacity = args.base_rate
            while rate <= args.max_rate:
                step = Phase(f"step {rate:g}/s", rate)
                run(step, open_loop(port, raw, rate, args.step_seconds, timeout, step))
                search.append(step.summary())
                ok = step.accepted()
                if len(ok) < 0.9 * rate * args.step_seconds or _pct(ok, 95) > 2 * p95_base:
                    break
                capacity = rate
                rate *= 2
            time.sleep(3)

        rounds: list[dict[str, object]] = []
        for n in range(1, args.rounds + 1):
            single = Phase(f"round {n}: one at a time", 0)
            run(single, one_at_a_time(port, raw, 20, timeout, single))
            base = unloaded(f"round {n}: unloaded {args.base_rate:g}/s", args.unloaded_seconds)
            stored_before = _events_stored(port, key)
            over = Phase(f"round {n}: overload 10x = {10 * capacity:g}/s", 10 * capacity)
            logins: list[Result] = []
            after: list[Result] = []

            async def overload(over: Phase = over, logins: list[Result] = logins) -> None:
                end = time.monotonic() + args.overload_seconds
                await asyncio.gather(
                    open_loop(port, raw, over.rate, args.overload_seconds, timeout, over),
                    probe(port, "/login/", end, logins, timeout),
                )

            run(over, overload())
            asyncio.run(probe(port, "/login/", time.monotonic() + 5, after, timeout))
            stored = _events_stored(port, key) - stored_before  # the probe gave stragglers 5 s
            accepted = over.accepted()
            rounds.append(
                {
                    "phases": [single.summary(), base.summary(), over.summary()],
                    "every_client_answered_2xx_429_503_in_time": all(
                        r.status is not None and (200 <= r.status < 300 or r.status in (429, 503))
                        for r in over.results
                    ),
                    "accepted_p95_over_unloaded": _ratio(accepted, base.accepted()),
                    "accepted_p95_over_one_at_a_time": _ratio(accepted, single.accepted()),
                    "events_stored": stored,
                    "events_stored_without_a_2xx": stored - len(accepted),
                    "login_during_ms": _lat(logins),
                    "login_after_ms": _lat(after),
                }
            )

        def spread(key: str) -> dict[str, float | None]:
            values = [float(v) for r in rounds if isinstance(v := r[key], int | float)]
            if not values:
                return {"median": None, "min": None, "max": None}
            return {"median": statistics.median(values), "min": min(values), "max": max(values)}

        out = {
            "capacity_rps": capacity,
            "capacity_search": search,
            "rounds": rounds,
            "over_rounds": {
                "accepted_p95_over_unloaded": spread("accepted_p95_over_unloaded"),
                "accepted_p95_over_one_at_a_time": spread("accepted_p95_over_one_at_a_time"),
                "every_client_answered_2xx_429_503_in_time": all(
                    r["every_client_answered_2xx_429_503_in_time"] for r in rounds
                ),
                "events_stored_without_a_2xx": sum(
                    int(str(r["events_stored_without_a_2xx"])) for r in rounds
                ),
            },
            "load_average_start_end": [round(load_start[0], 2), round(os.getloadavg()[0], 2)],
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


def _ratio(loaded: list[float], reference: list[float]) -> float | None:
    """Accepted p95 under load / the reference p95 (None when either has no accepted request)."""
    if not loaded or not reference:
        return None
    return round(_pct(loaded, 95) / _pct(reference, 95), 2)


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
