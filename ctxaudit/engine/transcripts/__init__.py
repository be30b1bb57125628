"""Read the session files agent tools write and find each compaction in them.

A transcript is one agent session as its tool logged or exported it. `read_transcript` returns
a `Transcript` whose `compactions` are in session order; each holds the context the model saw
just before the compaction (`before`: everything since the previous compaction, the previous
summary included) and just after it (`after`: the summary, `Message.kind == "compact_summary"`,
then any messages the tool kept verbatim, `kind == "preserved"`). Instruction files the session
shows (AGENTS.md, GEMINI.md, repository instructions, memory blocks) are `Transcript.instructions`.

The readers are a registry (`READERS`, format name → `Reader`), one module each; every module
cites the tool's source it was built from. Adding a format: write a module that defines
`READER = Reader(name, label, extensions, sniff, parse)` and add it to `_MODULES` below.
Order matters only for sniffing: the first reader whose `sniff` accepts a file reads it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ctxaudit.engine.transcripts import (
    claude_jsonl,
    claude_md,
    codex,
    gemini,
    langchain,
    letta,
    openhands,
)
from ctxaudit.engine.transcripts.jsonutil import incomplete_last_line
from ctxaudit.engine.transcripts.types import (
    Compaction,
    Instruction,
    Reader,
    Transcript,
    TranscriptError,
    UnknownFormat,
)

__all__ = [
    "FORMATS",
    "READERS",
    "Compaction",
    "Instruction",
    "Reader",
    "Transcript",
    "TranscriptError",
    "UnknownFormat",
    "detect_format",
    "formats_help",
    "parse_transcript",
    "read_transcript",
    "transcript_files",
]

# Most specific sniff first: Claude Code's loose "type: user" test comes after the formats
# whose records carry a distinctive key.
_MODULES = (codex, gemini, openhands, letta, langchain, claude_jsonl, claude_md)

READERS: dict[str, Reader] = {m.READER.name: m.READER for m in _MODULES}
FORMATS = ("auto", *READERS)


def formats_help() -> str:
    """One line per format: "name: label" (for `--help` and error messages)."""
    return "; ".join(f"{r.name}: {r.label}" for r in READERS.values())


def detect_format(name: str, text: str) -> str | None:
    """The format of a file from its content, tried first by the readers that claim its suffix,
    then by every reader (a Codex rollout renamed .log is still one); None when none accepts it.
    """
    suffix = Path(name).suffix.lower()
    claiming = [r for r in READERS.values() if suffix in r.extensions]
    others = [r for r in READERS.values() if r not in claiming]
    for reader in (*claiming, *others):
        if reader.sniff(name, text):
            return reader.name
    return None


def _unknown(name: str) -> UnknownFormat:
    return UnknownFormat(
        name, None, f"not a transcript format ctxaudit reads; known formats: {', '.join(READERS)}"
    )


def parse_transcript(text: str, *, name: str, format: str = "auto") -> Transcript:
    """Parse one transcript's text. `name` (the file name) is used in errors and as fallback
    session id. Raises TranscriptError (with `name` and a 1-based `line`) on unreadable input,
    and naming the known formats when no reader recognises the file."""
    if format not in FORMATS:
        raise TranscriptError(name, None, f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    fmt = detect_format(name, text) if format == "auto" else format
    if fmt is None:
        raise _unknown(name)
    transcript = READERS[fmt].parse(text, name=name)
    partial = incomplete_last_line(text)
    if partial is not None:
        note = f"line {partial} is incomplete (the file is still being written?): read up to the line before; import again later"
        transcript = replace(transcript, notes=(*transcript.notes, note))
    return transcript


# Codex compresses older rollouts to `rollout-….jsonl.zst` and reads the plain file when both
# exist (openai/codex codex-rs/rollout/src/compression.rs @ 005c818463ca9b15c779df6f4fb6ef96c1441cbc).
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZSTD_SUFFIX = ".zst"


def _read_text(p: Path) -> str:
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise TranscriptError(str(p), None, f"cannot read: {exc.strerror or exc}") from exc
    if data.startswith(_ZSTD_MAGIC):
        import zstandard  # only for compressed files

        try:
            with zstandard.ZstdDecompressor().stream_reader(data) as reader:
                data = reader.read()
        except zstandard.ZstdError as exc:
            raise TranscriptError(str(p), None, f"not a readable zstd file ({exc})") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TranscriptError(str(p), line, "not valid UTF-8") from exc


def _folder_session(p: Path) -> tuple[str, str] | None:
    """(format, text) when `p` is a folder some reader stores one session in (Reader.folder)."""
    for reader in READERS.values():
        text = reader.folder(p) if reader.folder else None
        if text is not None:
            return reader.name, text
    return None


def read_transcript(path: str | Path, *, format: str = "auto") -> Transcript:
    """Read and parse one file (UTF-8), or a folder a tool keeps one session in (an OpenHands
    event store). Raises TranscriptError naming the file and line."""
    p = Path(path)
    if p.is_dir():
        found = _folder_session(p)
        if found is None:
            raise _unknown(str(p))
        return parse_transcript(found[1], name=str(p), format=found[0] if format == "auto" else format)
    return parse_transcript(_read_text(p), name=str(p), format=format)


def transcript_files(paths: list[str | Path]) -> tuple[list[Path], list[Path]]:
    """Expand files and folders into (transcript files, skipped files), sorted by path.

    A file named explicitly is always returned (parsing it says whether it is readable); inside
    a folder (searched recursively), only files some reader recognises are taken, the rest are
    returned as skipped. A folder a tool keeps one session in (Reader.folder: an OpenHands event
    store) is returned as one entry, its files not apart.
    """
    files: list[Path] = []
    skipped: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if not p.is_dir() or _folder_session(p) is not None:
            files.append(p)
            continue
        stores: list[Path] = []  # folders that are one session each: their files are not read apart
        for child in sorted(p.rglob("*")):
            if any(child.is_relative_to(s) for s in stores):
                continue
            if child.is_dir() and _folder_session(child) is not None:
                stores.append(child)
                files.append(child)
                continue
            if not child.is_file():
                continue
            if (
                child.name.endswith(_ZSTD_SUFFIX)
                and child.with_name(child.name[: -len(_ZSTD_SUFFIX)]).is_file()
            ):
                continue  # a compressed copy of a session whose plain file is there
            try:
                known = detect_format(child.name, _read_text(child)) is not None
            except TranscriptError:
                known = False
            (files if known else skipped).append(child)
    return files, skipped
