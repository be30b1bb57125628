"""How an audit-log row names what was viewed: "event 18 (session s-1)", not "event 18 · event 18 (s-1)"."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def audit_object(entry: Any) -> str:
    """The object of an AuditLogEntry: its repr when that already starts with "<type> <id>"
    (str(event) does), else "<type> <id>" followed by the repr ("project 3 · acme")."""
    head = f"{entry.object_type} {entry.object_id}"
    rep = (entry.object_repr or "").strip()
    if not rep or rep == head:
        return head
    if rep.startswith(head + " "):
        tail = rep[len(head) :].strip()
        # str(event) is "event 18 (s-1)": say what the bracket is.
        if entry.object_type == "event" and tail.startswith("(") and tail.endswith(")"):
            return f"{head} · session {tail[1:-1]}"
        return rep
    return f"{head} · {rep}"
