"""POST /v1/traces: OTLP/HTTP exports (JSON and protobuf, gzip) → compression events."""

from __future__ import annotations

import gzip
import json

import pytest

from ctxaudit.ingest.models import ConversationCall, Event

pytestmark = pytest.mark.django_db

RULE = "Never refund more than $100 without a manager's approval."
SYSTEM_BEFORE = f"You are the refund agent of Acme. {RULE}"
SYSTEM_AFTER = "You are the refund agent of Acme."


def _attr(key, value):
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _parts(text):
    return [{"type": "text", "content": text}]


def _span(span_id, end_ns, system, inputs, outputs=(), conversation="conv-1", **extra):
    attrs = [
        _attr("gen_ai.operation.name", "chat"),
        _attr("gen_ai.request.model", "gpt-5"),
        _attr("gen_ai.conversation.id", conversation),
        _attr("gen_ai.system_instructions", json.dumps(_parts(system))),
        _attr("gen_ai.input.messages", json.dumps(list(inputs))),
        _attr("gen_ai.output.messages", json.dumps(list(outputs))),
        *[_attr(k.replace("__", "."), v) for k, v in extra.items()],
    ]
    return {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": span_id,
        "name": "chat gpt-5",
        "kind": 3,
        "startTimeUnixNano": str(end_ns - 1_000_000),
        "endTimeUnixNano": str(end_ns),
        "attributes": attrs,
    }


def _export(*spans):
    return {
        "resourceSpans": [
            {"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "app"}, "spans": list(spans)}]}
        ]
    }


BEFORE_SPAN = _span(
    "eee19b7ec3c1b174",
    1_700_000_000_000_000_000,
    SYSTEM_BEFORE,
    [{"role": "user", "parts": _parts("Refund order 55 for $250.")}],
    [
        {
            "role": "assistant",
            "parts": _parts("That needs a manager's approval first."),
            "finish_reason": "stop",
        }
    ],
)
COMPACTED_SPAN = _span(
    "eee19b7ec3c1b175",
    1_700_000_060_000_000_000,
    SYSTEM_AFTER,
    [{"role": "user", "parts": _parts("Summary: the user wants order 55 refunded.")}],
    gen_ai__conversation__compacted=True,
)


def _post(client, key, body, ctype="application/json", **headers):
    return client.post(
        "/v1/traces", data=body, content_type=ctype, HTTP_AUTHORIZATION=f"Bearer {key}", **headers
    )


def test_a_compacted_call_is_paired_with_the_previous_call_and_checked(
    client, api_key, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        r = _post(client, api_key, json.dumps(_export(BEFORE_SPAN, COMPACTED_SPAN)))
    assert r.status_code == 200
    assert r["Content-Type"] == "application/json"
    assert r.json() == {}
    [event] = Event.objects.all()
    assert event.session.external_id == "conv-1"
    assert (event.strategy, event.strategy_family, event.model) == ("otel-compaction", "summary", "gpt-5")
    assert [m["role"] for m in event.before] == ["system", "user", "assistant"]
    assert [m["content"] for m in event.after] == [SYSTEM_AFTER, "Summary: the user wants order 55 refunded."]
    assert event.metadata["previous_span_id"] == "eee19b7ec3c1b174"
    got = client.get(f"/api/v1/events/{event.pk}", HTTP_AUTHORIZATION=f"Bearer {api_key}").json()
    assert got["verdict"] == "fail"
    assert [(r["text"], r["state"]) for r in got["rules"]] == [(RULE, "missing")]


def test_the_same_export_sent_twice_makes_one_event(client, api_key) -> None:
    body = json.dumps(_export(BEFORE_SPAN, COMPACTED_SPAN))
    assert _post(client, api_key, body).status_code == 200
    assert _post(client, api_key, body).status_code == 200
    assert Event.objects.count() == 1
    assert ConversationCall.objects.count() == 2


def test_protobuf_and_gzip_across_two_exports(client, api_key) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

    def pb_export(span_id: bytes, end_ns: int, system: str, inputs: list, outputs: list) -> bytes:
        req = ExportTraceServiceRequest()
        sp = req.resource_spans.add().scope_spans.add().spans.add()
        sp.trace_id, sp.span_id, sp.name, sp.end_time_unix_nano = bytes(range(16)), span_id, "chat", end_ns
        for k, v in {
            "gen_ai.conversation.id": "conv-pb",
            "gen_ai.system_instructions": json.dumps(_parts(system)),
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps(outputs),
        }.items():
            sp.attributes.append(KeyValue(key=k, value=AnyValue(string_value=v)))
        return req.SerializeToString()

    first = pb_export(
        b"\x01" * 8, 10_000, SYSTEM_BEFORE, [{"role": "user", "parts": _parts("Refund order 7.")}], []
    )
    # no compacted flag: the compaction part in the input messages says so
    second = pb_export(
        b"\x02" * 8,
        20_000,
        SYSTEM_AFTER,
        [
            {
                "role": "user",
                "parts": [{"type": "compaction", "content": "The user asked for a refund of order 7."}],
            }
        ],
        [],
    )
    r1 = _post(client, api_key, first, "application/x-protobuf")
    r2 = _post(client, api_key, gzip.compress(second), "application/x-protobuf", HTTP_CONTENT_ENCODING="gzip")
    assert (r1.status_code, r2.status_code) == (200, 200)
    assert r2["Content-Type"] == "application/x-protobuf"
    resp = ExportTraceServiceResponse()
    resp.ParseFromString(r2.content)
    assert resp.partial_success.rejected_spans == 0
    [event] = Event.objects.all()
    assert event.session.external_id == "conv-pb"
    assert event.after[-1] == {
        "role": "user",
        "content": "The user asked for a refund of order 7.",
        "kind": "compact_summary",
    }
    assert event.metadata["span_id"] == "0202020202020202"


def test_unreadable_spans_are_rejected_and_an_unpaired_compaction_is_a_warning(client, api_key) -> None:
    broken = _span("aaaaaaaaaaaaaaaa", 5, SYSTEM_BEFORE, [])
    broken["attributes"] = [
        a if a["key"] != "gen_ai.input.messages" else _attr(a["key"], "{not json")
        for a in broken["attributes"]
    ]
    lonely = _span(
        "bbbbbbbbbbbbbbbb", 9, SYSTEM_AFTER, [], conversation="conv-2", gen_ai__conversation__compacted=True
    )
    plain = {
        "traceId": "00" * 16,
        "spanId": "cc" * 8,
        "name": "GET /",
        "attributes": [_attr("http.method", "GET")],
    }
    r = _post(client, api_key, json.dumps(_export(broken, lonely, plain)))
    assert r.status_code == 200
    partial = r.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert "gen_ai.input.messages is not valid JSON" in partial["errorMessage"]
    assert "no earlier inference span of conversation 'conv-2'" in partial["errorMessage"]
    assert Event.objects.count() == 0


@pytest.mark.parametrize(
    ("kwargs", "status", "code"),
    [
        ({"key": None}, 401, 16),
        ({"ctype": "text/plain"}, 415, 3),
        ({"body": "{oops"}, 400, 3),
        ({"body": json.dumps({"resourceSpans": "nope"})}, 400, 3),
    ],
)
def test_bad_requests_get_an_otlp_status(client, api_key, kwargs, status, code) -> None:
    key = kwargs.get("key", api_key)
    r = client.post(
        "/v1/traces",
        data=kwargs.get("body", json.dumps(_export())),
        content_type=kwargs.get("ctype", "application/json"),
        **({"HTTP_AUTHORIZATION": f"Bearer {key}"} if key else {}),
    )
    assert r.status_code == status
    assert r.json()["code"] == code
    assert r.json()["message"]


def test_pii_in_a_kept_call_is_redacted_before_it_is_stored(client, api_key) -> None:
    span = _span(
        "dddddddddddddddd",
        7,
        SYSTEM_BEFORE,
        [{"role": "user", "parts": _parts("Mail me at jane.doe@example.com")}],
    )
    assert _post(client, api_key, json.dumps(_export(span))).status_code == 200
    stored = json.dumps(ConversationCall.objects.get().context)
    assert "jane.doe@example.com" not in stored
    assert "[EMAIL#" in stored


@pytest.mark.django_db(transaction=True)
def test_the_opentelemetry_sdk_exporter_reaches_ctxaudit(live_server, api_key) -> None:
    """The real OTLP/HTTP protobuf exporter from opentelemetry-exporter-otlp-proto-http."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    exporter = OTLPSpanExporter(
        endpoint=f"{live_server.url}/v1/traces", headers={"Authorization": f"Bearer {api_key}"}
    )
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    common = {
        "gen_ai.operation.name": "chat",
        "gen_ai.conversation.id": "sdk-conv",
        "gen_ai.request.model": "claude",
    }
    with tracer.start_as_current_span("chat claude") as span:
        span.set_attributes(
            {
                **common,
                "gen_ai.system_instructions": json.dumps(_parts(SYSTEM_BEFORE)),
                "gen_ai.input.messages": json.dumps([{"role": "user", "parts": _parts("Refund order 9.")}]),
            }
        )
    with tracer.start_as_current_span("chat claude") as span:
        span.set_attributes(
            {
                **common,
                "gen_ai.conversation.compacted": True,
                "gen_ai.system_instructions": json.dumps(_parts(SYSTEM_AFTER)),
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": _parts("Summary: refund order 9.")}]
                ),
            }
        )
    provider.shutdown()
    [event] = Event.objects.filter(session__external_id="sdk-conv")
    assert event.model == "claude"
    assert event.before[0]["content"] == SYSTEM_BEFORE


def test_kept_calls_go_with_the_retention_purge(client, api_key, project) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from ctxaudit.ingest.services import events_purge_expired

    assert _post(client, api_key, json.dumps(_export(BEFORE_SPAN))).status_code == 200
    project.retention_days = 30
    project.save()
    events_purge_expired(now=timezone.now() + timedelta(days=31))
    assert ConversationCall.objects.count() == 0
