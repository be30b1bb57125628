"""Typed request classes for views (what the middleware and auth put on a request)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from ctxaudit.projects.models import ApiKey, Project


class AuthedRequest(HttpRequest):
    """A request behind @login_required: `user` is a real user; django-htmx sets `htmx`."""

    user: User
    htmx: HtmxDetails


class ApiRequest(HttpRequest):
    """A request that passed ApiKeyAuth: the key and its project are on it."""

    api_key: ApiKey
    project: Project


_WRITES = ("POST", "PUT", "PATCH")


def is_api_write(request: HttpRequest) -> bool:
    """A write to the API or to the OTLP receiver (POST/PUT/PATCH under /api/, or /v1/traces): the
    requests that carry a context body."""
    return request.method in _WRITES and (request.path.startswith("/api/") or request.path == "/v1/traces")
