"""`manage.py import_rules --project P CLAUDE.md AGENTS.md ...`: set a project's rule set from the
instruction files its agents read (a new rule set version)."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ctxaudit.projects.models import Project, RuleSetVersion
from ctxaudit.projects.rulesets import RuleSpec, rule_set_replace, rules_from_instruction_file


class Command(BaseCommand):
    help = (
        "Set a project's rule set from instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, …): the "
        "rules in each file replace the current set as a new version (who, when, from which files). "
        "Events received from then on are checked against it; earlier events keep their version."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("--project", required=True, help="project name (created if needed)")

    def handle(self, *args: Any, **opts: Any) -> None:
        specs: list[RuleSpec] = []
        counts: list[str] = []
        for raw in opts["files"]:
            path = Path(raw)
            try:
                text = path.read_text(encoding="utf-8-sig")
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
            found = rules_from_instruction_file(text, file=path.name)
            if not found:
                self.stderr.write(f"warning: {path}: no rule found in this file")
            specs.extend(found)
            counts.append(f"{len(found)} from {path.name}")
        if not specs:
            raise CommandError("no rule found in the files given: the rule set is unchanged")
        project, _ = Project.objects.get_or_create(name=opts["project"])
        try:
            actor = f"manage.py import_rules ({getpass.getuser()})"
        except (KeyError, OSError):
            actor = "manage.py import_rules"
        try:
            version = rule_set_replace(
                project=project,
                rules=specs,
                source=RuleSetVersion.Source.IMPORT_RULES,
                actor=actor,
                files=[Path(f).name for f in opts["files"]],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"Rule set of project {project.name!r} is now version {version.number}: "
            f"{len(version.rules)} rule(s) ({', '.join(counts)})."
        )
