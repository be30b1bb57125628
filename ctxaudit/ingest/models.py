"""Sessions and compression events, as ingested."""

from __future__ import annotations

import json
from typing import Any

import orjson
from django.db import models
from django.utils import timezone

from ctxaudit.engine.strategies import FAMILIES, strategy_family
from ctxaudit.projects.models import Project


class Utf8JSONEncoder(json.JSONEncoder):
    """JSON with non-ASCII text as UTF-8, not \\uXXXX escapes, for the columns that hold
    ingested text (contexts, report): a CJK character is 3 bytes instead of 6, so a 200k-token
    context is ~20% smaller to send, store and decode (issue 13). Same values when read back;
    ingestion has already removed what UTF-8 cannot hold (lone surrogates, engine.pii
    scrub_unstorable), and control characters are still escaped."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["ensure_ascii"] = False
        super().__init__(*args, **kwargs)

    def encode(self, o: Any) -> str:
        # orjson writes the same JSON, compact, ~30× faster: a 200k-token context took the json
        # module ~3 ms per side on POST → checked (issue 13). What orjson will not write (integers
        # beyond 64 bits, lone surrogates, non-string keys) goes the json module's way, as does
        # any layout asked for. Non-finite floats come out as null (the json module's NaN is not
        # JSON; PostgreSQL refuses it).
        if self.indent is None and not self.sort_keys and not self.skipkeys:
            try:
                return orjson.dumps(o).decode()
            except TypeError:  # orjson.JSONEncodeError is a TypeError
                pass
        return super().encode(o)


class Session(models.Model):
    """An agent session: the compression events that share a session_id within a project."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="sessions")
    external_id = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)
    # The latest occurred_at of its events (None without events), written by ingest.services with
    # each event: the session list is ordered by it and pages by its index (issue 13) instead of
    # taking the Max over every event of every session before its LIMIT.
    last_event_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "external_id"], name="session_unique")]
        indexes = [
            models.Index(
                models.F("last_event_at").desc(nulls_last=True),
                models.F("id").desc(),
                name="session_list_order",
            ),
            models.Index(
                "project",
                models.F("last_event_at").desc(nulls_last=True),
                models.F("id").desc(),
                name="session_project_list_order",
            ),
        ]

    def __str__(self) -> str:
        return self.external_id


class SessionRule(models.Model):
    """A rule in force in a session: once seen, it stays in force for later compressions."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="rules_in_force")
    rule_id = models.CharField(max_length=100)
    text = models.TextField()
    severity = models.CharField(max_length=10, default="high")
    source = models.CharField(max_length=20, default="event")
    first_event = models.ForeignKey("ingest.Event", null=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["session", "rule_id"], name="session_rule_unique")]

    def __str__(self) -> str:
        return self.rule_id


class Event(models.Model):
    """One compression event: the context before and after, and what the checks said."""

    class Status(models.TextChoices):
        PENDING = "pending"
        CHECKED = "checked"
        ERROR = "error"

    STRATEGIES = FAMILIES

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="events")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="events")
    sequence = models.IntegerField(null=True, blank=True)
    occurred_at = models.DateTimeField(default=timezone.now)
    received_at = models.DateTimeField(default=timezone.now)
    # As the agent named it; strategy_family (one of STRATEGIES) is what lists filter and group by.
    strategy = models.CharField(max_length=100, default="other")
    strategy_family = models.CharField(max_length=20, default="other", db_index=True)
    model = models.CharField(max_length=200, blank=True)
    format = models.CharField(max_length=20, default="auto")
    # Normalised contexts: [{"role", "content", "name"?, "kind"?}] (engine.formats.context_to_json).
    before = models.JSONField(encoder=Utf8JSONEncoder)
    after = models.JSONField(encoder=Utf8JSONEncoder)
    # The event's own rule set [{"id", "text", "severity", "source"}]: given in the event, else
    # the project's rule set (both resolved at ingestion), else extracted from `before` by the
    # check (rules_source "extracted"): NULL until then, so the request path does not run the
    # extractor (issue 13). Read it through ingest.event_rules.event_own_rules.
    rules = models.JSONField(default=list, blank=True, null=True)
    rules_source = models.CharField(max_length=10, default="extracted")  # event | project | extracted
    metadata = models.JSONField(default=dict, blank=True)
    # NULL, not "": the per-project unique constraint must ignore events sent without a key
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
    # SHA-256 of the request body the key was first used with: a retry must send the same body.
    idempotency_fingerprint = models.CharField(max_length=64, blank=True)

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True)
    # NULL until the checks ran
    verdict = models.CharField(max_length=10, null=True, blank=True)  # noqa: DJ001  # "pass" | "fail"
    report = models.JSONField(null=True, blank=True, encoder=Utf8JSONEncoder)  # AuditReport.to_dict()
    tokens_before = models.IntegerField(null=True, blank=True)
    tokens_after = models.IntegerField(null=True, blank=True)
    engine_version = models.CharField(max_length=20, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-occurred_at", "-id"]
        indexes = [
            models.Index(fields=["project", "-occurred_at"]),
            models.Index(fields=["session", "sequence"]),
            models.Index(fields=["status", "received_at"]),
            # The event list's keyset order (ingest/selectors.py): all of a user's projects, and one.
            models.Index(fields=["-occurred_at", "-id"], name="event_list_order"),
            models.Index(fields=["project", "-occurred_at", "-id"], name="event_project_list_order"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "idempotency_key"],
                condition=models.Q(idempotency_key__isnull=False),
                name="event_idempotency_unique",
            )
        ]

    def __str__(self) -> str:
        return f"event {self.pk} ({self.session.external_id})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # The family follows the name on every write path (API, importers, factories).
        self.strategy_family = strategy_family(self.strategy)
        super().save(*args, **kwargs)


class ConversationCall(models.Model):
    """A GenAI inference call seen in an OTLP trace export: the context it saw plus its answer
    (redacted like any ingested text), kept so a later compacted call of the same conversation
    can be compared with it. Only the newest few per conversation are kept (ingest/otlp.py)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="conversation_calls")
    conversation_id = models.CharField(max_length=200)
    trace_id = models.CharField(max_length=32)
    span_id = models.CharField(max_length=16)
    ended_ns = models.BigIntegerField()
    model = models.CharField(max_length=200, blank=True)
    context = models.JSONField(default=list)
    received_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["project", "conversation_id", "-ended_ns"])]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "trace_id", "span_id"], name="conversation_call_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.conversation_id} @ {self.span_id}"
