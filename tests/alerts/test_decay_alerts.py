from __future__ import annotations

import json

import pytest

from ctxaudit.alerts.models import Alert
from ctxaudit.audits.models import Finding
from tests.factories import event as ingest_event

pytestmark = pytest.mark.django_db


def _ingest(decay: dict, seq: int, capture) -> None:
    e = next(x for x in decay["events"] if x["sequence"] == seq)
    with capture(execute=True):
        ev = ingest_event(
            "acme",
            session_id="decay",
            sequence=seq,
            before=e["before"],
            after=e["after"],
            rules=decay["rules"],
        )
    assert ev.pk


@pytest.mark.parametrize("order", [(1, 2, 3), (3, 1, 2), (1, 3, 2), (2, 3, 1), (3, 2, 1)])
def test_it_raises_a_decay_alert_whatever_the_order_of_checks(
    alice, shared_dir, django_capture_on_commit_callbacks, order
) -> None:
    """Seed §3.5: the rule weakens at each compression. When an earlier compression is checked
    late, the timelines move the decay finding to a later event: that event is evaluated again."""
    decay = json.loads((shared_dir / "samples" / "seed_decay_session.json").read_text())
    for seq in order:
        _ingest(decay, seq, django_capture_on_commit_callbacks)
    decay_events = set(Finding.objects.filter(kind="rule_decay").values_list("event_id", flat=True))
    assert decay_events, "the timelines found no decay in the seed session"
    alert = Alert.objects.get(kind="rule_decay")
    assert set(alert.events.values_list("pk", flat=True)) >= decay_events
    assert alert.rule_id in {r["id"] for r in decay["rules"]}
