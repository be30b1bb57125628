"""Events a hook could not deliver, kept under ~/.ctxaudit/spool/ until a later run sends them.

One JSON file per event: {"path": "/api/v1/events", "idempotency_key", "body", "spooled_at"}.
A spooled event is re-sent with its own Idempotency-Key, so sending it twice (or after the
agent's own later import) still makes one event. Files are 0600: they hold conversation text.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from ctxaudit.client import ApiError, Client, Unavailable
from ctxaudit.hooks.settings import HookSettings

# A server down for weeks must not fill the disk with conversation copies: past this many
# spooled events the oldest are dropped (said on stderr).
MAX_SPOOLED = 1000


def spool_dir(settings: HookSettings) -> Path:
    return settings.private_dir("spool")


def spool_event(settings: HookSettings, key: str, body: dict[str, Any]) -> Path:
    """Write one event to the spool (atomically; the same key twice keeps one file). Returns its path."""
    folder = spool_dir(settings)
    name = f"{int(time.time() * 1000):015d}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"
    for existing in folder.glob(f"*-{name.split('-', 1)[1]}"):
        return existing
    path = folder / name
    tmp = folder / f".{name}.tmp"
    data = json.dumps(
        {"path": "/api/v1/events", "idempotency_key": key, "body": body, "spooled_at": time.time()},
        ensure_ascii=False,
    )
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(data)
    os.replace(tmp, path)
    files = sorted(folder.glob("*.json"))
    for old in files[: max(0, len(files) - MAX_SPOOLED)]:
        old.unlink(missing_ok=True)
        sys.stderr.write(
            f"ctxaudit hook: spool full ({MAX_SPOOLED} events): dropped the oldest, {old.name}\n"
        )
    return path


def spooled(settings: HookSettings) -> list[Path]:
    """Spooled event files, oldest first."""
    folder = settings.home / "spool"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def flush_spool(settings: HookSettings, client: Client, *, skip: set[str] | None = None) -> tuple[int, int]:
    """Send spooled events, oldest first, while time remains. Returns (done, left): files
    delivered or refused, files still spooled. Files named in `skip` are left alone.

    A file is removed once the server took it (202, or 200 for a key it already had) or refused
    it for good (4xx other than 429: retrying cannot help; the refusal is printed to stderr).
    The first Unavailable stops the flush: the server is still down or busy.
    """
    sent = 0
    files = [p for p in spooled(settings) if p.name not in (skip or set())]
    for i, path in enumerate(files):
        if settings.remaining() <= 0.05:
            return sent, len(files) - i
        try:
            item = json.loads(path.read_text(encoding="utf-8"))
            body, key = item["body"], item["idempotency_key"]
        except (OSError, ValueError, KeyError, TypeError):
            sys.stderr.write(f"ctxaudit hook: dropping unreadable spool file {path.name}\n")
            path.unlink(missing_ok=True)
            continue
        client.deadline = settings.remaining()
        client.timeout = max(0.05, settings.remaining())
        try:
            client.post_event(body, idempotency_key=key)
        except Unavailable:
            return sent, len(files) - i
        except ApiError as exc:
            sys.stderr.write(f"ctxaudit hook: the server refused spooled event {key}: {exc}\n")
        path.unlink(missing_ok=True)
        sent += 1
    return sent, 0
