"""Writes for projects and keys."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from ctxaudit.projects.models import ApiKey, Project


@transaction.atomic
def api_key_create(*, project_name: str, name: str = "", scopes: Iterable[str] = ("ingest", "read")) -> tuple[ApiKey, str]:
    """Create a key (and the project if it is new). Returns (key, raw key): the raw key is shown once."""
    bad = set(scopes) - set(ApiKey.SCOPES)
    if bad:
        raise ValueError(f"unknown scope(s): {', '.join(sorted(bad))}; expected {', '.join(ApiKey.SCOPES)}")
    project, _ = Project.objects.get_or_create(name=project_name)
    prefix, raw = ApiKey.generate()
    key = ApiKey.objects.create(project=project, name=name, prefix=prefix, key_hash=ApiKey.hash_key(raw), scopes=sorted(set(scopes)))
    return key, raw
