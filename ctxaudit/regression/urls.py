from __future__ import annotations

from django.urls import path

from ctxaudit.regression import views

app_name = "regression"

urlpatterns = [
    path("events/<int:event_id>/checklist/", views.checklist, name="checklist"),
    path("events/<int:event_id>/checklist/steps/<int:step>/", views.checklist_step, name="checklist-step"),
    path("events/<int:event_id>/checklist/search/", views.checklist_search, name="checklist-search"),
    path("events/<int:event_id>/export.json", views.event_export, name="event-export"),
    path("events/<int:event_id>/session.json", views.session_export, name="session-export"),
    path("events/<int:event_id>/replay.json", views.replay_bundle, name="replay-bundle"),
    path("events/<int:event_id>/replay/", views.replay_run_create, name="replay-run-create"),
    path("events/<int:event_id>/regression-case/", views.regression_case_add, name="case-add"),
    path("replay-runs/<int:run_id>/", views.replay_run_detail, name="replay-run-detail"),
    path("symptoms/", views.symptom_guide, name="symptoms"),
    path("symptoms/incidents/", views.symptom_incidents, name="symptom-incidents"),
    path("regression/", views.regression_index, name="index"),
    path("projects/<int:project_id>/regression/", views.regression_set, name="set"),
    path("projects/<int:project_id>/regression.jsonl", views.regression_export, name="export"),
    path("projects/<int:project_id>/replay-endpoint/", views.replay_endpoint, name="replay-endpoint"),
    path("regression-cases/<int:case_id>/", views.regression_case_edit, name="case-edit"),
    path("regression-cases/<int:case_id>/delete/", views.regression_case_delete, name="case-delete"),
]
