"""Demo data: our own scenarios (scenarios.jsonl beside this file), plus, when ../shared/samples is
there, its seed cases, its decay session and every real transcript in samples/real (read in place,
never copied)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from ctxaudit.core.samples import shared_samples_dir
from ctxaudit.engine.transcripts import transcript_files
from ctxaudit.ingest.models import Event
from ctxaudit.ingest.schemas import EventIn
from ctxaudit.ingest.services import event_ingest, transcript_import
from ctxaudit.projects.models import Project

DEMO_PROJECT = "demo"
SCENARIOS = Path(__file__).with_name("scenarios.jsonl")
# The seed cases and the decay session carry no times: each gets a fixed one after this, so the
# list reads as compressions spread over a day (not all in the minute the demo loaded them) and a
# second run sends the same bodies (idempotency keys compare bodies). Scenarios carry their own.
UNDATED_FROM = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
SEED_CASE_EVERY = timedelta(minutes=47)
DECAY_EVERY = timedelta(minutes=23)


def demo_load(*, stdout: TextIO | None = None) -> str:
    """Load the demo data once (idempotent via Idempotency-Key). Returns a one-line summary."""
    project, _ = Project.objects.get_or_create(name=DEMO_PROJECT)
    before = Event.objects.filter(project=project).count()
    for line in SCENARIOS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            sc = json.loads(line)
            _ingest_case(
                project, sc, session_id=sc["session"], sequence=sc["sequence"], key=f"scenario:{sc['id']}"
            )
    samples = shared_samples_dir()
    if samples is not None:
        seed_lines = (samples / "seed_cases.jsonl").read_text(encoding="utf-8").splitlines()
        for k, line in enumerate(ln for ln in seed_lines if ln.strip()):
            case = json.loads(line)
            case.setdefault("occurred_at", (UNDATED_FROM + k * SEED_CASE_EVERY).isoformat())
            _ingest_case(project, case, session_id=case["id"], sequence=1, key=f"seed:{case['id']}")
        decay = json.loads((samples / "seed_decay_session.json").read_text(encoding="utf-8"))
        decay_from = UNDATED_FROM - timedelta(hours=3)
        for ev in decay["events"]:
            at = ev.get("occurred_at") or (decay_from + int(ev["sequence"]) * DECAY_EVERY).isoformat()
            _ingest_case(
                project,
                {**ev, "rules": decay["rules"], "strategy": "summary", "occurred_at": at},
                session_id=decay["session"],
                sequence=ev["sequence"],
                key=f"decay:{ev['sequence']}",
            )
        if (samples / "real").is_dir():
            files, _ = transcript_files([samples / "real"])
            for path in files:
                transcript_import(project=project, path=path)
    added = Event.objects.filter(project=project).count() - before
    where = f"samples from {samples}" if samples else "no ../shared/samples found"
    return f"Demo data: {added} new events in project {DEMO_PROJECT!r} ({where})."


def _ingest_case(project: Project, case: dict[str, Any], *, session_id: str, sequence: int, key: str) -> None:
    spec = EventIn.model_validate(
        {
            "session_id": session_id,
            "sequence": sequence,
            "strategy": (case.get("strategy") or "other").replace("-", "_"),
            "model": case.get("model"),
            "occurred_at": case.get("occurred_at"),
            "before": case["before"],
            "after": case["after"],
            "rules": case.get("rules"),
            "metadata": {"source": case.get("source", ""), "description": case.get("description", "")},
        }
    )
    event_ingest(project=project, spec=spec, idempotency_key=key)
