"""API key authentication for the machine-facing API."""

from __future__ import annotations

import hmac
import time

from django.conf import settings
from django.db import connection
from django.http import HttpRequest
from django.utils import timezone
from ninja.errors import HttpError
from ninja.security import HttpBearer

from ctxaudit.projects.models import ApiKey, Project, ProjectRule
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


def _lookup_sql() -> str:
    """The key (its columns as the model names them), its project's columns as `project__<name>`,
    and whether that project has a rule set: one statement, `%s` the prefix."""
    key, project, rule = ApiKey._meta.db_table, Project._meta.db_table, ProjectRule._meta.db_table
    qn = connection.ops.quote_name
    cols = [f"k.{qn(str(f.column))}" for f in ApiKey._meta.concrete_fields]
    cols += [f"p.{qn(str(f.column))} AS {qn('project__' + f.attname)}" for f in Project._meta.concrete_fields]
    return (
        f"SELECT {', '.join(cols)}, EXISTS(SELECT 1 FROM {rule} r WHERE r.project_id = k.project_id) "  # noqa: S608 - names from the models; the prefix is a parameter
        f"AS {qn('project_has_rule_set')} FROM {key} k JOIN {project} p ON p.id = k.project_id "
        "WHERE k.prefix = %s AND k.revoked_at IS NULL"
    )


def _project_of(key: ApiKey) -> Project:
    """The Project whose columns the lookup read beside the key, converted as the ORM would."""
    values = []
    for f in Project._meta.concrete_fields:
        value = getattr(key, "project__" + f.attname)
        col = f.get_col(Project._meta.db_table)
        for convert in connection.ops.get_db_converters(col) + f.get_db_converters(connection):
            value = convert(value, col, connection)
        values.append(value)
    project = Project.from_db(connection.alias, [f.attname for f in Project._meta.concrete_fields], values)
    project.has_rule_set = bool(key.project_has_rule_set)  # type: ignore[attr-defined]
    return project


def api_key_lookup(raw: str) -> ApiKey | None:
    """The active key whose hash matches `raw` ("cta_<prefix>_<secret>"), else None.

    `key.project` comes with `has_rule_set` (bool): whether the project has a rule set now, read
    in the same query, so ingesting an event that brings its own rules or none at all does not
    ask again (ingest.services._own_rules; one round trip less per POST, issue 13). Written as
    SQL (a raw queryset, so the key's columns are converted as usual): building and compiling the
    ORM's select_related + Exists cost more than the database took to answer (~0.5 of 1.3 ms,
    on every API request)."""
    parts = raw.split("_", 2)
    if len(parts) != 3 or parts[0] != "cta":
        return None
    key = next(iter(ApiKey.objects.raw(_lookup_sql(), [parts[1]])), None)
    if key is None or not hmac.compare_digest(key.key_hash, ApiKey.hash_key(raw)):
        return None
    key.project = _project_of(key)
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
