"""Shapes shared by the transcript parsers."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ctxaudit.engine.types import Context


class TranscriptError(ValueError):
    """A transcript that cannot be read: `name` is the file, `line` 1-based (None: whole file)."""

    def __init__(self, name: str, line: int | None, problem: str) -> None:
        where = f"{name}:{line}" if line is not None else name
        super().__init__(f"{where}: {problem}")
        self.name = name
        self.line = line
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Compaction:
    """One compaction found in a transcript.

    index: 0-based position in the session (session order). line: 1-based line of the file
    where the compaction is recorded (the boundary entry, or the summary turn's marker).
    occurred_at: when the transcript says it happened (timezone-aware), else None.
    model: the model that was running just before it, when the transcript names it.
    metadata: what the format adds (trigger, pre-compaction token count, ...), JSON-ready.
    """

    index: int
    before: Context
    after: Context
    line: int
    occurred_at: datetime | None = None
    model: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Transcript:
    """One session: its id (from the transcript, else None) and its compactions in order."""

    format: str
    session_id: str | None
    compactions: tuple[Compaction, ...]
    occurred_at: datetime | None = None  # when the transcript as a whole is dated (e.g. export time)
