"""API key authentication for the machine-facing API."""

from __future__ import annotations

import hmac
import time

from django.conf import settings
from django.db.models import Exists, OuterRef
from django.http import HttpRequest
from django.utils import timezone
from ninja.errors import HttpError
from ninja.security import HttpBearer

from ctxaudit.projects.models import ApiKey, ProjectRule
from ctxaudit.projects.ratelimit import counter_incr


class RateLimited(HttpError):
    """429 with Retry-After (seconds): the key used up its requests for this minute."""

    def __init__(self, retry_after: int, limit: int) -> None:
        super().__init__(
            429,
            f"rate limit of {limit} requests per minute exceeded for this API key; retry after {retry_after}s",
        )
        self.retry_after = retry_after


def api_key_rate_limit(key: ApiKey, *, now: float | None = None) -> None:
    """Fixed one-minute window per key; raises RateLimited over CTXAUDIT_RATE_LIMIT_PER_MINUTE
    (0 = off).

    Counted in the shared cache when CACHE_URL names one, else in a file per key shared by every
    process on this host (projects/ratelimit.py). When the store is down the request is let
    through (fail open: logged and counted), so a stopped Redis never costs an event.
    """
    limit = settings.CTXAUDIT_RATE_LIMIT_PER_MINUTE
    if limit <= 0:
        return
    now = time.time() if now is None else now
    window = int(now // 60)
    count = counter_incr(key.prefix, window)
    if count is not None and count > limit:
        raise RateLimited(retry_after=max(1, int((window + 1) * 60 - now + 0.999)), limit=limit)


def api_key_lookup(raw: str) -> ApiKey | None:
    """The active key whose hash matches `raw` ("cta_<prefix>_<secret>"), else None.

    `key.project` comes with `has_rule_set` (bool): whether the project has a rule set now, read
    in the same query, so ingesting an event that brings its own rules or none at all does not
    ask again (ingest.services._own_rules; one round trip less per POST, issue 13)."""
    parts = raw.split("_", 2)
    if len(parts) != 3 or parts[0] != "cta":
        return None
    key = (
        ApiKey.objects.select_related("project")
        .annotate(project_has_rule_set=Exists(ProjectRule.objects.filter(project_id=OuterRef("project_id"))))
        .filter(prefix=parts[1], revoked_at__isnull=True)
        .first()
    )
    if key is None or not hmac.compare_digest(key.key_hash, ApiKey.hash_key(raw)):
        return None
    key.project.has_rule_set = key.project_has_rule_set  # type: ignore[attr-defined]
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
        api_key_rate_limit(key)
        # Throttle the write: last_used_at is informational, a minute of precision is plenty.
        now = timezone.now()
        if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        request.project = key.project  # type: ignore[attr-defined]
        request.api_key = key  # type: ignore[attr-defined]
        return key
