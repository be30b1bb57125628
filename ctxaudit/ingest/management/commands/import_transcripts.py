"""`manage.py import_transcripts PATH... --project NAME`: one event per compaction in agent transcripts."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ctxaudit.engine.transcripts import FORMATS, TranscriptError, transcript_files
from ctxaudit.ingest.services import transcript_import
from ctxaudit.projects.models import Project


class Command(BaseCommand):
    help = (
        "Import agent session transcripts (Claude Code .jsonl, claude-chat-manager .md): one compression "
        "event per compaction, in session order. PATH: files or folders (searched recursively). "
        "Re-importing a file adds nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--project", required=True, help="project name (created if needed)")
        parser.add_argument(
            "--format", default="auto", choices=FORMATS, help="default: from the extension or content"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        project, _ = Project.objects.get_or_create(name=opts["project"])
        files, skipped = transcript_files(opts["paths"])
        errors: list[str] = []
        created = existing = 0
        for path in files:
            try:
                result = transcript_import(project=project, path=path, format=opts["format"])
            except TranscriptError as exc:
                errors.append(str(exc))
                self.stderr.write(f"error: {exc}")
                continue
            created += result.created
            existing += result.existing
            self.stdout.write(
                f"{result.path}: {result.format}, session {result.session_id!r}, {result.compactions} compaction(s): "
                f"{result.created} new event(s), {result.existing} already imported"
            )
        for path in skipped:
            self.stdout.write(f"{path}: skipped (not a transcript)")
        ok = len(files) - len(errors)
        self.stdout.write(
            f"Imported {ok} of {len(files)} file(s) into project {project.name!r}: {created} new event(s), {existing} already there."
        )
        if errors:
            raise CommandError(f"{len(errors)} file(s) could not be read: " + "; ".join(errors))
