"""Build sessions with known strengths fast (bulk_create, no engine): the engine is tested elsewhere."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta

from django.utils import timezone

from ctxaudit.audits.models import RuleOutcome
from ctxaudit.engine.strategies import strategy_family
from ctxaudit.ingest.models import Event, Session, SessionRule
from ctxaudit.projects.models import Project


def state_for(strength: float) -> str:
    return "retained" if strength >= 0.999 else "missing" if strength <= 0.0 else "weakened"


def build_session(
    project: Project,
    series: dict[str, Sequence[float | None]],
    *,
    external_id: str = "s-1",
    strategy: str = "summary",
    model: str = "gpt-test",
    sequences: Iterable[int | None] | None = None,
    pending: Iterable[int] = (),
    texts: dict[str, str] | None = None,
) -> tuple[Session, list[Event]]:
    """A session whose rule `rid` has strength series[rid][i] at the i-th event (None: no outcome).

    Events are checked (verdict pass) except the indices in `pending`; `sequences` default 1..n.
    """
    n = max(len(v) for v in series.values())
    seqs = list(sequences) if sequences is not None else list(range(1, n + 1))
    pend = set(pending)
    t0 = timezone.now() - timedelta(days=1)
    session, _ = Session.objects.get_or_create(project=project, external_id=external_id)
    rules = [
        {"id": rid, "text": (texts or {}).get(rid, f"Rule {rid}: never delete data."), "severity": "high"}
        for rid in series
    ]
    events = Event.objects.bulk_create(
        Event(
            project=project,
            session=session,
            sequence=seqs[i],
            occurred_at=t0 + timedelta(minutes=i),
            strategy=strategy,
            strategy_family=strategy_family(strategy),  # bulk_create skips Event.save()
            model=model,
            before=[],
            after=[],
            rules=rules,
            status="pending" if i in pend else "checked",
            verdict=None if i in pend else "pass",
            report=None if i in pend else {"verdict": "pass", "rules": [], "findings": []},
        )
        for i in range(n)
    )
    SessionRule.objects.bulk_create(
        [SessionRule(session=session, rule_id=r["id"], text=r["text"], first_event=events[0]) for r in rules],
        ignore_conflicts=True,
    )
    RuleOutcome.objects.bulk_create(
        RuleOutcome(event=events[i], rule_id=rid, text=rules[k]["text"], state=state_for(s), strength=s)
        for k, (rid, values) in enumerate(series.items())
        for i, s in enumerate(values)
        if s is not None and i not in pend
    )
    return session, events
