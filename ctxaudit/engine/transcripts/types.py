"""Shapes shared by the transcript readers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
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


class UnknownFormat(TranscriptError):
    """No reader recognises the file (the importer exits 2 for a file named on its command line)."""


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
class Instruction:
    """An instruction file the agent read, as the transcript shows it (AGENTS.md, GEMINI.md, a
    repository's instructions, a Letta memory block). `source`: the file's path or the block's
    label as the tool names it; `text`: its content."""

    source: str
    text: str


@dataclass(frozen=True, slots=True)
class Transcript:
    """One session: its id (from the transcript, else None) and its compactions in order.

    instructions: the instruction files the reader found in the session (first reading of each
    source), used as rules when the event carries none. notes: what the reader wants said about
    this file beside the compaction count (e.g. a summary whose before-context is not in the file).
    """

    format: str
    session_id: str | None
    compactions: tuple[Compaction, ...]
    occurred_at: datetime | None = None  # when the transcript as a whole is dated (e.g. export time)
    instructions: tuple[Instruction, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Reader:
    """One transcript format: what `detect_format` and `parse_transcript` need to know about it.

    name: the format name (`--format NAME`). label: what it reads, for `--help` and errors.
    extensions: file suffixes it is found under (lower case, with the dot); a file with another
    suffix is still offered to `sniff` when no reader claims its suffix. sniff(name, text): True
    when the content is this format (cheap: look at the first lines/keys). parse(text, name=...):
    the Transcript, or TranscriptError naming the line. reloads: instruction file names the tool
    itself reads again after a compaction (so a rule from one is re-injected, not kept by the
    summary). folder(path): for a tool that stores one session as a folder of files, the text
    `parse` reads for that folder, or None when the folder is not one (never raises).
    """

    name: str
    label: str
    extensions: tuple[str, ...]
    sniff: Callable[[str, str], bool]
    parse: Callable[..., Transcript]
    reloads: tuple[str, ...] = ()
    folder: Callable[[Path], str | None] | None = None
