"""The session timeline page: /sessions/<pk>/."""

from __future__ import annotations

import re

import pytest

from ctxaudit.ingest.models import Session
from ctxaudit.projects.models import Project
from ctxaudit.timelines.services import session_decay_sync
from tests.factories import PASSWORD, event
from tests.timelines.build import build_session

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script><div hx-get="/x" hx-trigger="load">'


@pytest.fixture
def alice_client(client, alice):
    client.login(username="alice", password=PASSWORD)
    return client


def test_it_works(alice_client, project) -> None:
    session, events = build_session(
        project, {"R1": [1.0, 0.7, 0.4, 0.0], "R2": [1.0, 1.0, 1.0, 1.0]}, external_id="run-7"
    )
    session_decay_sync(event_id=events[0].id)
    r = alice_client.get(f"/sessions/{session.pk}/")
    assert r.status_code == 200
    html = r.content.decode()
    assert "run-7" in html
    # Every event in order, each linked to its diff.
    for e in events:
        assert f'href="/events/{e.pk}/"' in html
    # One chart per rule: an SVG with a title and a description, points as links with labels.
    assert html.count('<svg class="timeline-chart"') == 2
    assert "Strength of rule R1 across 4 compressions" in html
    assert "First weakened at compression 2. First missing at compression 4." in html
    assert (
        "<title>Rule R1, compression 2: weakened, strength 0.70 (first weakened). Opens the event&#x27;s diff.</title>"
        in html
    )
    assert (
        "<title>Rule R1, compression 4: missing, strength 0.00 (first missing). Opens the event&#x27;s diff.</title>"
        in html
    )
    # States in shapes (not colour alone) and in words.
    assert 'href="#mk-weakened"' in html and 'href="#mk-missing"' in html and 'href="#mk-retained"' in html
    assert ">first weakened</text>" in html and ">first missing</text>" in html
    # Decay: 1.0 → 0.7 → 0.4 is two falls in a row, completed at compression 3.
    assert (
        "<title>Rule R1, compression 3: weakened, strength 0.40 (decay). Opens the event&#x27;s diff.</title>"
        in html
    )
    assert 'href="#mk-decay"' in html
    # The table view of the same numbers.
    assert "Table view of rule R1" in html
    assert re.search(r"▼ weakened</td><td>0\.70</td><td>-0\.30</td>", html)


def test_it_checks_ownership(client, charlie, project) -> None:
    session, _ = build_session(project, {"R1": [1.0]})
    client.login(username="charlie", password=PASSWORD)
    assert client.get(f"/sessions/{session.pk}/").status_code == 404
    assert client.get("/sessions/999999/").status_code == 404


def test_it_lets_a_reviewer_read(client, bob, project) -> None:
    session, _ = build_session(project, {"R1": [1.0]})
    client.login(username="bob", password=PASSWORD)
    assert client.get(f"/sessions/{session.pk}/").status_code == 200


def test_it_requires_login(client, project) -> None:
    session, _ = build_session(project, {"R1": [1.0]})
    r = client.get(f"/sessions/{session.pk}/")
    assert r.status_code == 302
    assert "/login/" in r["Location"]


def test_it_rejects_post(alice_client, project) -> None:
    session, _ = build_session(project, {"R1": [1.0]})
    assert alice_client.post(f"/sessions/{session.pk}/").status_code == 405


def test_it_escapes_rule_text_and_session_id(alice_client, project) -> None:
    session, events = build_session(
        project, {HOSTILE: [1.0, 0.5]}, external_id=HOSTILE, texts={HOSTILE: HOSTILE}
    )
    r = alice_client.get(f"/sessions/{session.pk}/")
    html = r.content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert" not in html
    assert 'hx-get="/x"' not in html
    # In the SVG (titles, desc) and in the table, foreign text sits inside hx-disable.
    svg = html[
        html.index('<svg class="timeline-chart"') : html.index(
            "</svg>", html.index('<svg class="timeline-chart"')
        )
    ]
    assert "Strength of rule &lt;script&gt;" in svg
    assert "<title>Rule &lt;script&gt;" in svg
    section = html[html.index('<section class="rule-timeline"') :]
    assert section.startswith('<section class="rule-timeline" id="rule-0" hx-disable>')
    assert "Table view of rule &lt;script&gt;" in section
    assert '<section class="rule-summary" hx-disable>' in html


def test_it_renders_partial_for_htmx(alice_client, project) -> None:
    session, _ = build_session(project, {f"R{i:02d}": [1.0, 0.5] for i in range(12)})
    r = alice_client.get(f"/sessions/{session.pk}/?rules_page=2", HTTP_HX_REQUEST="true")
    html = r.content.decode()
    assert r.status_code == 200
    assert "<html" not in html
    assert html.startswith('<div id="timeline-rules">')
    assert "Rule <code>R10</code>" in html and "Rule <code>R00</code>" not in html
    assert r["Vary"] and "HX-Request" in r["Vary"]


def test_it_pages_rules_without_htmx(alice_client, project) -> None:
    session, _ = build_session(project, {f"R{i:02d}": [1.0, 0.5] for i in range(12)})
    html = alice_client.get(f"/sessions/{session.pk}/").content.decode()
    assert html.count('<svg class="timeline-chart"') == 10
    assert 'href="?rules_page=2"' in html
    # The summary table still lists every rule.
    assert "<code>R11</code>" in html


def test_it_renders_a_big_session_in_constant_queries(
    alice_client, project, api_key, django_assert_max_num_queries
) -> None:
    """500 compressions × 50 rules: the page's (and the JSON's) query count does not grow with the session."""
    series = {f"R{k:02d}": [max(0.0, 1.0 - 0.002 * i * (k % 3)) for i in range(500)] for k in range(50)}
    session, _ = build_session(project, series, external_id="big")
    with django_assert_max_num_queries(8):
        r = alice_client.get(f"/sessions/{session.pk}/")
    assert r.status_code == 200
    assert r.content.decode().count('<svg class="timeline-chart"') == 5  # POINTS_PER_PAGE // 500 events
    with django_assert_max_num_queries(8):
        assert (
            alice_client.get(f"/sessions/{session.pk}/?rules_page=5", HTTP_HX_REQUEST="true").status_code
            == 200
        )
    with django_assert_max_num_queries(6):
        r = alice_client.get("/api/v1/sessions/big/timeline", HTTP_AUTHORIZATION=f"Bearer {api_key}")
    assert r.status_code == 200
    assert len(r.json()["rules"]) == 50 and all(len(x["points"]) == 500 for x in r.json()["rules"])


def test_it_links_sessions_from_the_event_pages(
    alice_client, project, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        ev = event(session_id="linked-session")
    session = Session.objects.get(external_id="linked-session")
    assert f'href="/sessions/{session.pk}/"' in alice_client.get("/").content.decode()
    assert f'href="/sessions/{session.pk}/"' in alice_client.get(f"/events/{ev.pk}/").content.decode()


def test_it_shows_an_ingested_session(alice_client, project, django_capture_on_commit_callbacks) -> None:
    """Through the real ingestion and check: the timeline shows what the engine said."""
    with django_capture_on_commit_callbacks(execute=True):
        for seq in (1, 2):
            event(session_id="real", sequence=seq)
    session = Session.objects.get(external_id="real", project=Project.objects.get(name="acme"))
    html = alice_client.get(f"/sessions/{session.pk}/").content.decode()
    assert html.count('<svg class="timeline-chart"') == session.rules_in_force.count() >= 2
    assert "compression 1: missing" in html


def test_it_shows_unchecked_compressions_without_a_point(alice_client, project) -> None:
    session, events = build_session(project, {"R1": [1.0, 0.5, 0.4]}, pending=[1, 2])
    html = alice_client.get(f"/sessions/{session.pk}/").content.decode()
    assert "2 compressions not checked yet." in html
    assert html.count("<title>Rule R1, compression") == 1  # only the checked one is plotted
    assert "… pending</td><td>–</td>" in html  # the table lists it


def test_it_shows_a_session_without_rules(alice_client, project) -> None:
    from ctxaudit.ingest.models import Event, Session

    session = Session.objects.create(project=project, external_id="empty")
    Event.objects.create(
        project=project, session=session, sequence=1, before=[], after=[], status="checked", verdict="pass"
    )
    html = alice_client.get(f"/sessions/{session.pk}/").content.decode()
    assert "No rules in force in this session." in html
