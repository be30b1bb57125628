"""`manage.py import_transcripts PATH... --project NAME`: one event per compaction in agent transcripts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ctxaudit.engine.transcripts import FORMATS, READERS, TranscriptError, UnknownFormat, transcript_files
from ctxaudit.ingest.services import transcript_import
from ctxaudit.projects.models import Project

# Exit status when a file named on the command line is no format ctxaudit reads (issue 14).
EXIT_UNKNOWN_FORMAT = 2


def _formats_epilog() -> str:
    return "formats: " + "; ".join(f"{r.name} = {r.label}" for r in READERS.values())


class Command(BaseCommand):
    help = (
        "Import agent session transcripts: one compression event per compaction, in session order. "
        "PATH: files or folders (searched recursively; files no reader recognises are skipped and "
        "listed). The format is detected from each file's content; --format forces one. "
        "Re-importing a file adds nothing. A file named here that no reader recognises: exit 2. "
        + _formats_epilog()
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--project", required=True, help="project name (created if needed)")
        parser.add_argument(
            "--format",
            default="auto",
            choices=FORMATS,
            help="default: auto (detected per file). " + _formats_epilog(),
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        project, _ = Project.objects.get_or_create(name=opts["project"])
        files, skipped = transcript_files(opts["paths"])
        errors: list[str] = []
        unknown: list[str] = []
        created = existing = 0
        for path in files:
            try:
                result = transcript_import(project=project, path=path, format=opts["format"])
            except UnknownFormat as exc:
                unknown.append(exc.name)
                self.stderr.write(f"error: {exc}")
                continue
            except TranscriptError as exc:
                errors.append(str(exc))
                self.stderr.write(f"error: {exc}")
                continue
            created += result.created
            existing += result.existing
            if result.compactions:
                self.stdout.write(
                    f"{result.path}: {result.format}, session {result.session_id!r}, {result.compactions} compaction(s): "
                    f"{result.created} new event(s), {result.existing} already imported"
                )
            else:
                self.stdout.write(
                    f"{result.path}: {result.format}, session {result.session_id!r}: no compaction in this file"
                )
            for note in result.notes:
                self.stdout.write(f"{result.path}: note: {note}")
            if result.rules_version:
                self.stdout.write(
                    f"{result.path}: instruction files {', '.join(result.instruction_files)} joined the project's "
                    f"rule set (version {result.rules_version})"
                )
        for path in skipped:
            why = "empty file" if _empty(path) else "not a transcript format ctxaudit reads"
            self.stdout.write(f"{path}: skipped ({why})")
        ok = len(files) - len(errors) - len(unknown)
        self.stdout.write(
            f"Imported {ok} of {len(files)} file(s) into project {project.name!r}: {created} new event(s), {existing} already there."
        )
        if unknown:
            raise CommandError(
                f"{len(unknown)} file(s) are no transcript format ctxaudit reads: {', '.join(unknown)}; "
                f"known formats: {', '.join(READERS)}",
                returncode=EXIT_UNKNOWN_FORMAT,
            )
        if errors:
            raise CommandError(f"{len(errors)} file(s) could not be read: " + "; ".join(errors))


def _empty(path: Path) -> bool:
    """A file with nothing in it yet (a session the tool has just created)."""
    try:
        return path.stat().st_size == 0
    except OSError:
        return False
