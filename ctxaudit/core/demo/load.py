"""Demo data: the seed cases and decay session from ../shared/samples, plus our own scenarios."""

from __future__ import annotations

import json
from typing import Any, TextIO

from ctxaudit.core.samples import shared_samples_dir
from ctxaudit.ingest.models import Event
from ctxaudit.ingest.schemas import EventIn
from ctxaudit.ingest.services import event_ingest
from ctxaudit.projects.models import Project

DEMO_PROJECT = "demo"


def demo_load(*, stdout: TextIO | None = None) -> str:
    """Load the demo data once (idempotent via Idempotency-Key). Returns a one-line summary."""
    project, _ = Project.objects.get_or_create(name=DEMO_PROJECT)
    before = Event.objects.filter(project=project).count()
    samples = shared_samples_dir()
    if samples is not None:
        for line in (samples / "seed_cases.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                _ingest_case(project, case, session_id=case["id"], sequence=1, key=f"seed:{case['id']}")
        decay = json.loads((samples / "seed_decay_session.json").read_text(encoding="utf-8"))
        for ev in decay["events"]:
            _ingest_case(project, {**ev, "rules": decay["rules"], "strategy": "summary"}, session_id=decay["session"], sequence=ev["sequence"], key=f"decay:{ev['sequence']}")
    added = Event.objects.filter(project=project).count() - before
    where = f"samples from {samples}" if samples else "no ../shared/samples found"
    return f"Demo data: {added} new events in project {DEMO_PROJECT!r} ({where})."


def _ingest_case(project: Project, case: dict[str, Any], *, session_id: str, sequence: int, key: str) -> None:
    spec = EventIn.model_validate(
        {
            "session_id": session_id,
            "sequence": sequence,
            "strategy": (case.get("strategy") or "other").replace("-", "_"),
            "before": case["before"],
            "after": case["after"],
            "rules": case.get("rules"),
            "metadata": {"source": case.get("source", ""), "description": case.get("description", "")},
        }
    )
    event_ingest(project=project, spec=spec, idempotency_key=key)
