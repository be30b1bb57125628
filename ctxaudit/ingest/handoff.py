"""Parsed contexts handed from ingestion to a check that runs in the same process.

In the embedded default (no CELERY_BROKER_URL) the check runs in the request right after the
event commits; reading back and JSON-decoding the contexts it has just stored cost ~0.2× the
tokeniser's time on a 200k-token pair (issue 13). While `handed_off` is open, `handoff_take`
gives the check the very Context objects ingestion stored, when they are exactly what
engine.formats.context_from_json makes of the stored rows (context_to_json keeps a message's
name and kind only when they are non-empty). A check in another process (a Celery worker) finds
nothing here and reads the row, as before. Nothing outlives the `with` block.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ctxaudit.engine.types import Context

_FRESH: dict[int, tuple[Context, Context]] = {}


def _as_stored(ctx: Context) -> bool:
    """Would context_from_json(context_to_json(ctx)) give back an equal Context?"""
    return all((m.name is None or m.name != "") and (m.kind is None or m.kind != "") for m in ctx.messages)


@contextmanager
def handed_off(event_id: int, before: Context, after: Context) -> Iterator[None]:
    """Offer the event's contexts (as parsed and stored) to a check run inside the block."""
    if _as_stored(before) and _as_stored(after):
        _FRESH[event_id] = (before, after)
    try:
        yield
    finally:
        _FRESH.pop(event_id, None)


def handoff_take(event_id: int) -> tuple[Context, Context] | None:
    """(before, after) of `event_id` when ingestion in this process offered them, else None."""
    return _FRESH.pop(event_id, None)
