"""The one writer of a project's rule set: each change is a new RuleSetVersion (who, when, how,
from which files) and the current version's rules become the project's ProjectRule rows.

Events snapshot the rules in force when they are received (ingest.services), so an event is
always checked against the version that was current then, whatever changes later.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from ctxaudit.engine.rules import extract_rules, rule_id_for
from ctxaudit.engine.types import Context, Message
from ctxaudit.projects.models import Project, ProjectRule, RuleSetVersion

SEVERITIES = ("high", "medium", "low")
MAX_RULES = 500


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """A rule to put in a rule set. `file`: the instruction file it came from ("" if typed in)."""

    id: str
    text: str
    severity: str = "high"
    file: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "severity": self.severity, "file": self.file}


def rules_from_instruction_file(text: str, *, file: str) -> list[RuleSpec]:
    """The rules in an instruction file (CLAUDE.md, AGENTS.md, GEMINI.md, a memory block):
    read as a system prompt by the engine's extractor (engine.rules.extract_rules), so each
    imperative sentence or bullet is one rule of severity high. Ids are the engine's readable
    rule ids, so the same sentence in two files is one rule (the first file named keeps it)."""
    ctx = Context(messages=(Message(role="system", content=text),))
    return [RuleSpec(id=r.id, text=r.text, severity=r.severity.value, file=file) for r in extract_rules(ctx)]


def rule_spec_typed(
    text: str, *, severity: str = "high", rule_id: str | None = None, file: str = ""
) -> RuleSpec:
    """A rule typed in (API, rules page): id from the text unless given. Raises ValueError
    naming the problem for an empty text or an unknown severity."""
    text = text.strip()
    if not text:
        raise ValueError("text: must not be empty")
    if severity not in SEVERITIES:
        raise ValueError(f"severity: must be one of {', '.join(SEVERITIES)}")
    return RuleSpec(
        id=(rule_id or "").strip()[:100] or rule_id_for(text), text=text, severity=severity, file=file
    )


def _dedupe(rules: list[RuleSpec]) -> list[RuleSpec]:
    seen: set[str] = set()
    out = []
    for r in rules:
        if r.id not in seen:
            seen.add(r.id)
            out.append(r)
    return out


def rule_set_current(project: Project) -> RuleSetVersion | None:
    """The project's current rule set version, or None when it never had one."""
    return project.rule_set_versions.order_by("-number").first()


@transaction.atomic
def rule_set_replace(
    *,
    project: Project,
    rules: list[RuleSpec],
    source: str,
    actor: str,
    files: list[str] | None = None,
    user: Any = None,
) -> RuleSetVersion:
    """Make `rules` (deduplicated by id, at most MAX_RULES) the project's rule set, as a new
    version. Returns the new RuleSetVersion. Raises ValueError when there are too many rules."""
    rules = _dedupe(rules)
    if len(rules) > MAX_RULES:
        raise ValueError(f"rules: at most {MAX_RULES} rules in a rule set, got {len(rules)}")
    Project.objects.select_for_update().filter(pk=project.pk).first()  # one writer at a time per project
    current = rule_set_current(project)
    version = RuleSetVersion.objects.create(
        project=project,
        number=(current.number if current else 0) + 1,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        actor=actor[:150],
        source=source,
        files=list(dict.fromkeys(files or [r.file for r in rules if r.file])),
        rules=[r.as_json() for r in rules],
    )
    ProjectRule.objects.filter(project=project).delete()
    ProjectRule.objects.bulk_create(
        [
            ProjectRule(
                project=project,
                rule_id=r.id,
                text=r.text,
                severity=r.severity,
                source_file=r.file[:300],
                version=version.number,
            )
            for r in rules
        ]
    )
    return version


def rule_set_merge(
    *, project: Project, rules: list[RuleSpec], source: str, actor: str, files: list[str]
) -> RuleSetVersion | None:
    """Add `rules` whose ids the current set lacks, as a new version; None when nothing is new
    (re-importing the same instruction files makes no new version)."""
    current = {r.rule_id: r for r in project.rules.all()}
    new = [r for r in _dedupe(rules) if r.id not in current]
    if not new:
        return None
    kept = [RuleSpec(r.rule_id, r.text, r.severity, r.source_file) for r in current.values()]
    return rule_set_replace(project=project, rules=kept + new, source=source, actor=actor, files=files)
