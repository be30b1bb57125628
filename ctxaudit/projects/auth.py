"""API key authentication for the machine-facing API."""

from __future__ import annotations

import hmac

from django.http import HttpRequest
from django.utils import timezone
from ninja.errors import HttpError
from ninja.security import HttpBearer

from ctxaudit.projects.models import ApiKey


def api_key_lookup(raw: str) -> ApiKey | None:
    """The active key whose hash matches `raw` ("cta_<prefix>_<secret>"), else None."""
    parts = raw.split("_", 2)
    if len(parts) != 3 or parts[0] != "cta":
        return None
    key = ApiKey.objects.select_related("project").filter(prefix=parts[1], revoked_at__isnull=True).first()
    if key is None or not hmac.compare_digest(key.key_hash, ApiKey.hash_key(raw)):
        return None
    return key


class ApiKeyAuth(HttpBearer):
    """Bearer key with a required scope: 401 for a missing/unknown key, 403 for a missing scope."""

    def __init__(self, scope: str) -> None:
        super().__init__()
        self.scope = scope

    def authenticate(self, request: HttpRequest, token: str) -> ApiKey | None:
        key = api_key_lookup(token)
        if key is None:
            return None
        if self.scope not in key.scopes:
            raise HttpError(403, f"this API key lacks the {self.scope!r} scope")
        # Throttle the write: last_used_at is informational, a minute of precision is plenty.
        now = timezone.now()
        if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        request.project = key.project  # type: ignore[attr-defined]
        request.api_key = key  # type: ignore[attr-defined]
        return key
