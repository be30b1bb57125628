"""gunicorn's gthread worker, telling the load shedder how long each request waited for a thread.

The main thread of a gthread worker accepts connections and queues them for its thread pool; under
overload that queue, not the shedder's gate, is where a request waits (400 POST/s on 2 shared
cores: accepted p50 0.86 s for a ~0.15 s check, and 20-56 of 4,000 clients timed out, until the
wait was counted). ctxaudit/core/shedding.py counts that wait against the
request's CTXAUDIT_SHED_MAX_WAIT_MS, so an accepted request has waited at most that long in all.
The time is taken from when the connection was queued (accepted, or readable again after a
keep-alive) to when a thread picks it up, so a slow client sending a large body is not charged.
Used by ctxaudit/gunicorn_conf.py (`worker_class`).
"""

from __future__ import annotations

import time
from typing import Any

from gunicorn.workers.gthread import ThreadWorker as GThreadWorker

from ctxaudit.core.shedding import note_queue_wait


class ThreadWorker(GThreadWorker):  # type: ignore[misc]  # gunicorn ships no type hints
    """gthread, plus the queue wait of each request (`shedding.note_queue_wait`)."""

    def enqueue_req(self, conn: Any) -> None:
        conn.ctxaudit_queued_at = time.monotonic()
        super().enqueue_req(conn)

    def handle(self, conn: Any) -> Any:
        queued_at = getattr(conn, "ctxaudit_queued_at", None)
        if queued_at is not None:
            note_queue_wait(time.monotonic() - queued_at)
        return super().handle(conn)
