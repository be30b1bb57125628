"""Access helpers: the only way views fetch tenant-owned rows (Zulip style). Outsiders get 404."""

from __future__ import annotations

from collections.abc import Collection

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from ctxaudit.ingest.models import Event, Session
from ctxaudit.projects.models import Membership, Project


def projects_for_user(user: User | AnonymousUser) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user)


def role_for_user(user: User | AnonymousUser, project: Project) -> str | None:
    """The user's role in `project` ("admin" for superusers), or None for outsiders."""
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Membership.Role.ADMIN
    m = Membership.objects.filter(user=user, project=project).first()
    return m.role if m else None


def events_for_user(user: User | AnonymousUser) -> QuerySet[Event]:
    return Event.objects.filter(project__in=projects_for_user(user))


def events_of_projects(project_ids: Collection[int]) -> QuerySet[Event]:
    """The events of these projects, ids the caller read through projects_for_user (a page that
    lists the user's projects anyway scopes its rows by them instead of a membership subquery)."""
    if not project_ids:
        return Event.objects.none()
    return Event.objects.filter(project_id__in=list(project_ids))


def event_for_user(user: User | AnonymousUser, event_id: int) -> Event:
    event = events_for_user(user).select_related("project", "session").filter(pk=event_id).first()
    if event is None:
        raise Http404("No such event")
    return event


def session_for_user(user: User | AnonymousUser, session_pk: int) -> Session:
    session = (
        Session.objects.filter(project__in=projects_for_user(user), pk=session_pk)
        .select_related("project")
        .first()
    )
    if session is None:
        raise Http404("No such session")
    return session


def project_for_user(
    user: User | AnonymousUser, project_id: int, *, roles: tuple[str, ...] | None = None
) -> Project:
    """The project if `user` is a member (404 otherwise); with `roles`, 403 for members in other roles."""
    project = projects_for_user(user).filter(pk=project_id).first()
    if project is None:
        raise Http404("No such project")
    if roles is not None and role_for_user(user, project) not in roles:
        raise PermissionDenied("This needs the project's " + " or ".join(roles) + " role")
    return project


def project_for_admin(user: User | AnonymousUser, project_id: int) -> Project:
    """The project if `user` is its admin: 404 for outsiders, 403 for reviewers and ops."""
    return project_for_user(user, project_id, roles=(Membership.Role.ADMIN,))
