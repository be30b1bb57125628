"""An event's own rules when none were given and the project has no rule set (rules_source
"extracted"): the check extracts them from the event's `before` context, not the request that
stored it, so a store-only POST does not run the extractor (issue 13: 4-8 ms of a 20k-token
request). Until its check has run such an event has `rules` NULL; `event_own_rules` answers,
for it, the rules its check will extract, so pages and exports show the same rules before and
after the check.

The writer (event.rules, SessionRule rows) is ingest.services.event_rules_extract.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from ctxaudit.engine.formats import context_from_json
from ctxaudit.engine.rules import extract_rules
from ctxaudit.engine.transcripts import READERS
from ctxaudit.engine.types import Context
from ctxaudit.ingest.models import Event, SessionRule


def _squash(text: str) -> str:
    return " ".join(text.split()).casefold()


def mark_reinjected(rules: list[dict[str, Any]], after: Context, source_format: Any) -> None:
    """Say, per rule, whether the agent tool re-injected it from its file after the compaction
    (so the summary did not have to keep it): `rule["reinjected_from"]` = the file, or "" when
    it was not. Only for events from a transcript reader (metadata "source_format"): the rule's
    text is in an instruction-file message of the after context, or its file is one that tool
    reads again after every compaction (Reader.reloads: CLAUDE.md for Claude Code, AGENTS.md for
    Codex). Computed from the event alone, so a hook's post and an import agree."""
    reader = READERS.get(source_format) if isinstance(source_format, str) else None
    if reader is None:
        return
    injected = [_squash(m.content) for m in after.messages if m.kind == "instructions"]
    for r in rules:
        file = r.get("file") or ""
        if injected and any(_squash(r["text"]) in text for text in injected):
            r["reinjected_from"] = file or "instructions in the context after"
        elif file and PurePath(file).name in reader.reloads:
            r["reinjected_from"] = file
        else:
            r["reinjected_from"] = ""


def session_known_rules(session_id: int) -> dict[str, str]:
    """{rule_id: text} of the rules in force in the session so far (SessionRule rows)."""
    return dict(SessionRule.objects.filter(session_id=session_id).values_list("rule_id", "text"))


def rules_extracted(
    before: Context, after: Context, *, known: Mapping[str, str], source_format: Any
) -> list[dict[str, Any]]:
    """The rules engine.rules.extract_rules finds in `before`, as stored in Event.rules:
    [{"id", "text", "severity", "source", "reinjected_from"?}]. known: the session's rules so far
    (id → text), so readable ids stay unique and stable across the session."""
    rules = [
        {"id": r.id, "text": r.text, "severity": r.severity.value, "source": r.source}
        for r in extract_rules(before, known)
    ]
    mark_reinjected(rules, after, source_format)
    return rules


def event_own_rules(event: Event) -> list[dict[str, Any]]:
    """The event's own rules ([{"id", "text", "severity", "source", …}], see Event.rules): the
    stored ones, or, before the check has extracted them, what it will extract (read only;
    needs the event's contexts loaded)."""
    if event.rules is not None:
        return list(event.rules)
    return rules_extracted(
        context_from_json(event.before),
        context_from_json(event.after),
        known=session_known_rules(event.session_id),
        source_format=(event.metadata or {}).get("source_format"),
    )
