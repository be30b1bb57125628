"""Every human-facing page, by noun. Three URL namespaces (ui, alerts, regression) because the
templates name their URLs that way; ctxaudit/urls.py mounts them."""

from __future__ import annotations

from django.urls import path

from ctxaudit.ui import alerts, events, projects, regression, rules, timelines

app_name = "ui"

urlpatterns = [
    path("", events.event_list, name="event-list"),
    path("events/<int:event_id>/", events.event_detail, name="event-detail"),
    path("events/<int:event_id>/expand/", events.event_expand, name="event-expand"),
    path("sessions/", timelines.session_list, name="session-list"),
    path("sessions/<int:session_pk>/", timelines.session_detail, name="session-detail"),
    path("decay/", timelines.decay_overview_page, name="decay-overview"),
    path("projects/", projects.project_list, name="project-list"),
    path("projects/<int:project_id>/settings/", projects.project_settings, name="project-settings"),
    path("projects/<int:project_id>/members/", projects.project_members, name="project-members"),
    path(
        "projects/<int:project_id>/members/<int:membership_id>/role/",
        projects.member_role,
        name="project-member-role",
    ),
    path(
        "projects/<int:project_id>/members/<int:membership_id>/remove/",
        projects.member_remove,
        name="project-member-remove",
    ),
    path("projects/<int:project_id>/keys/", projects.project_keys, name="project-keys"),
    path("projects/<int:project_id>/rules/", rules.project_rules, name="project-rules"),
    path(
        "projects/<int:project_id>/keys/<int:key_id>/revoke/",
        projects.key_revoke,
        name="project-key-revoke",
    ),
    path("projects/<int:project_id>/audit-log/", projects.project_audit_log, name="project-audit-log"),
]

alerts_urlpatterns = [
    path("", alerts.alert_list, name="list"),
    path("summary/", alerts.alert_summary, name="summary"),
    path("acknowledge/", alerts.alert_bulk_acknowledge, name="bulk-acknowledge"),
    path("<int:alert_id>/", alerts.alert_detail, name="detail"),
    path("<int:alert_id>/status/", alerts.alert_status, name="status"),
    path("<int:alert_id>/assign/", alerts.alert_assign, name="assign"),
    path("<int:alert_id>/comments/", alerts.alert_comment, name="comment"),
    path("<int:alert_id>/mute/", alerts.alert_mute, name="mute"),
    path("projects/<int:project_id>/", alerts.alert_settings, name="settings"),
    path("projects/<int:project_id>/policy/", alerts.alert_policy_edit, name="policy-edit"),
    path("projects/<int:project_id>/channels/", alerts.alert_channel_add, name="channel-add"),
    path("channels/<int:channel_id>/toggle/", alerts.alert_channel_toggle, name="channel-toggle"),
    path("projects/<int:project_id>/windows/", alerts.alert_window_add, name="window-add"),
    path("windows/<int:window_id>/", alerts.alert_window_edit, name="window-edit"),
    path("windows/<int:window_id>/delete/", alerts.alert_window_delete, name="window-delete"),
    path("channels/<int:channel_id>/test/", alerts.alert_channel_test, name="channel-test"),
]

regression_urlpatterns = [
    path("events/<int:event_id>/checklist/", regression.checklist, name="checklist"),
    path(
        "events/<int:event_id>/checklist/steps/<int:step>/", regression.checklist_step, name="checklist-step"
    ),
    path("events/<int:event_id>/checklist/search/", regression.checklist_search, name="checklist-search"),
    path("events/<int:event_id>/export.json", regression.event_export, name="event-export"),
    path("events/<int:event_id>/session.json", regression.session_export, name="session-export"),
    path("events/<int:event_id>/replay.json", regression.replay_bundle, name="replay-bundle"),
    path("events/<int:event_id>/replay/", regression.replay_run_create, name="replay-run-create"),
    path("events/<int:event_id>/regression-case/", regression.regression_case_add, name="case-add"),
    path("replay-runs/<int:run_id>/", regression.replay_run_detail, name="replay-run-detail"),
    path("symptoms/", regression.symptom_guide, name="symptoms"),
    path("symptoms/incidents/", regression.symptom_incidents, name="symptom-incidents"),
    path("regression/", regression.regression_index, name="index"),
    path("projects/<int:project_id>/regression/", regression.regression_set, name="set"),
    path("projects/<int:project_id>/regression.jsonl", regression.regression_export, name="export"),
    path(
        "projects/<int:project_id>/regression/export/<str:kind>/",
        regression.regression_export_as,
        name="export-as",
    ),
    path("projects/<int:project_id>/compare/", regression.regression_compare, name="compare"),
    path("projects/<int:project_id>/replay-endpoint/", regression.replay_endpoint, name="replay-endpoint"),
    path("regression-cases/<int:case_id>/", regression.regression_case_edit, name="case-edit"),
    path("regression-cases/<int:case_id>/delete/", regression.regression_case_delete, name="case-delete"),
]
