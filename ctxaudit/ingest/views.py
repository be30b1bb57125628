"""POST /v1/traces: OTLP/HTTP trace export (JSON or protobuf, gzip via the body-limit middleware).

Answers as the OTLP/HTTP specification says (opentelemetry-proto docs/specification.md,
"OTLP/HTTP Response"): 200 with an ExportTraceServiceResponse in the request's encoding, carrying
`partial_success` {rejected_spans, error_message} when some spans were refused or left unpaired;
400 with a google.rpc.Status for a body that is not an export; 401/403 for the key; 429/503
with Retry-After, which exporters honour before retrying.
"""

from __future__ import annotations

import json
import logging

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from ctxaudit.engine.formats import ContextFormatError
from ctxaudit.engine.otlp import OtlpError, spans_from_json, spans_from_protobuf
from ctxaudit.ingest.otlp import traces_ingest
from ctxaudit.projects.auth import RateLimited, api_key_lookup, api_key_rate_limit

logger = logging.getLogger(__name__)

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
# gRPC status codes used in google.rpc.Status bodies.
_INVALID_ARGUMENT, _UNAUTHENTICATED, _PERMISSION_DENIED, _RESOURCE_EXHAUSTED, _UNAVAILABLE = 3, 16, 7, 8, 14


@csrf_exempt
@require_POST
def otlp_traces(request: HttpRequest) -> HttpResponse:
    ctype = request.content_type or ""
    binary = ctype == PROTOBUF
    if not binary and ctype != JSON:
        return _status(
            415, _INVALID_ARGUMENT, f"Content-Type must be {PROTOBUF} or {JSON}, not {ctype!r}", binary=False
        )
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    key = api_key_lookup(token.strip()) if scheme.lower() == "bearer" else None
    if key is None:
        return _status(
            401, _UNAUTHENTICATED, "send the project's API key as Authorization: Bearer <key>", binary
        )
    if "ingest" not in key.scopes:
        return _status(403, _PERMISSION_DENIED, "this API key lacks the 'ingest' scope", binary)
    try:
        api_key_rate_limit(key)
    except RateLimited as exc:
        return _status(429, _RESOURCE_EXHAUSTED, str(exc), binary, retry_after=exc.retry_after)
    try:
        spans = spans_from_protobuf(request.body) if binary else spans_from_json(request.body)
        result = traces_ingest(project=key.project, spans=spans)
    except OtlpError as exc:
        return _status(400, _INVALID_ARGUMENT, str(exc), binary)
    except ContextFormatError as exc:
        return _status(400, _INVALID_ARGUMENT, f"a GenAI span's messages cannot be read: {exc}", binary)
    except DatabaseError:
        logger.exception("OTLP export could not be stored")
        return _status(503, _UNAVAILABLE, "storage is unavailable; retry later", binary, retry_after=5)
    return _export_response(len(result.rejected), result.message(), binary)


def _export_response(rejected: int, message: str, binary: bool) -> HttpResponse:
    if binary:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        resp = ExportTraceServiceResponse()
        if rejected or message:
            resp.partial_success.rejected_spans = rejected
            resp.partial_success.error_message = message
        return HttpResponse(resp.SerializeToString(), content_type=PROTOBUF)
    body: dict[str, object] = {}
    if rejected or message:
        # OTLP JSON writes int64 as a decimal string.
        body["partialSuccess"] = {"rejectedSpans": str(rejected), "errorMessage": message}
    return HttpResponse(json.dumps(body), content_type=JSON)


def _status(http: int, code: int, message: str, binary: bool, retry_after: int | None = None) -> HttpResponse:
    """A google.rpc.Status body {code, message} in the request's encoding."""
    if binary:
        data = message.encode()
        # Status: field 1 code (varint), field 2 message (length-delimited); both small here.
        body = bytes([0x08, code]) + bytes([0x12]) + _varint(len(data)) + data
        resp = HttpResponse(body, status=http, content_type=PROTOBUF)
    else:
        resp = HttpResponse(json.dumps({"code": code, "message": message}), status=http, content_type=JSON)
    if retry_after is not None:
        resp["Retry-After"] = str(retry_after)
    return resp


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)
