"""The checklist's line-by-line comparison of a large event: near-linear, paged, lines cut
(issue 13: difflib over every line took 40 s for a 275 KB event; an 828 KB one killed the worker)."""

from __future__ import annotations

import pytest

from ctxaudit.ingest.models import Event, Session
from ctxaudit.regression.selectors import MAX_DIFF_LINES, line_diff
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

N = 20_000  # messages a side: 40,000 exported lines each


def _contexts() -> tuple[list[dict], list[dict]]:
    before = [{"role": "user", "content": f"line {i}"} for i in range(N)]
    after = [{"role": "user", "content": f"changed {i}" if i % 10 == 0 else f"line {i}"} for i in range(N)]
    return before, after


def test_a_40000_line_diff_is_counted_whole_and_shown_a_page_at_a_time() -> None:
    before, after = _contexts()
    d = line_diff(before, after)
    assert (d["removed"], d["added"]) == (N // 10, N // 10)
    # 1 equal head line, 2 ops per change, 5 ops per 19-line equal run between, 5 for the tail
    assert d["pages"] == -(-(1 + 2 + (N // 10 - 1) * 7 + 5) // MAX_DIFF_LINES) == 24
    assert len(d["ops"]) == MAX_DIFF_LINES and d["truncated"] and d["page"] == 1
    assert d["ops"][:3] == [
        {"kind": "equal", "text": "[0] user:"},
        {"kind": "delete", "text": "    line 0"},
        {"kind": "insert", "text": "    changed 0"},
    ]
    last = line_diff(before, after, page=24)
    assert last["ops"][-1] == {"kind": "equal", "text": "    line 19999"} and len(last["ops"]) == 201
    assert line_diff(before, after, page=999)["ops"] == last["ops"]  # past the end: the last page


def test_a_long_line_is_cut_with_what_was_left_out() -> None:
    d = line_diff([{"role": "user", "content": "x" * 50_000}], [{"role": "user", "content": "short"}])
    deleted = [op["text"] for op in d["ops"] if op["kind"] == "delete"]
    assert deleted == ["    " + "x" * 1996 + "… (48,004 more characters)"]


def test_the_checklist_page_of_a_large_event_pages_its_line_diff(client, alice, project) -> None:
    before, after = _contexts()
    session = Session.objects.create(project=project, external_id="large")
    ev = Event.objects.create(
        project=project, session=session, before=before, after=after, status="checked", verdict="pass"
    )
    client.login(username="alice", password=PASSWORD)
    body = client.get(f"/events/{ev.pk}/checklist/").content.decode()
    assert "lines page 1 of 24" in body and "later lines ›" in body
    last_line = '<span class="ld-equal">      line 19999</span>'
    assert "+     changed 0" in body and last_line not in body
    body = client.get(f"/events/{ev.pk}/checklist/?diff_page=24").content.decode()
    assert "lines page 24 of 24" in body and last_line in body and "later lines ›" not in body


def test_a_rule_search_lists_twenty_messages_and_counts_every_hit() -> None:
    from ctxaudit.regression.search import MAX_LISTED_MESSAGES, search_context

    after = [
        {"role": "user", "content": f"Refund order {i}, refund it twice." if i % 2 else "nothing"}
        for i in range(60)
    ]
    r = search_context(after, ["refund", "ledger"])
    assert MAX_LISTED_MESSAGES == 20
    assert [m["index"] for m in r["messages"]] == list(range(1, 41, 2))
    assert r["more"] == 10  # 30 messages hit, 20 listed
    assert r["found"] == [{"term": "refund", "count": 60}, {"term": "ledger", "count": 0}]
    assert r["missing"] == ["ledger"]
    assert r["messages"][0]["hits"] == 2
    assert [(s.text, s.hit) for s in r["messages"][0]["segments"]][:2] == [
        ("Refund", True),
        (" order 1, ", False),
    ]


def test_the_checklist_of_an_event_with_thousands_of_hits_stays_small(client, alice, project) -> None:
    before = [{"role": "system", "content": "Refunds above 500 EUR need a supervisor."}] + [
        {"role": "user", "content": f"refund request {i} for a supervisor"} for i in range(3000)
    ]
    session = Session.objects.create(project=project, external_id="hits")
    ev = Event.objects.create(
        project=project,
        session=session,
        before=before,
        after=before,
        rules=[{"id": "R1", "text": "Refunds above 500 EUR need a supervisor."}],
        status="checked",
        verdict="pass",
    )
    client.login(username="alice", password=PASSWORD)
    body = client.get(f"/events/{ev.pk}/checklist/").content.decode()
    assert "… and 2981 more messages with a hit, not listed." in body  # 3,001 hit, 20 listed
    assert len(body) < 300_000
