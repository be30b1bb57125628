"""Writes for projects, members and keys."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from ctxaudit.projects.models import ApiKey, Membership, Project


class ProjectError(ValueError):
    """A refused change, with a message fit to show the admin."""


@transaction.atomic
def api_key_create(
    *,
    project_name: str | None = None,
    project: Project | None = None,
    name: str = "",
    scopes: Iterable[str] = ("ingest", "read"),
) -> tuple[ApiKey, str]:
    """Create a key (and, by name, the project if it is new). Returns (key, raw key): the raw key is shown once."""
    scopes = set(scopes)
    bad = scopes - set(ApiKey.SCOPES)
    if bad:
        raise ValueError(f"unknown scope(s): {', '.join(sorted(bad))}; expected {', '.join(ApiKey.SCOPES)}")
    if not scopes:
        raise ValueError(f"choose at least one scope: {', '.join(ApiKey.SCOPES)}")
    if project is None:
        if not project_name:
            raise ValueError("project or project_name is required")
        project, _ = Project.objects.get_or_create(name=project_name)
    prefix, raw = ApiKey.generate()
    key = ApiKey.objects.create(
        project=project, name=name, prefix=prefix, key_hash=ApiKey.hash_key(raw), scopes=sorted(scopes)
    )
    return key, raw


def api_key_revoke(*, key: ApiKey) -> ApiKey:
    """Revoke `key` (idempotent): from now on it answers 401."""
    ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    key.refresh_from_db()
    return key


def _admins_left(project: Project, *, without: Membership) -> int:
    return project.memberships.filter(role=Membership.Role.ADMIN).exclude(pk=without.pk).count()


def membership_add(*, project: Project, username: str, role: str) -> Membership:
    """Add an existing user to `project` with `role`; raises ProjectError for unknown users or duplicates."""
    if role not in Membership.Role.values:
        raise ProjectError(f"unknown role {role!r}")
    user = get_user_model().objects.filter(username=username.strip()).first()
    if user is None:
        raise ProjectError(f"no user named {username.strip()!r}")
    membership, created = Membership.objects.get_or_create(
        user=user, project=project, defaults={"role": role}
    )
    if not created:
        raise ProjectError(f"{user.get_username()} is already a member")
    return membership


@transaction.atomic
def membership_set_role(*, membership: Membership, role: str) -> Membership:
    """Change a member's role; a project always keeps at least one admin."""
    if role not in Membership.Role.values:
        raise ProjectError(f"unknown role {role!r}")
    locked = Membership.objects.select_for_update().get(pk=membership.pk)
    if (
        locked.role == Membership.Role.ADMIN
        and role != Membership.Role.ADMIN
        and _admins_left(locked.project, without=locked) == 0
    ):
        raise ProjectError("a project needs at least one admin")
    locked.role = role
    locked.save(update_fields=["role"])
    return locked


@transaction.atomic
def membership_remove(*, membership: Membership) -> None:
    """Remove a member; the last admin cannot be removed."""
    locked = Membership.objects.select_for_update().get(pk=membership.pk)
    if locked.role == Membership.Role.ADMIN and _admins_left(locked.project, without=locked) == 0:
        raise ProjectError("a project needs at least one admin")
    locked.delete()


def project_settings_update(
    *, project: Project, redact_pii: bool, retention_days: int, decay_compressions: int
) -> Project:
    """Save the project's settings (validated by the caller's form)."""
    project.redact_pii = redact_pii
    project.retention_days = retention_days
    project.decay_compressions = decay_compressions
    project.save(update_fields=["redact_pii", "retention_days", "decay_compressions"])
    return project
