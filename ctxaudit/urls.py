from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from ctxaudit.ingest.api import api

urlpatterns = [
    path("api/v1/", api.urls),
    path("login/", auth_views.LoginView.as_view(template_name="ui/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("alerts/", include("ctxaudit.alerts.urls")),
    path("", include("ctxaudit.ui.urls")),
    path("", include("ctxaudit.regression.urls")),
]
