"""The one writer of ingested events (HackSoft-style service)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from ctxaudit.core.sqlite_wal import checkpoint_after_response
from ctxaudit.engine.formats import ContextFormatError, context_to_json, parse_context
from ctxaudit.engine.strategies import strategy_family
from ctxaudit.engine.transcripts import TranscriptError, read_transcript
from ctxaudit.engine.transcripts.events import compaction_event, session_id_for
from ctxaudit.engine.types import Context
from ctxaudit.ingest.event_rules import event_own_rules, mark_reinjected, rules_extracted, session_known_rules
from ctxaudit.ingest.handoff import handed_off
from ctxaudit.ingest.models import ConversationCall, Event, Session, SessionRule
from ctxaudit.ingest.sanitize import event_spec_sanitize, pii_key_for
from ctxaudit.ingest.schemas import EventIn
from ctxaudit.projects.models import Project
from ctxaudit.projects.rulesets import rule_set_merge, rules_from_instruction_file

logger = logging.getLogger(__name__)


class IdempotencyConflict(ValueError):
    """An Idempotency-Key already used in this project with a different request body."""

    def __init__(self, key: str, event_id: int) -> None:
        super().__init__(
            f"Idempotency-Key {key!r} was already used for event {event_id} with a different body; "
            "use a new key for a new event"
        )
        self.event_id = event_id


def _fingerprint(spec: EventIn) -> str:
    return hashlib.sha256(spec.model_dump_json().encode()).hexdigest()


def _replay_of(project: Project, key: str, fingerprint: str) -> Event | None:
    existing = Event.objects.filter(project=project, idempotency_key=key).first()
    if (
        existing is not None
        and existing.idempotency_fingerprint
        and existing.idempotency_fingerprint != fingerprint
    ):
        raise IdempotencyConflict(key, existing.pk)
    return existing


def _own_rules(project: Project, spec: EventIn) -> tuple[list[dict[str, Any]] | None, str]:
    """(rules, rules_source): the event's rules, else the project's rule set; else (None,
    "extracted"): the check extracts them from `before` (event_rules_extract)."""
    if spec.rules:
        return [
            {"id": r.id, "text": r.text, "severity": r.severity, "source": "event"} for r in spec.rules
        ], "event"
    # A project from the API key lookup says whether it has a rule set (projects.auth.api_key_lookup).
    if getattr(project, "has_rule_set", True) is False:
        return None, "extracted"
    project_rules = list(project.rules.values("rule_id", "text", "severity", "source_file", "version"))
    if project_rules:
        # The rule set version in force when the event was received is kept with each rule.
        return [
            {
                "id": r["rule_id"],
                "text": r["text"],
                "severity": r["severity"],
                "source": "project",
                "file": r["source_file"],
                "rule_set_version": r["version"],
            }
            for r in project_rules
        ], "project"
    return None, "extracted"


def event_ingest(
    *, project: Project, spec: EventIn, idempotency_key: str | None = None
) -> tuple[Event, bool]:
    """Store one compression event and enqueue its check when the transaction commits.

    Returns (event, created); created is False when `idempotency_key` was seen before in this
    project with the same body. Raises IdempotencyConflict when it was seen with another body, and
    engine.formats.ContextFormatError (naming the field) on unreadable contexts.
    Does no tokenising and no checking: request latency must not grow with context size.
    """
    fingerprint = _fingerprint(spec) if idempotency_key else ""
    if idempotency_key:
        existing = _replay_of(project, idempotency_key, fingerprint)
        if existing:
            return existing, False
    # Before anything is stored: no NUL/lone surrogates, and PII redacted when the project says so.
    spec, _redacted = event_spec_sanitize(spec, redact_pii=project.redact_pii, key=pii_key_for(project.pk))
    before = parse_context(spec.before, format=spec.format, field="before")
    after = parse_context(spec.after, format=spec.format, field="after")
    rules, rules_source = _own_rules(project, spec)
    if rules is not None:
        mark_reinjected(rules, after, spec.metadata.get("source_format") if spec.metadata else None)
    event = Event(
        project=project,
        sequence=spec.sequence,
        occurred_at=spec.occurred_at or timezone.now(),
        strategy=spec.strategy,
        model=spec.model or "",
        format=spec.format,
        before=context_to_json(before),
        after=context_to_json(after),
        rules=rules,
        rules_source=rules_source,
        metadata=spec.metadata,
        idempotency_key=idempotency_key or None,
        idempotency_fingerprint=fingerprint,
    )
    try:
        if connection.vendor == "postgresql":
            _store_in_one_statement(event, spec.session_id, rules)
        else:
            with transaction.atomic():
                event.session_id = _session_upsert(project.pk, spec.session_id, event.occurred_at)
                event.save(force_insert=True)
                if rules:
                    _record_rules_in_force(event.session_id, event.pk, rules)
        transaction.on_commit(lambda: _enqueue_handing_off(event, before, after))
        transaction.on_commit(checkpoint_after_response)
    except IntegrityError:
        # A concurrent retry with the same Idempotency-Key won the race: answer with its event.
        if idempotency_key:
            existing = _replay_of(project, idempotency_key, fingerprint)
            if existing:
                return existing, False
        raise
    return event, True


def _enqueue_handing_off(event: Event, before: Context, after: Context) -> None:
    # A check that runs right here (the embedded default) takes the parsed contexts (ingest/handoff.py).
    with handed_off(event.pk, before, after):
        event_enqueue_check(event.pk)
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # It ran in this process: the answer says what the event is now ("checked"), not "pending".
        event.status = (
            Event.objects.filter(pk=event.pk).values_list("status", flat=True).first() or event.status
        )


def _session_upsert_sql(project_id: int, external_id: str, occurred_at: datetime) -> tuple[str, list[Any]]:
    """(sql, params) of one INSERT … ON CONFLICT DO UPDATE … RETURNING id (PostgreSQL, SQLite
    ≥ 3.35): the pk of the project's session `external_id`, created if needed, its
    last_event_at moved to `occurred_at` unless it is already as late. What get_or_create +
    an UPDATE did in five statements (SELECT, SAVEPOINT, INSERT, RELEASE, UPDATE); it locks the
    session row until the transaction ends, as that UPDATE did, and never fails on a concurrent
    insert of the same session. Column values come from the model's fields, defaults included."""
    new = Session(project_id=project_id, external_id=external_id, last_event_at=occurred_at)
    fields = [f for f in Session._meta.concrete_fields if not f.primary_key]
    qn = connection.ops.quote_name
    table = qn(Session._meta.db_table)
    latest = qn("last_event_at")
    cols = ", ".join(qn(str(f.column)) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    sql = (
        f"INSERT INTO {table} ({cols}) VALUES ({marks}) "  # noqa: S608 - identifiers from the model; values are parameters
        f"ON CONFLICT ({qn('project_id')}, {qn('external_id')}) DO UPDATE SET {latest} = CASE "
        f"WHEN {table}.{latest} IS NULL OR {table}.{latest} < EXCLUDED.{latest} THEN EXCLUDED.{latest} "
        f"ELSE {table}.{latest} END RETURNING {qn('id')}"
    )
    return sql, [f.get_db_prep_save(f.pre_save(new, add=True), connection) for f in fields]


def _session_upsert(project_id: int, external_id: str, occurred_at: datetime) -> int:
    """The session's pk (see _session_upsert_sql), in one statement."""
    sql, params = _session_upsert_sql(project_id, external_id, occurred_at)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:  # RETURNING gives the row on insert and on update alike
        raise RuntimeError(f"session upsert of {external_id!r} returned no row")
    return int(row[0])


def _store_in_one_statement(event: Event, external_id: str, rules: list[dict[str, Any]] | None) -> None:
    """PostgreSQL: the session upsert, the event's INSERT and its rules in force (SessionRule,
    as _record_rules_in_force) in one statement of data-modifying WITH queries, so storing an
    event is one round trip instead of five (BEGIN, upsert, INSERT, INSERT, COMMIT), atomic
    without a transaction block (issue 13: each round trip waits for a busy server process).
    Sets event.pk and event.session_id. Raises IntegrityError as Event.save would (a reused
    Idempotency-Key), leaving nothing stored. Column values come from the model's fields."""
    qn = connection.ops.quote_name
    session_sql, params = _session_upsert_sql(event.project_id, external_id, event.occurred_at)
    event.strategy_family = strategy_family(event.strategy)  # as Event.save does
    fields = [f for f in Event._meta.concrete_fields if not f.primary_key and f.attname != "session_id"]
    cols = ", ".join([*(qn(str(f.column)) for f in fields), qn("session_id")])
    marks = ", ".join(["%s"] * len(fields))
    params += [f.get_db_prep_save(f.pre_save(event, add=True), connection) for f in fields]
    sql = (
        f"WITH s AS ({session_sql}), "  # noqa: S608 - identifiers from the model; values are parameters
        f"e AS (INSERT INTO {qn(Event._meta.db_table)} ({cols}) VALUES ({marks}, (SELECT {qn('id')} FROM s)) "
        f"RETURNING {qn('id')}, {qn('session_id')})"
    )
    if rules:
        sql += (
            f", r AS (INSERT INTO {qn(SessionRule._meta.db_table)} "  # noqa: S608 - as above
            "(session_id, rule_id, text, severity, source, first_event_id) "
            "SELECT e.session_id, x.rule_id, x.text, x.severity, x.source, e.id FROM e CROSS JOIN "
            "unnest(%s::varchar[], %s::text[], %s::varchar[], %s::varchar[]) AS x(rule_id, text, severity, source) "
            "ON CONFLICT (session_id, rule_id) DO NOTHING)"
        )
        params += [[r[k] for r in rules] for k in ("id", "text", "severity", "source")]
    sql += " SELECT e.id, e.session_id FROM e"
    # Inside an outer transaction a failed statement would abort it: a savepoint keeps it usable.
    with transaction.atomic() if connection.in_atomic_block else nullcontext(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        raise RuntimeError(f"storing an event of session {external_id!r} returned no row")
    event.pk, event.session_id = int(row[0]), int(row[1])
    event._state.adding = False
    event._state.db = connection.alias


def sessions_recount_latest(session_pks: Iterable[int]) -> None:
    """Session.last_event_at recomputed from the events left (after some were deleted)."""
    latest = Event.objects.filter(session=OuterRef("pk")).order_by("-occurred_at").values("occurred_at")[:1]
    Session.objects.filter(pk__in=list(session_pks)).update(last_event_at=Subquery(latest))


def _record_rules_in_force(session_id: int, event_id: int, rules: list[dict[str, Any]]) -> None:
    # A rule the session already has keeps its row (and its first event): the unique
    # (session, rule_id) constraint skips it, so no query for the known ids is needed first.
    SessionRule.objects.bulk_create(
        [
            SessionRule(
                session_id=session_id,
                rule_id=r["id"],
                text=r["text"],
                severity=r["severity"],
                source=r["source"],
                first_event_id=event_id,
            )
            for r in rules
        ],
        ignore_conflicts=True,
    )


def _order_key(sequence: int | None, occurred_at: datetime, pk: int) -> tuple[int, datetime, int]:
    """An event's place in its session (as audits.services orders rules in force)."""
    return (sequence if sequence is not None else 2**31, occurred_at, pk)


def event_rules_extract(*, event: Event, before: Context, after: Context) -> list[dict[str, Any]]:
    """The rules of `event` (rules_source "extracted", `rules` still NULL) extracted from its
    `before` (ingest.event_rules.rules_extracted), recorded as rules in force of its session
    (SessionRule rows), and returned for the caller to store in event.rules with its results.

    Ingestion left the extraction to the check (issue 13). Workers may check a session's events
    out of order, so the session's earlier events whose rules are still unextracted are extracted
    and stored first, in session order: every earlier event's rules are in force for this one, as
    when ingestion extracted them. Safe to run twice or concurrently: a stored event.rules is never
    replaced, and a rule id the session already has keeps its row.
    """
    key = _order_key(event.sequence, event.occurred_at, event.pk)
    unextracted = (
        Event.objects.filter(session_id=event.session_id, rules__isnull=True)
        .exclude(pk=event.pk)
        .values_list("pk", "sequence", "occurred_at")
    )
    for pk, *_ in sorted(
        (row for row in unextracted if _order_key(row[1], row[2], row[0]) < key),
        key=lambda row: _order_key(row[1], row[2], row[0]),
    ):
        earlier = Event.objects.filter(pk=pk).only("pk", "session_id", "before", "after", "metadata").first()
        if earlier is None:
            continue
        rules = event_own_rules(earlier)
        _record_rules_in_force(event.session_id, pk, rules)
        Event.objects.filter(pk=pk, rules__isnull=True).update(rules=rules)
    rules = rules_extracted(
        before,
        after,
        known=session_known_rules(event.session_id),
        source_format=(event.metadata or {}).get("source_format"),
    )
    _record_rules_in_force(event.session_id, event.pk, rules)
    return rules


def event_enqueue_check(event_id: int) -> None:
    """Send the check job. A lost broker is survivable: the periodic sweep re-enqueues pending events."""
    from ctxaudit.audits.tasks import event_check_task

    try:
        event_check_task.delay(event_id)
    except Exception:  # the broker is down: the row is committed, requeue_pending will retry
        logger.exception("could not enqueue check for event %s; the pending sweep will retry", event_id)


def events_requeue_pending(*, older_than_seconds: int) -> int:
    """Re-enqueue events still pending after `older_than_seconds`. Returns how many."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    ids = list(
        Event.objects.filter(status=Event.Status.PENDING, received_at__lt=cutoff).values_list(
            "pk", flat=True
        )[:1000]
    )
    for pk in ids:
        event_enqueue_check(pk)
    return len(ids)


@dataclass(frozen=True, slots=True)
class TranscriptImport:
    """What importing one transcript file did: events created, and events already there.

    notes: what the reader said about the file; instruction_files: the ones it found;
    rules_version: the project rule set version they made (None: no change)."""

    path: str
    format: str
    session_id: str
    compactions: int
    created: int
    existing: int
    notes: tuple[str, ...] = ()
    instruction_files: tuple[str, ...] = ()
    rules_version: int | None = None


def transcript_import(*, project: Project, path: str | Path, format: str = "auto") -> TranscriptImport:
    """Import one agent transcript: one event per compaction, through event_ingest.

    Events get sequence 1, 2, … in session order, strategy "summary", the transcript's time and
    model when it has them, and an Idempotency-Key made of the file name, session id and
    compaction number, so importing the same file again adds nothing (and a longer copy of a
    growing session adds only its new compactions). The instruction files the reader finds
    (AGENTS.md, GEMINI.md, repository instructions, memory blocks) join the project's rule set
    (a new version when they add rules); the events are then checked against that set, each
    rule saying whether the tool re-injected it from its file (see ingest.event_rules.mark_reinjected). Raises engine TranscriptError (UnknownFormat when no reader
    recognises the file) naming the file and line when it cannot be read.
    """
    p = Path(path)
    transcript = read_transcript(p, format=format)
    session_id = session_id_for(transcript, p)
    version = None
    if transcript.instructions:
        specs = [
            r
            for ins in transcript.instructions
            for r in rules_from_instruction_file(ins.text, file=ins.source)
        ]
        version = rule_set_merge(
            project=project,
            rules=specs,
            source="import_transcripts",
            actor=f"import_transcripts {p.name}"[:150],
            files=[ins.source for ins in transcript.instructions],
        )
    created = existing = 0
    for c in transcript.compactions:
        key, body = compaction_event(transcript, c, p)
        spec = EventIn.model_validate(body)
        try:
            _, was_created = event_ingest(project=project, spec=spec, idempotency_key=key)
        except ContextFormatError as exc:
            raise TranscriptError(str(p), c.line, str(exc)) from exc
        created += was_created
        existing += not was_created
    return TranscriptImport(
        str(p),
        transcript.format,
        session_id,
        len(transcript.compactions),
        created,
        existing,
        notes=transcript.notes,
        instruction_files=tuple(ins.source for ins in transcript.instructions),
        rules_version=version.number if version else None,
    )


PURGE_BATCH = 500


def events_purge_expired(*, now: Any = None) -> dict[str, int]:
    """Delete events older than their project's `retention_days` (0 = keep forever), with what
    cascades from them (findings, rule outcomes, alert links, checklist steps, replay runs), and
    sessions left empty. Age is counted from `received_at`: a client-supplied `occurred_at` far in
    the past must not make fresh evidence vanish. Alerts keep their counts and first/last seen;
    regression cases keep their own copy of the contexts; the audit log is kept.

    Deletes in batches of PURGE_BATCH ids, each its own transaction, so a large purge never holds
    long locks. Returns {"events": n, "sessions": n}.
    """
    now = now or timezone.now()
    purged = {"events": 0, "sessions": 0}
    for project in Project.objects.filter(retention_days__gt=0).only("pk", "retention_days"):
        cutoff = now - timedelta(days=project.retention_days)
        while True:
            ids = list(
                Event.objects.filter(project=project, received_at__lt=cutoff)
                .order_by("pk")
                .values_list("pk", flat=True)[:PURGE_BATCH]
            )
            if not ids:
                break
            with transaction.atomic():
                session_ids = set(Event.objects.filter(pk__in=ids).values_list("session_id", flat=True))
                Event.objects.filter(pk__in=ids).delete()
                empty = Session.objects.filter(pk__in=session_ids, events__isnull=True)
                purged["sessions"] += empty.delete()[1].get("ingest.Session", 0)
                # Purged by received_at: a session's latest occurred_at may have gone with them.
                sessions_recount_latest(session_ids)
            purged["events"] += len(ids)
        # Calls kept from OTLP exports hold context text too.
        ConversationCall.objects.filter(project=project, received_at__lt=cutoff).delete()
    if purged["events"]:
        logger.info("retention purge: %(events)d events, %(sessions)d empty sessions", purged)
    return purged
