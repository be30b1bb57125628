"""{% rule_origin event rule_id as origin %}: where a rule in force after the compaction came
from, where ctxaudit could tell (events from a transcript reader: `rule["reinjected_from"]`,
set by ingest.event_rules.mark_reinjected): ("reinjected", file) when the agent tool read its file
again, ("summary", "") when the summary had to keep it, None when the event does not say."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.simple_tag
def rule_origin(event: Any, rule_id: str) -> tuple[str, str] | None:
    for r in getattr(event, "rules", None) or []:
        if isinstance(r, dict) and r.get("id") == rule_id and "reinjected_from" in r:
            source = r["reinjected_from"]
            return ("reinjected", source) if isinstance(source, str) and source else ("summary", "")
    return None
