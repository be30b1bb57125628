from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from ctxaudit.api import api
from ctxaudit.ingest.views import otlp_traces
from ctxaudit.ui.urls import alerts_urlpatterns, regression_urlpatterns

urlpatterns = [
    path("api/v1/", api.urls),
    # OTLP/HTTP exporters post to <endpoint>/v1/traces.
    path("v1/traces", otlp_traces, name="otlp-traces"),
    path("login/", auth_views.LoginView.as_view(template_name="ui/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("alerts/", include((alerts_urlpatterns, "alerts"))),
    path("", include("ctxaudit.ui.urls")),
    path("", include((regression_urlpatterns, "regression"))),
]
