"""GET/PUT /api/v1/rules: the project's rule set (versioned), for the key's project."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Status
from pydantic import BaseModel, Field

from ctxaudit.ingest.schemas import ErrorOut
from ctxaudit.projects.auth import ApiKeyAuth
from ctxaudit.projects.models import RuleSetVersion
from ctxaudit.projects.rulesets import (
    MAX_RULES,
    RuleSpec,
    rule_set_current,
    rule_set_replace,
    rule_spec_typed,
    rules_from_instruction_file,
)

router = Router(tags=["rules"])


class RuleIn(BaseModel):
    text: str = Field(min_length=1, max_length=4000)
    id: str | None = Field(default=None, max_length=100)
    severity: str = "high"
    file: str = Field(default="", max_length=300)


class FileIn(BaseModel):
    """An instruction file: its rules are extracted as import_rules does."""

    name: str = Field(min_length=1, max_length=300)
    content: str = Field(max_length=1_000_000)


class RulesIn(BaseModel):
    rules: list[RuleIn] = Field(default_factory=list, max_length=MAX_RULES)
    files: list[FileIn] = Field(default_factory=list, max_length=50)


class RuleOut(BaseModel):
    id: str
    text: str
    severity: str
    file: str


class RuleSetOut(BaseModel):
    version: int
    created_at: str
    actor: str
    source: str
    files: list[str]
    rules: list[RuleOut]


def _out(v: RuleSetVersion) -> dict[str, Any]:
    return {
        "version": v.number,
        "created_at": v.created_at.isoformat(),
        "actor": v.actor,
        "source": v.source,
        "files": v.files,
        "rules": [
            {"id": r["id"], "text": r["text"], "severity": r["severity"], "file": r.get("file", "")}
            for r in v.rules
        ],
    }


@router.get(
    "/rules",
    auth=ApiKeyAuth("read"),
    response={200: RuleSetOut, 404: ErrorOut},
    summary="The project's rule set",
)
def rules_get(request: HttpRequest) -> Status[dict[str, Any]]:
    """The current version of the key's project rule set; 404 when it never had one."""
    current = rule_set_current(request.project)  # type: ignore[attr-defined]
    if current is None:
        return Status(404, {"error": "this project has no rule set yet"})
    return Status(200, _out(current))


@router.put(
    "/rules",
    auth=ApiKeyAuth("admin"),
    response={200: RuleSetOut, 400: ErrorOut},
    summary="Replace the project's rule set (a new version)",
)
def rules_put(request: HttpRequest, payload: RulesIn) -> Status[dict[str, Any]]:
    """Replace the rule set with `rules` plus the rules found in `files` (CLAUDE.md, AGENTS.md…).

    Needs a key with the `admin` scope. Events received afterwards are checked against the new
    version; earlier events keep theirs. 400 names the field when a rule is invalid or nothing
    would be left in the set.
    """
    specs: list[RuleSpec] = []
    for i, r in enumerate(payload.rules):
        try:
            specs.append(rule_spec_typed(r.text, severity=r.severity, rule_id=r.id, file=r.file))
        except ValueError as exc:
            field, _, problem = str(exc).partition(": ")
            return Status(400, {"error": f"rules[{i}].{field}: {problem}", "field": f"rules[{i}].{field}"})
    for f in payload.files:
        specs.extend(rules_from_instruction_file(f.content, file=f.name))
    if not specs:
        return Status(400, {"error": "rules: no rule given and none found in the files", "field": "rules"})
    key = request.api_key  # type: ignore[attr-defined]
    try:
        version = rule_set_replace(
            project=request.project,  # type: ignore[attr-defined]
            rules=specs,
            source=RuleSetVersion.Source.API,
            actor=f"key cta_{key.prefix}",
            files=[f.name for f in payload.files] + [r.file for r in specs if r.file],
        )
    except ValueError as exc:
        return Status(400, {"error": str(exc), "field": "rules"})
    return Status(200, _out(version))
