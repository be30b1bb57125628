"""Project administration pages: settings, members, API keys, the content-access audit log.

Every page goes through projects.access.project_for_admin: 404 for outsiders, 403 for members
who are not the project's admin. The project list is open to every member.
"""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ctxaudit.projects.access import project_for_admin, projects_for_user, role_for_user
from ctxaudit.projects.models import ApiKey, Membership, Project
from ctxaudit.projects.services import (
    ProjectError,
    api_key_create,
    api_key_revoke,
    membership_add,
    membership_remove,
    membership_set_role,
    project_settings_update,
)

AUDIT_PAGE_SIZE = 100


class ProjectSettingsForm(forms.Form):
    redact_pii = forms.BooleanField(required=False, label="Redact PII at ingestion")
    retention_days = forms.IntegerField(
        min_value=0, max_value=36500, label="Keep events for (days, 0 = forever)"
    )
    decay_compressions = forms.IntegerField(
        min_value=2, max_value=100, label="Decay finding after N compressions"
    )


class MemberAddForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Membership.Role.choices)


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.Role.choices)


class ApiKeyForm(forms.Form):
    name = forms.CharField(max_length=100, required=False)
    scopes = forms.MultipleChoiceField(
        choices=[(s, s) for s in ApiKey.SCOPES], widget=forms.CheckboxSelectMultiple
    )


@login_required
@require_GET
def project_list(request: HttpRequest) -> HttpResponse:
    projects = [(p, role_for_user(request.user, p)) for p in projects_for_user(request.user)]
    return render(request, "ui/projects/list.html", {"projects": projects})


@login_required
@require_http_methods(["GET", "POST"])
def project_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_for_admin(request.user, project_id)
    initial = {
        "redact_pii": project.redact_pii,
        "retention_days": project.retention_days,
        "decay_compressions": project.decay_compressions,
    }
    form = ProjectSettingsForm(request.POST or None, initial=initial)
    saved = False
    if request.method == "POST" and form.is_valid():
        project_settings_update(project=project, **form.cleaned_data)
        saved = True
    return render(
        request,
        "ui/projects/settings.html",
        {"project": project, "form": form, "saved": saved, "tab": "settings"},
    )


def _members_page(
    request: HttpRequest,
    project: Project,
    *,
    error: str = "",
    form: MemberAddForm | None = None,
    status: int = 200,
) -> HttpResponse:
    members = project.memberships.select_related("user").order_by("user__username")
    ctx = {
        "project": project,
        "members": members,
        "form": form or MemberAddForm(),
        "roles": Membership.Role.choices,
        "error": error,
        "tab": "members",
    }
    return render(request, "ui/projects/members.html", ctx, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def project_members(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_for_admin(request.user, project_id)
    if request.method == "GET":
        return _members_page(request, project)
    form = MemberAddForm(request.POST)
    if not form.is_valid():
        return _members_page(request, project, form=form, status=400)
    try:
        membership_add(
            project=project, username=form.cleaned_data["username"], role=form.cleaned_data["role"]
        )
    except ProjectError as exc:
        return _members_page(request, project, form=form, error=str(exc), status=400)
    return redirect("ui:project-members", project_id=project.pk)


@login_required
@require_POST
def member_role(request: HttpRequest, project_id: int, membership_id: int) -> HttpResponse:
    project = project_for_admin(request.user, project_id)
    membership = get_object_or_404(project.memberships, pk=membership_id)
    form = MemberRoleForm(request.POST)
    if not form.is_valid():
        return _members_page(request, project, error="choose a valid role", status=400)
    try:
        membership_set_role(membership=membership, role=form.cleaned_data["role"])
    except ProjectError as exc:
        return _members_page(request, project, error=str(exc), status=400)
    return redirect("ui:project-members", project_id=project.pk)


@login_required
@require_POST
def member_remove(request: HttpRequest, project_id: int, membership_id: int) -> HttpResponse:
    project = project_for_admin(request.user, project_id)
    membership = get_object_or_404(project.memberships, pk=membership_id)
    try:
        membership_remove(membership=membership)
    except ProjectError as exc:
        return _members_page(request, project, error=str(exc), status=400)
    return redirect("ui:project-members", project_id=project.pk)


@never_cache  # the POST answer carries a raw key, shown once: no cache may keep it
@login_required
@require_http_methods(["GET", "POST"])
def project_keys(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_for_admin(request.user, project_id)
    form = ApiKeyForm(request.POST or None, initial={"scopes": ["ingest"]})
    new_key = raw_key = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            new_key, raw_key = api_key_create(
                project=project, name=form.cleaned_data["name"], scopes=form.cleaned_data["scopes"]
            )
            form = ApiKeyForm(initial={"scopes": ["ingest"]})
        else:
            status = 400
    keys = project.api_keys.order_by("revoked_at", "-created_at")
    ctx = {
        "project": project,
        "form": form,
        "keys": keys,
        "new_key": new_key,
        "raw_key": raw_key,
        "tab": "keys",
    }
    return render(request, "ui/projects/keys.html", ctx, status=status)


@login_required
@require_POST
def key_revoke(request: HttpRequest, project_id: int, key_id: int) -> HttpResponse:
    project = project_for_admin(request.user, project_id)
    api_key_revoke(key=get_object_or_404(project.api_keys, pk=key_id))
    return redirect("ui:project-keys", project_id=project.pk)


@login_required
@require_GET
def project_audit_log(request: HttpRequest, project_id: int) -> HttpResponse:
    project = project_for_admin(request.user, project_id)
    page = Paginator(project.audit_log.all(), AUDIT_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "ui/projects/audit_log.html", {"project": project, "page": page, "tab": "audit"})
