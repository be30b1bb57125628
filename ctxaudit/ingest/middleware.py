"""Body size limit (413) for the API, applied after gzip decompression.

Django's own DATA_UPLOAD_MAX_MEMORY_SIZE answers 400; clients need 413 to know to split or
compress, so the limit lives here. Decompression streams in chunks and stops at the limit, so a
gzip bomb costs at most CTXAUDIT_MAX_BODY_BYTES of memory.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from ctxaudit.core.http import is_api_write

_CHUNK = 64 * 1024


def _too_large(limit: int) -> JsonResponse:
    return JsonResponse(
        {"error": f"request body is larger than the limit of {limit} bytes", "field": "body"}, status=413
    )


class RequestBodyLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_api_write(request):
            limit = settings.CTXAUDIT_MAX_BODY_BYTES
            try:
                declared = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                declared = 0
            encoding = request.META.get("HTTP_CONTENT_ENCODING", "").strip().lower()
            if encoding not in ("", "identity", "gzip"):
                return JsonResponse(
                    {
                        "error": f"unsupported Content-Encoding {encoding!r}; use gzip",
                        "field": "Content-Encoding",
                    },
                    status=415,
                )
            # gzip rarely compresses JSON text better than 1000:1; a bigger claim is a bomb.
            if declared > limit:
                return _too_large(limit)
            raw = request.read(limit + 1)
            if len(raw) > limit:
                return _too_large(limit)
            if encoding == "gzip":
                try:
                    body = _gunzip_limited(raw, limit)
                except ValueError:
                    return _too_large(limit)
                except zlib.error:
                    return JsonResponse({"error": "body is not valid gzip", "field": "body"}, status=400)
                request._body = body  # noqa: SLF001 - replace the stream Django already consumed
                request.META["CONTENT_LENGTH"] = str(len(body))
            else:
                request._body = raw  # noqa: SLF001
        return self.get_response(request)


def _gunzip_limited(data: bytes, limit: int) -> bytes:
    """Decompress gzip `data`; raise ValueError once the output would pass `limit` bytes."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    view = memoryview(data)
    for i in range(0, len(data), _CHUNK):
        out += d.decompress(view[i : i + _CHUNK], limit + 1 - len(out))
        if len(out) > limit:
            raise ValueError("too large")
        while d.unconsumed_tail:
            out += d.decompress(d.unconsumed_tail, limit + 1 - len(out))
            if len(out) > limit:
                raise ValueError("too large")
    out += d.flush()
    if len(out) > limit:
        raise ValueError("too large")
    return bytes(out)
