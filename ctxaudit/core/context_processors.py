from __future__ import annotations

from typing import Any

from django.http import HttpRequest


def csp_nonce(request: HttpRequest) -> dict[str, Any]:
    """`csp_nonce` for `{% htmx_script %}` (django-htmx reads that name; django-csp's own
    processor calls it CSP_NONCE). Lazy: a page without a script tag adds no nonce."""
    return {"csp_nonce": getattr(request, "csp_nonce", None)}
