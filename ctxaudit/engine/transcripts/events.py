"""One transcript compaction as a `POST /api/v1/events` body, with its Idempotency-Key.

`manage.py import_transcripts` (ingest/services.py) and the agent hooks (`ctxaudit hook
claude-code`, ctxaudit/hooks/) both build their bodies here, so an event posted by a hook right
after a compaction and a later import of the same session file are the same request — same body,
same key — and the server keeps one event (a second POST answers 200, never 422).
"""

from __future__ import annotations

import hashlib
from pathlib import PurePath
from typing import Any

from ctxaudit.engine.formats import context_to_json
from ctxaudit.engine.transcripts.types import Compaction, Transcript

SESSION_ID_MAX = 200  # EventIn.session_id max_length
MODEL_MAX = 200  # EventIn.model max_length


def session_id_for(transcript: Transcript, path: str | PurePath) -> str:
    """The event's session id: the transcript's own id, else the file's stem; at most 200 chars."""
    return (transcript.session_id or PurePath(path).stem)[:SESSION_ID_MAX]


def idempotency_key(path: str | PurePath, session_id: str, compaction_index: int) -> str:
    """`transcript:<hash of file name and session id>:<compaction number, 1-based>`.

    Only the file's *name* is used (not its folder), so the same session file read from
    `~/.claude/projects/...` by a hook and from a copy by an importer gives the same key.
    """
    file_key = hashlib.sha1(f"{PurePath(path).name}\0{session_id}".encode()).hexdigest()[:20]  # noqa: S324 - a key, not a secret
    return f"transcript:{file_key}:{compaction_index + 1}"


def compaction_event(
    transcript: Transcript, compaction: Compaction, path: str | PurePath
) -> tuple[str, dict[str, Any]]:
    """(Idempotency-Key, JSON-ready event body) for one compaction of the file at `path`.

    The body: session_id, sequence (1-based compaction number), occurred_at (ISO 8601, the
    compaction's time, else the transcript's, else null), strategy "summary", model (≤200 chars
    or null), format "generic", before/after in ctxaudit's stored message form, metadata (the
    reader's metadata plus source_file and imported_from "transcript").
    """
    session_id = session_id_for(transcript, path)
    when = compaction.occurred_at or transcript.occurred_at
    body: dict[str, Any] = {
        "session_id": session_id,
        "sequence": compaction.index + 1,
        "occurred_at": when.isoformat() if when is not None else None,
        "strategy": "summary",
        "model": (compaction.model or "")[:MODEL_MAX] or None,
        "format": "generic",
        "before": context_to_json(compaction.before),
        "after": context_to_json(compaction.after),
        "metadata": {
            **compaction.metadata,
            "source_file": PurePath(path).name,
            "imported_from": "transcript",
        },
    }
    return idempotency_key(path, session_id, compaction.index), body
