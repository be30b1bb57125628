"""The cross-session decay page: /decay/ (and its selector)."""

from __future__ import annotations

import pytest

from ctxaudit.projects.models import Project
from ctxaudit.timelines.selectors import decay_overview
from ctxaudit.timelines.services import session_decay_sync
from tests.factories import PASSWORD
from tests.timelines.build import build_session

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script><div hx-get="/x" hx-trigger="load">'


@pytest.fixture
def alice_client(client, alice):
    client.login(username="alice", password=PASSWORD)
    return client


@pytest.fixture
def sessions(project, charlie):
    """Two strategies in acme: summary decays R1, structured keeps it; charlie's project decays too."""
    s1, e1 = build_session(
        project,
        {"R1": [0.8, 0.6, 0.0], "R2": [1.0, 1.0, 1.0]},
        external_id="sum-1",
        strategy="summary",
        model="gpt-4o",
    )
    s2, e2 = build_session(
        project,
        {"R1": [1.0, 1.0, 1.0], "R2": [1.0, 1.0, 0.5]},
        external_id="str-1",
        strategy="structured",
        model="claude",
    )
    s3, e3 = build_session(
        Project.objects.get(name="other"),
        {"SECRET": [0.5, 0.2]},
        external_id="other-1",
        strategy="truncation",
        model="secret-model",
    )
    for e in (e1, e2, e3):
        session_decay_sync(event_id=e[0].id)
    return s1, s2, s3


def test_it_aggregates_by_strategy_and_model(project, sessions) -> None:
    ov = decay_overview(Project.objects.filter(pk=project.pk))
    rows = {(r["event__strategy_family"], r["event__model"]): r for r in ov.by_strategy}
    assert set(rows) == {("summary", "gpt-4o"), ("structured", "claude")}
    summary = rows[("summary", "gpt-4o")]
    assert (
        summary["outcomes"],
        summary["weakened"],
        summary["missing"],
        summary["decays"],
        summary["sessions"],
    ) == (6, 2, 1, 1, 1)
    assert summary["avg_strength"] == pytest.approx((0.8 + 0.6 + 0.0 + 3.0) / 6)
    assert summary["loss_rate"] == pytest.approx(0.5)
    structured = rows[("structured", "claude")]
    assert (structured["weakened"], structured["missing"], structured["decays"]) == (1, 0, 0)
    # Safest strategy first: ops pick from the top.
    assert [r["event__strategy_family"] for r in ov.by_strategy] == ["structured", "summary"]
    worst = ov.by_rule[0]
    assert (worst["rule_id"], worst["event__strategy_family"], worst["decays"], worst["missing"]) == (
        "R1",
        "summary",
        1,
        1,
    )
    assert [s["event__session__external_id"] for s in ov.sessions] == ["sum-1"]


def test_it_filters(project, sessions) -> None:
    ov = decay_overview(Project.objects.filter(pk=project.pk), strategy="structured")
    assert [(r["event__strategy_family"]) for r in ov.by_strategy] == ["structured"]
    ov = decay_overview(Project.objects.filter(pk=project.pk), model="gpt-4o")
    assert [(r["event__model"]) for r in ov.by_strategy] == ["gpt-4o"]
    assert decay_overview(Project.objects.filter(pk=project.pk), project="other").by_strategy == []


def test_it_works(alice_client, sessions) -> None:
    r = alice_client.get("/decay/")
    assert r.status_code == 200
    html = r.content.decode()
    assert "Rule decay across sessions" in html
    assert "summary" in html and "structured" in html
    assert f'href="/sessions/{sessions[0].pk}/"' in html
    assert "2 (33%)" in html  # summary: 2 of 6 outcomes weakened
    assert "3 (50%)" in html  # summary: 3 of 6 weakened or missing
    assert "1 of 1 (100%)" in html and "0 of 1 (0%)" in html  # sessions with a decay finding


def test_it_checks_ownership(alice_client, sessions) -> None:
    html = alice_client.get("/decay/").content.decode()
    assert "SECRET" not in html and "secret-model" not in html and "other-1" not in html
    # Naming a project one is not a member of shows nothing of it.
    html = alice_client.get("/decay/?project=other").content.decode()
    assert "SECRET" not in html and "truncation</td>" not in html


def test_it_renders_partial_for_htmx(alice_client, sessions) -> None:
    r = alice_client.get("/decay/?strategy=structured", HTTP_HX_REQUEST="true")
    html = r.content.decode()
    assert "<html" not in html
    assert html.startswith('<div id="decay-tables" hx-disable>')
    assert "gpt-4o" not in html


def test_it_escapes_rule_text(alice_client, project) -> None:
    build_session(
        project, {HOSTILE: [0.5, 0.2]}, external_id=HOSTILE, texts={HOSTILE: HOSTILE}, model=HOSTILE
    )
    html = alice_client.get("/decay/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert" not in html
    assert 'hx-get="/x"' not in html


def test_it_aggregates_in_constant_queries(alice_client, project, django_assert_max_num_queries) -> None:
    for i in range(20):
        build_session(
            project,
            {f"R{k}": [1.0, 0.5, 0.2] for k in range(5)},
            external_id=f"s{i}",
            strategy=("summary", "structured")[i % 2],
        )
    with django_assert_max_num_queries(12):
        assert alice_client.get("/decay/").status_code == 200


def test_it_requires_login(client) -> None:
    assert client.get("/decay/").status_code == 302
