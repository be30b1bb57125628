"""`{% checklist_progress event %}`: "3/7" linking to the event's checklist (the incident list's cell),
and `{{ kind|symptom_url }}`: the symptom guide row of a finding kind."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

from ctxaudit.regression.guide import STEP_COUNT, SYMPTOM_FOR_KIND
from ctxaudit.regression.selectors import checklist_progress as progress_for

register = template.Library()

_CACHE_ATTR = "_checklist_progress"


@register.inclusion_tag("ui/partials/_checklist_progress.html", takes_context=True)
def checklist_progress(context: template.Context, event: Any) -> dict[str, Any]:
    # One query per page of the incident list: the counts are cached on the `page` object.
    page = context.get("page")
    counts = getattr(page, _CACHE_ATTR, None) if page is not None else None
    if counts is None:
        ids = [e.pk for e in page] if page is not None else [event.pk]
        counts = progress_for(ids)
        if page is not None:
            setattr(page, _CACHE_ATTR, counts)
    done = counts.get(event.pk)
    if done is None:
        done = progress_for([event.pk])[event.pk]
    return {"event": event, "done": done, "total": STEP_COUNT}


@register.filter
def symptom_url(kind: str) -> str:
    """The symptom guide's row for a finding kind (the "other kinds" section for an unmapped one)."""
    entry = SYMPTOM_FOR_KIND.get(kind)
    return reverse("regression:symptoms") + (f"#symptom-{entry[0]}" if entry else "#other")
