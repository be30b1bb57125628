"""The content-access audit log: who viewed or exported an incident's content.

Call `log_content_access(request, event, "view")` from any view that shows an event's contexts,
and with "export"/"download" from any view that hands them out as a file. The API's event read
logs "api_read" with the key's prefix.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from ctxaudit.projects.models import AuditLogEntry, Project


def _client_ip(request: HttpRequest) -> str | None:
    # REMOTE_ADDR only: X-Forwarded-For is client-controlled unless a proxy rewrites it, and an
    # audit log must not record what the audited party chose to claim.
    ip = request.META.get("REMOTE_ADDR") or None
    return ip


def log_content_access(
    request: HttpRequest, event: Any, action: str, *, object_type: str | None = None
) -> AuditLogEntry:
    """Record that the requester (user or API key) accessed `event`'s content.

    `event`: an ingest Event, any model row with `project_id` and `pk`, or a Project (for a
    project-wide export); object_type defaults to its model name ("event", "project", ...).
    `action`: AuditLogEntry.Action value ("view", "export", "download", "api_read").
    Returns the new entry.
    """
    if action not in AuditLogEntry.Action.values:
        raise ValueError(
            f"unknown audit action {action!r}; expected one of {', '.join(AuditLogEntry.Action.values)}"
        )
    user = getattr(request, "user", None)
    authed = user is not None and user.is_authenticated
    key = getattr(request, "api_key", None)
    return AuditLogEntry.objects.create(
        project_id=event.pk if isinstance(event, Project) else event.project_id,
        user=user if authed else None,
        username=user.get_username() if user is not None and authed else "",
        api_key_prefix=key.prefix if key is not None else "",
        action=action,
        object_type=object_type or event._meta.model_name,
        object_id=str(event.pk),
        object_repr=str(event)[:200],
        path=request.get_full_path()[:500],
        ip=_client_ip(request),
    )
