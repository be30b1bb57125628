from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ctxaudit.projects.services import api_key_create


class Command(BaseCommand):
    help = "Create an API key for a project (created if needed). The key is printed alone on the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--name", default="", help="a label for the key")
        parser.add_argument(
            "--scopes",
            default="ingest,read",
            help="comma-separated: ingest,read,admin (admin: may replace the rule set, PUT /api/v1/rules)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            key, raw = api_key_create(
                project_name=opts["project"],
                name=opts["name"],
                scopes=[s.strip() for s in opts["scopes"].split(",") if s.strip()],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"Created API key {key.prefix} for project {key.project.name!r} (scopes: {', '.join(key.scopes)}). Store it now: it is not shown again."
        )
        self.stdout.write(raw)
