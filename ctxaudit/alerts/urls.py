from __future__ import annotations

from django.urls import path

from ctxaudit.alerts import views

app_name = "alerts"

urlpatterns = [
    path("", views.alert_list, name="list"),
    path("summary/", views.alert_summary, name="summary"),
    path("acknowledge/", views.alert_bulk_acknowledge, name="bulk-acknowledge"),
    path("<int:alert_id>/", views.alert_detail, name="detail"),
    path("<int:alert_id>/status/", views.alert_status, name="status"),
    path("<int:alert_id>/assign/", views.alert_assign, name="assign"),
    path("<int:alert_id>/comments/", views.alert_comment, name="comment"),
    path("<int:alert_id>/mute/", views.alert_mute, name="mute"),
    path("projects/<int:project_id>/", views.alert_settings, name="settings"),
    path("projects/<int:project_id>/policy/", views.alert_policy_edit, name="policy-edit"),
    path("projects/<int:project_id>/channels/", views.alert_channel_add, name="channel-add"),
    path("channels/<int:channel_id>/toggle/", views.alert_channel_toggle, name="channel-toggle"),
    path("channels/<int:channel_id>/test/", views.alert_channel_test, name="channel-test"),
]
