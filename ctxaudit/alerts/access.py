"""Access helpers for alerts (Zulip style): members read, ops/admin change; outsiders get 404."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from ctxaudit.alerts.models import Alert, Channel
from ctxaudit.projects.access import projects_for_user, role_for_user
from ctxaudit.projects.models import Membership, Project

# Roles that may change alerts (acknowledge, resolve, assign, comment, mute). Reviewers read.
CHANGE_ROLES = frozenset({Membership.Role.OPS, Membership.Role.ADMIN})


def alerts_for_user(user: User | AnonymousUser) -> QuerySet[Alert]:
    return Alert.objects.filter(project__in=projects_for_user(user))


def alert_for_user(user: User | AnonymousUser, alert_id: int, *, change: bool = False) -> Alert:
    """The alert if `user` is a member of its project (else 404); with change=True the user must
    also hold an ops or admin role (else 403)."""
    alert = alerts_for_user(user).select_related("project", "assignee").filter(pk=alert_id).first()
    if alert is None:
        raise Http404("No such alert")
    if change and not can_change_alerts(user, alert.project):
        raise PermissionDenied("Only ops and admin members may change alerts")
    return alert


def can_change_alerts(user: User | AnonymousUser, project: Project) -> bool:
    return role_for_user(user, project) in CHANGE_ROLES


def changeable_project_ids(user: User | AnonymousUser) -> set[int]:
    if not user.is_authenticated:
        return set()
    if user.is_superuser:
        return set(projects_for_user(user).values_list("pk", flat=True))
    return set(
        Membership.objects.filter(user=user, role__in=CHANGE_ROLES).values_list("project_id", flat=True)
    )


def project_for_user(user: User | AnonymousUser, project_id: int, *, change: bool = False) -> Project:
    """A project the user is a member of (else 404); with change=True, as ops or admin (else 403)."""
    project = projects_for_user(user).filter(pk=project_id).first()
    if project is None:
        raise Http404("No such project")
    if change and not can_change_alerts(user, project):
        raise PermissionDenied("Only ops and admin members may change alert settings")
    return project


def channel_for_user(user: User | AnonymousUser, channel_id: int) -> Channel:
    """A notification channel of a project where the user is ops or admin (404 outside, 403 for reviewers)."""
    channel = (
        Channel.objects.filter(project__in=projects_for_user(user), pk=channel_id)
        .select_related("project")
        .first()
    )
    if channel is None:
        raise Http404("No such channel")
    if not can_change_alerts(user, channel.project):
        raise PermissionDenied("Only ops and admin members may change alert settings")
    return channel
