"""OTLP traces → GenAI inference calls → the context each call saw.

Reads an OTLP/HTTP `ExportTraceServiceRequest` in either encoding and keeps the spans that
describe one model call under the OpenTelemetry GenAI semantic conventions:
`gen_ai.system_instructions` (JSON: a list of parts), `gen_ai.input.messages` and
`gen_ai.output.messages` (JSON: `[{"role", "parts": [...]}]`), `gen_ai.conversation.id`,
`gen_ai.request.model` / `gen_ai.response.model`.

Sources: the OTLP specification (opentelemetry-proto `opentelemetry/proto/trace/v1/trace.proto`;
OTLP/HTTP JSON keeps field names lowerCamelCase, trace/span ids as hex strings, 64-bit integers
as decimal strings) and open-telemetry/semantic-conventions
docs/gen-ai/gen-ai-input-messages.json at 095a2a1979eb50e5fce8bf583e27d6f65f9f0f74 (ChatMessage:
role + parts; TextPart `{"type": "text", "content"}`, ToolCallRequestPart `{"type":
"tool_call", "name", "arguments"}`, ToolCallResponsePart `{"type": "tool_call_response",
"response"}`, GenericPart for anything else).

A call is a compaction when it carries `gen_ai.conversation.compacted = true` or a part of type
"compaction" in its input messages (that part's text is the summary the model then saw). The
protobuf encoding needs the `opentelemetry-proto` package; the JSON one needs nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

COMPACTED_ATTR = "gen_ai.conversation.compacted"
# Part types that stand for a compaction summary in an input message (a GenericPart of the convention).
COMPACTION_PART_TYPES = frozenset({"compaction", "compaction_summary", "summary"})


class OtlpError(ValueError):
    """The request body is not an OTLP trace export (message says why)."""


@dataclass(frozen=True, slots=True)
class OtlpSpan:
    """One span, encoding-independent: ids as lowercase hex, times in ns since the epoch."""

    trace_id: str
    span_id: str
    name: str
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GenAiCall:
    """One model call: what it saw (`context`: `[{"role", "content", "kind"?}]`), what it said."""

    span: OtlpSpan
    conversation_id: str
    model: str
    context: list[dict[str, Any]]
    output: list[dict[str, Any]]
    compacted: bool


class SpanProblem(ValueError):
    """A GenAI span whose message attributes cannot be read; the export rejects that span only."""


# --- decoding ----------------------------------------------------------------------------------


def spans_from_json(body: bytes) -> list[OtlpSpan]:
    """The spans of an OTLP/HTTP JSON export. Raises OtlpError on a body that is not one."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise OtlpError(f"body is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise OtlpError("body must be an ExportTraceServiceRequest object with resourceSpans")
    out: list[OtlpSpan] = []
    for rs in _list(data.get("resourceSpans", data.get("resource_spans")), "resourceSpans"):
        for ss in _list(rs.get("scopeSpans", rs.get("scope_spans")), "scopeSpans"):
            for sp in _list(ss.get("spans"), "spans"):
                out.append(
                    OtlpSpan(
                        trace_id=str(sp.get("traceId", sp.get("trace_id", ""))).lower(),
                        span_id=str(sp.get("spanId", sp.get("span_id", ""))).lower(),
                        name=str(sp.get("name", "")),
                        end_ns=_int(sp.get("endTimeUnixNano", sp.get("end_time_unix_nano", 0))),
                        attributes=_json_attributes(sp.get("attributes")),
                    )
                )
    return out


def spans_from_protobuf(body: bytes) -> list[OtlpSpan]:
    """The spans of an OTLP/HTTP protobuf export. Raises OtlpError (also when opentelemetry-proto
    is not installed)."""
    try:
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError as exc:  # pragma: no cover - a dependency of the server
        raise OtlpError("protobuf OTLP needs the opentelemetry-proto package; send JSON instead") from exc
    req = ExportTraceServiceRequest()
    try:
        req.ParseFromString(body)
    except DecodeError as exc:
        raise OtlpError(f"body is not an OTLP protobuf ExportTraceServiceRequest: {exc}") from exc
    out: list[OtlpSpan] = []
    for rs in req.resource_spans:
        for ss in rs.scope_spans:
            for sp in ss.spans:
                out.append(
                    OtlpSpan(
                        trace_id=sp.trace_id.hex(),
                        span_id=sp.span_id.hex(),
                        name=sp.name,
                        end_ns=sp.end_time_unix_nano,
                        attributes={kv.key: _pb_value(kv.value) for kv in sp.attributes},
                    )
                )
    return out


def _list(value: Any, name: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise OtlpError(f"{name} must be a list of objects")
    return value


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _json_attributes(raw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in raw if isinstance(raw, list) else []:
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = _json_value(kv.get("value"))
    return out


def _json_value(v: Any) -> Any:
    """An OTLP JSON AnyValue → a Python value."""
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "string_value"):
        if key in v:
            return v[key]
    for key in ("boolValue", "bool_value"):
        if key in v:
            return bool(v[key])
    for key in ("intValue", "int_value"):
        if key in v:
            return _int(v[key])
    for key in ("doubleValue", "double_value"):
        if key in v:
            return float(v[key])
    for key in ("arrayValue", "array_value"):
        if key in v:
            return [_json_value(x) for x in (v[key] or {}).get("values", [])]
    for key in ("kvlistValue", "kvlist_value"):
        if key in v:
            return _json_attributes((v[key] or {}).get("values", []))
    return None


def _pb_value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_pb_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _pb_value(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind) if kind else None


# --- GenAI calls ------------------------------------------------------------------------------


def genai_call(span: OtlpSpan) -> GenAiCall | None:
    """The model call a span describes, or None for spans that are not GenAI inference spans
    (no input messages). Raises SpanProblem when its message attributes cannot be read."""
    attrs = span.attributes
    raw_input = attrs.get("gen_ai.input.messages")
    if raw_input is None:
        return None
    system = _parts_text(
        _decoded(attrs.get("gen_ai.system_instructions"), "gen_ai.system_instructions") or []
    )
    messages = _decoded(raw_input, "gen_ai.input.messages")
    outputs = _decoded(attrs.get("gen_ai.output.messages"), "gen_ai.output.messages") or []
    if not isinstance(messages, list) or not isinstance(outputs, list):
        raise SpanProblem("gen_ai.input.messages and gen_ai.output.messages must be JSON lists of messages")
    context: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    compacted = attrs.get(COMPACTED_ATTR) in (True, "true", "True", 1)
    for i, m in enumerate(messages):
        msgs, had_compaction = _message(m, f"gen_ai.input.messages[{i}]")
        context += msgs
        compacted = compacted or had_compaction
    output: list[dict[str, Any]] = []
    for i, m in enumerate(outputs):
        output += _message(m, f"gen_ai.output.messages[{i}]")[0]
    conversation = attrs.get("gen_ai.conversation.id")
    model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model") or ""
    return GenAiCall(
        span=span,
        conversation_id=str(conversation) if conversation not in (None, "") else f"trace-{span.trace_id}",
        model=str(model),
        context=context,
        output=output,
        compacted=compacted,
    )


def _decoded(value: Any, name: str) -> Any:
    if value is None or isinstance(value, list | dict):
        return value
    if not isinstance(value, str):
        raise SpanProblem(f"{name} must be a JSON string")
    try:
        return json.loads(value)
    except ValueError as exc:
        raise SpanProblem(f"{name} is not valid JSON: {exc}") from exc


def _message(m: Any, where: str) -> tuple[list[dict[str, Any]], bool]:
    """One convention ChatMessage → our messages (a tool response becomes role "tool")."""
    if not isinstance(m, dict):
        raise SpanProblem(f"{where} must be an object with role and parts")
    role = str(m.get("role") or "user")
    parts = m.get("parts")
    if parts is None and isinstance(m.get("content"), str):  # older instrumentations
        parts = [{"type": "text", "content": m["content"]}]
    if not isinstance(parts, list):
        raise SpanProblem(f"{where}.parts must be a list")
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    compaction = False
    for p in parts:
        if not isinstance(p, dict):
            continue
        ptype = p.get("type")
        if ptype in COMPACTION_PART_TYPES:
            compaction = True
            out.append({"role": role, "content": _text_of(p), "kind": "compact_summary"})
        elif ptype == "tool_call_response":
            response = p.get("response")
            out.append(
                {"role": "tool", "content": response if isinstance(response, str) else _json(response)}
            )
        elif ptype == "tool_call":
            texts.append(f"[tool call {p.get('name', '?')}({_json(p.get('arguments'))})]")
        elif ptype == "text":
            texts.append(str(p.get("content", "")))
        elif ptype in ("reasoning", "thinking"):
            continue  # the model's own scratch work, not an instruction
        else:
            texts.append(f"[{ptype}]" if ptype in ("blob", "file_data", "uri") else _json(p))
    if texts:
        out.insert(0, {"role": role, "content": "\n".join(texts)})
    return out, compaction


def _text_of(p: dict[str, Any]) -> str:
    for key in ("content", "text", "summary"):
        if isinstance(p.get(key), str):
            return str(p[key])
    return ""


def _parts_text(parts: Any) -> str:
    if isinstance(parts, str):
        return parts
    if isinstance(parts, dict):
        parts = [parts]
    return "\n".join(_text_of(p) for p in parts if isinstance(p, dict) and p.get("type", "text") == "text")


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def calls_in_order(spans: list[OtlpSpan]) -> tuple[list[GenAiCall], list[tuple[OtlpSpan, str]]]:
    """The GenAI calls of an export in end-time order, and the spans rejected with the reason."""
    calls: list[GenAiCall] = []
    rejected: list[tuple[OtlpSpan, str]] = []
    for span in spans:
        try:
            call = genai_call(span)
        except SpanProblem as exc:
            rejected.append((span, str(exc)))
            continue
        if call is not None:
            calls.append(call)
    calls.sort(key=lambda c: (c.span.end_ns, c.span.span_id))
    return calls, rejected
