from __future__ import annotations

from django.urls import path

from ctxaudit.ui import project_views, timelines, views

app_name = "ui"

urlpatterns = [
    path("", views.event_list, name="event-list"),
    path("events/<int:event_id>/", views.event_detail, name="event-detail"),
    path("events/<int:event_id>/expand/", views.event_expand, name="event-expand"),
    path("sessions/<int:session_pk>/", timelines.session_detail, name="session-detail"),
    path("decay/", timelines.decay_overview_page, name="decay-overview"),
    path("projects/", project_views.project_list, name="project-list"),
    path("projects/<int:project_id>/settings/", project_views.project_settings, name="project-settings"),
    path("projects/<int:project_id>/members/", project_views.project_members, name="project-members"),
    path(
        "projects/<int:project_id>/members/<int:membership_id>/role/",
        project_views.member_role,
        name="project-member-role",
    ),
    path(
        "projects/<int:project_id>/members/<int:membership_id>/remove/",
        project_views.member_remove,
        name="project-member-remove",
    ),
    path("projects/<int:project_id>/keys/", project_views.project_keys, name="project-keys"),
    path(
        "projects/<int:project_id>/keys/<int:key_id>/revoke/",
        project_views.key_revoke,
        name="project-key-revoke",
    ),
    path("projects/<int:project_id>/audit-log/", project_views.project_audit_log, name="project-audit-log"),
]
