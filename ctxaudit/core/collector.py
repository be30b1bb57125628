"""The garbage collector waits while an API write runs (engine/gcpause.py says why)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from ctxaudit.core.http import is_api_write
from ctxaudit.engine.gcpause import gc_paused


class CollectorPauseMiddleware:
    """For writes to the API and the OTLP receiver: a context's body parses into tens of thousands
    of dicts and lists, and checking it (in the request, in the embedded default) into hundreds of
    thousands more, all freed by reference counting; the cyclic collector would walk them every
    700 allocations and now and then walk the whole process. Pages and reads are left alone."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_api_write(request):
            with gc_paused():
                return self.get_response(request)
        return self.get_response(request)
