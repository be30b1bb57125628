"""Refuse NUL characters in URLs, query strings, forms and headers: 400 with a message.

PostgreSQL cannot store or compare a string holding U+0000 ("A string literal cannot contain NUL
(0x00) characters"), so a `?session=%00` filter or a comment containing one used to reach the
database and answer 500. No legitimate filter, form or header value contains NUL, so it is
refused before any view runs, naming the parameter. (JSON bodies are different: contexts may
hold anything, and ingest/sanitize.py replaces NUL with U+FFFD before storing.)
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.datastructures import MultiValueDict

_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _nul_in(data: MultiValueDict[str, str]) -> str | None:
    for key, values in data.lists():
        if "\x00" in key or any("\x00" in v for v in values if isinstance(v, str)):
            return key.replace("\x00", "\\0")
    return None


def nul_problem(request: HttpRequest) -> tuple[str, str] | None:
    """(field, message) for the first NUL in the request's path, query string, form or headers."""
    if "\x00" in request.path:
        return "path", "the URL path contains a NUL character (%00), which is not allowed"
    name = _nul_in(request.GET)
    if name is not None:
        return name, f"query parameter {name!r} contains a NUL character (%00), which is not allowed"
    if request.method in ("POST", "PUT", "PATCH") and request.content_type in _FORM_TYPES:
        name = _nul_in(request.POST)
        if name is not None:
            return name, f"form field {name!r} contains a NUL character, which is not allowed"
    for meta_key, value in request.META.items():
        if meta_key.startswith("HTTP_") and isinstance(value, str) and "\x00" in value:
            header = meta_key[5:].replace("_", "-").title()
            return header, f"header {header} contains a NUL character, which is not allowed"
    return None


class RejectNulMiddleware:
    """400 for NUL anywhere but a JSON body: JSON {"error", "field"} under /api/, plain text elsewhere."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = nul_problem(request)
        if problem is None:
            return self.get_response(request)
        field, message = problem
        if request.path.startswith("/api/"):
            return JsonResponse({"error": message, "field": field}, status=400)
        return HttpResponse(
            f"Bad request: {message}.\n", status=400, content_type="text/plain; charset=utf-8"
        )
