from __future__ import annotations

from django.urls import path

from ctxaudit.ui import timelines, views

app_name = "ui"

urlpatterns = [
    path("", views.event_list, name="event-list"),
    path("events/<int:event_id>/", views.event_detail, name="event-detail"),
    path("events/<int:event_id>/expand/", views.event_expand, name="event-expand"),
    path("sessions/<int:session_pk>/", timelines.session_detail, name="session-detail"),
    path("decay/", timelines.decay_overview_page, name="decay-overview"),
]
