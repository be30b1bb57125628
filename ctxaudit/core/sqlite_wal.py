"""SQLite's WAL checkpoint after a write's answer, not inside one of its commits.

In WAL mode the commit that takes the log past `wal_autocheckpoint` pages (4,000 here, see
settings.py) copies the log into the database file before it returns. A 200k-token event writes
~4 MB (stored, then its result), so every fourth POST → checked waited ~28 ms for a checkpoint
(issue 13). After an API write's answer (core/after_response.py) a PASSIVE checkpoint, which never
waits for a reader or a writer, copies what it can; the log then seldom reaches the threshold
inside a request. The threshold stays the bound for writes outside requests (imports, workers).
"""

from __future__ import annotations

from django.db import connection

from ctxaudit.core.after_response import in_request_after_response


def checkpoint_after_response() -> None:
    """On SQLite inside a request: a PASSIVE WAL checkpoint once the answer has been sent.
    Elsewhere nothing."""
    if connection.vendor == "sqlite":
        in_request_after_response(_checkpoint)


def _checkpoint() -> None:
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
