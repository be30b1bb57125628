"""Read the session files agent tools write and find each compaction in them.

A transcript is one agent session as its tool logged or exported it. `read_transcript` returns
a `Transcript` whose `compactions` are in session order; each holds the context the model saw
just before the compaction (`before`: everything since the previous compaction, the previous
summary included) and just after it (`after`: the summary, `Message.kind == "compact_summary"`,
then any messages the tool kept verbatim, `kind == "preserved"`).

Supported formats (`FORMATS`):
- "claude-jsonl": Claude Code session logs (`~/.claude/projects/*/<session>.jsonl`), see
  `claude_jsonl.py`;
- "claude-md": Claude Code sessions exported to Markdown by claude-chat-manager, see
  `claude_md.py`.

Adding a format: write a module with `parse(text: str, *, name: str) -> Transcript`, register it
in `PARSERS`, and teach `detect_format` its extension or a content sniff.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ctxaudit.engine.transcripts import claude_jsonl, claude_md
from ctxaudit.engine.transcripts.types import Compaction, Transcript, TranscriptError

__all__ = [
    "FORMATS",
    "PARSERS",
    "Compaction",
    "Transcript",
    "TranscriptError",
    "detect_format",
    "parse_transcript",
    "read_transcript",
    "transcript_files",
]

PARSERS: dict[str, Callable[..., Transcript]] = {
    "claude-jsonl": claude_jsonl.parse,
    "claude-md": claude_md.parse,
}
FORMATS = ("auto", *PARSERS)

_EXTENSIONS = {".jsonl": "claude-jsonl", ".md": "claude-md", ".markdown": "claude-md"}


def detect_format(name: str, text: str) -> str | None:
    """The format of a file from its extension, else from its content; None when unknown.

    A Markdown file counts as "claude-md" only when it holds a claude-chat-manager user marker
    (so a folder's README.md is not mistaken for a transcript).
    """
    suffix = Path(name).suffix.lower()
    fmt = _EXTENSIONS.get(suffix)
    if fmt == "claude-md":
        return fmt if claude_md.USER_MARKER in text else None
    if fmt:
        return fmt
    head = text.lstrip()[:1]
    if head == "{":
        return "claude-jsonl"
    if claude_md.USER_MARKER in text:
        return "claude-md"
    return None


def parse_transcript(text: str, *, name: str, format: str = "auto") -> Transcript:
    """Parse one transcript's text. `name` (the file name) is used in errors and as fallback
    session id. Raises TranscriptError (with `name` and a 1-based `line`) on unreadable input."""
    if format not in FORMATS:
        raise TranscriptError(name, None, f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    fmt = detect_format(name, text) if format == "auto" else format
    if fmt is None:
        raise TranscriptError(
            name, None, "not a transcript format ctxaudit reads (Claude Code .jsonl, claude-chat-manager .md)"
        )
    return PARSERS[fmt](text, name=name)


def read_transcript(path: str | Path, *, format: str = "auto") -> Transcript:
    """Read and parse one file (UTF-8). Raises TranscriptError naming the file and line."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise TranscriptError(str(p), None, f"cannot read: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TranscriptError(str(p), line, "not valid UTF-8") from exc
    return parse_transcript(text, name=str(p), format=format)


def transcript_files(paths: list[str | Path]) -> tuple[list[Path], list[Path]]:
    """Expand files and folders into (transcript files, skipped files), sorted by path.

    A file named explicitly is always returned (parsing it says whether it is readable); inside
    a folder (searched recursively), only .jsonl files and Markdown files carrying the
    claude-chat-manager user marker are taken, the rest are returned as skipped.
    """
    files: list[Path] = []
    skipped: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if not p.is_dir():
            files.append(p)
            continue
        for child in sorted(p.rglob("*")):
            if not child.is_file():
                continue
            suffix = child.suffix.lower()
            if suffix == ".jsonl" or suffix in (".md", ".markdown") and _has_marker(child):
                files.append(child)
            else:
                skipped.append(child)
    return files, skipped


def _has_marker(path: Path) -> bool:
    try:
        return claude_md.USER_MARKER.encode() in path.read_bytes()
    except OSError:
        return False
