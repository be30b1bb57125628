"""Where per-key rate-limit counters live, and what happens when that place is down.

Two stores, chosen by `counter_store()`:

- **cache** — Django's cache, when CACHE_URL names a shared one (Redis, memcached, a database
  cache): one count for every server process on every host.
- **file** — the default (CACHE_URL unset, i.e. a process-local cache): one small file per key and
  minute under CTXAUDIT_RATE_LIMIT_DIR, incremented under `fcntl.flock`, so every gunicorn worker
  on this host shares the count. Several hosts without a shared cache each count on their own
  (README "Configuration" says so).

A store that fails (Redis stopped, disk full) must never turn an API request into a 500 or lose
an event: `counter_incr` answers None ("not counted"), the caller lets the request through, the
failure is logged and counted (`failures()`), and the store is skipped for BREAKER_SECONDS so a
dead Redis costs one connection attempt per process per interval, not one per request.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import tempfile
import threading
import time
from pathlib import Path

from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)

# After a store error, skip it this long (fail open without paying a timeout per request).
BREAKER_SECONDS = 5.0

_lock = threading.Lock()
_state = {"failures": 0, "skipped": 0, "open_until": 0.0}


def failures() -> dict[str, int]:
    """{"failures": store errors, "skipped": requests let through while the store was skipped},
    counted since this process started."""
    with _lock:
        return {"failures": int(_state["failures"]), "skipped": int(_state["skipped"])}


def reset() -> None:
    """Forget failures and close the breaker (tests; a restarted store)."""
    with _lock:
        _state.update(failures=0, skipped=0, open_until=0.0)


def counter_store() -> str:
    """ "cache" when the default cache is shared between processes, else "file"."""
    backend = settings.CACHES["default"]["BACKEND"]
    return "file" if backend.endswith(("locmem.LocMemCache", "dummy.DummyCache")) else "cache"


def rate_limit_dir() -> Path:
    """CTXAUDIT_RATE_LIMIT_DIR, default <tmp>/ctxaudit-ratelimit (created on first use)."""
    configured = getattr(settings, "CTXAUDIT_RATE_LIMIT_DIR", "")
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "ctxaudit-ratelimit"


def counter_incr(name: str, window: int, *, ttl: int = 120) -> int | None:
    """Add one to counter `name` for `window` (an int, e.g. the minute number) and return the new
    count; None when the store failed or is being skipped (the caller must let the request pass).

    name: a short token without "/" (the key prefix). Never raises.
    """
    now = time.monotonic()
    with _lock:
        if now < _state["open_until"]:
            _state["skipped"] += 1
            return None
    store = counter_store()
    try:
        if store == "cache":
            return _cache_incr(f"ctxaudit:rl:{name}:{window}", ttl)
        return _file_incr(rate_limit_dir(), name, window)
    except Exception as exc:  # any store error: fail open, never fail the request
        with _lock:
            _state["failures"] += 1
            _state["open_until"] = now + BREAKER_SECONDS
            n = _state["failures"]
        logger.warning(
            "rate-limit store %s failed (%s: %s); requests pass uncounted for %.0fs (failure #%d)",
            store,
            type(exc).__name__,
            exc,
            BREAKER_SECONDS,
            n,
        )
        return None


def _cache_incr(bucket: str, ttl: int) -> int:
    # add() is a no-op when the bucket exists; incr() is atomic in Redis/memcached.
    cache.add(bucket, 0, timeout=ttl)
    try:
        return int(cache.incr(bucket))
    except ValueError:  # evicted between add and incr
        cache.set(bucket, 1, timeout=ttl)
        return 1


def _file_incr(directory: Path, name: str, window: int) -> int:
    path = directory / f"{window}-{name}"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except FileNotFoundError:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw = os.pread(fd, 32, 0)
        count = (int(raw) if raw.strip() else 0) + 1
        data = str(count).encode()
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)  # closing releases the lock
    if count == 1:
        _file_sweep(directory, window)
    return count


def _file_sweep(directory: Path, window: int) -> None:
    """Delete counters of windows before the previous one (runs once per key and minute)."""
    for entry in os.scandir(directory):
        head = entry.name.split("-", 1)[0]
        if head.isdigit() and int(head) < window - 1:
            with contextlib.suppress(OSError):  # another process swept it first
                os.unlink(entry.path)
