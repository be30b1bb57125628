"""OTLP trace exports → compression events (the service behind POST /v1/traces).

A compacted GenAI call (engine/otlp.py) is paired with the previous inference call of the same
conversation: before = what that call saw plus its answer (the conversation as it stood), after
= what the compacted call saw. Calls can arrive in separate exports, so each call's context is
kept (redacted) in ConversationCall, the newest KEEP_PER_CONVERSATION per conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db import IntegrityError, transaction

from ctxaudit.engine.otlp import GenAiCall, OtlpSpan, calls_in_order
from ctxaudit.ingest.models import ConversationCall
from ctxaudit.ingest.sanitize import pii_key_for, stored_text_sanitize
from ctxaudit.ingest.schemas import EventIn
from ctxaudit.ingest.services import event_ingest
from ctxaudit.projects.models import Project

KEEP_PER_CONVERSATION = 3
# The strategy name events from OTLP get: the span says a compaction happened, not how.
STRATEGY = "otel-compaction"


@dataclass
class TracesResult:
    """What one export produced: event ids, rejected spans (reasons), warnings for the client."""

    event_ids: list[int] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def message(self) -> str:
        """The partial-success error_message: rejections first, then warnings (at most 5 of each)."""
        return "; ".join([*self.rejected[:5], *self.warnings[:5]])


def traces_ingest(*, project: Project, spans: list[OtlpSpan]) -> TracesResult:
    """Store the GenAI calls of an export and turn each compacted one into a compression event.

    Idempotent: a re-sent export makes no second event (Idempotency-Key "otlp:<trace>:<span>")
    and no second stored call. Raises what event_ingest raises for unreadable contexts.
    """
    result = TracesResult()
    calls, rejected = calls_in_order(spans)
    result.rejected += [f"span {s.span_id or '?'}: {why}" for s, why in rejected]
    key = pii_key_for(project.pk)
    for call in calls:
        if call.compacted:
            previous = (
                ConversationCall.objects.filter(
                    project=project, conversation_id=call.conversation_id[:200], ended_ns__lt=call.span.end_ns
                )
                .order_by("-ended_ns")
                .first()
            )
            if previous is None:
                result.warnings.append(
                    f"span {call.span.span_id}: a compaction with no earlier inference span of "
                    f"conversation {call.conversation_id[:80]!r} to compare with; send that span too"
                )
            else:
                event, _ = event_ingest(
                    project=project, spec=_event_spec(call, previous), idempotency_key=_key(call)
                )
                result.event_ids.append(event.pk)
        _remember(project, call, key)
    return result


def _key(call: GenAiCall) -> str:
    return f"otlp:{call.span.trace_id}:{call.span.span_id}"


def _event_spec(call: GenAiCall, previous: ConversationCall) -> EventIn:
    return EventIn(
        session_id=call.conversation_id[:200],
        occurred_at=datetime.fromtimestamp(call.span.end_ns / 1e9, tz=UTC) if call.span.end_ns else None,
        strategy=STRATEGY,
        model=call.model[:200] or None,
        format="generic",
        before=previous.context or "",
        after=call.context or "",
        metadata={
            "source_format": "otlp",
            "trace_id": call.span.trace_id,
            "span_id": call.span.span_id,
            "previous_span_id": previous.span_id,
        },
    )


def _remember(project: Project, call: GenAiCall, key: bytes) -> None:
    """Keep this call (context + answer) for the next compaction; trim the conversation's history."""
    conversation = call.conversation_id[:200]
    try:
        with transaction.atomic():
            ConversationCall.objects.create(
                project=project,
                conversation_id=conversation,
                trace_id=call.span.trace_id[:32],
                span_id=call.span.span_id[:16],
                ended_ns=call.span.end_ns,
                model=call.model[:200],
                context=stored_text_sanitize(
                    call.context + call.output, redact_pii=project.redact_pii, key=key
                ),
            )
    except IntegrityError:
        return  # a re-sent span: already kept
    stale = ConversationCall.objects.filter(project=project, conversation_id=conversation).order_by(
        "-ended_ns"
    )[KEEP_PER_CONVERSATION:]
    ConversationCall.objects.filter(pk__in=list(stale.values_list("pk", flat=True))).delete()
