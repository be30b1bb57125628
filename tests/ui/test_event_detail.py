from __future__ import annotations

import re

import pytest

from tests.factories import PASSWORD, event

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script><div hx-get="/x" hx-trigger="load">'


@pytest.fixture
def checked(django_capture_on_commit_callbacks):
    """Ingest an event and run its check (what the eager embedded default does on commit)."""

    def _make(project_name: str = "acme", **overrides):
        with django_capture_on_commit_callbacks(execute=True):
            ev = event(project_name, **overrides)
        ev.refresh_from_db()
        return ev

    return _make


def test_it_works(client, alice, checked) -> None:
    ev = checked()
    client.login(username="alice", password=PASSWORD)
    r = client.get(f"/events/{ev.pk}/")
    assert r.status_code == 200
    body = r.content.decode()
    assert "Before and after" in body
    # the rewritten system message sits beside its old self, with a char-level diff
    assert '<span class="s-insert">' in body or 'class="s-insert' in body
    assert "只能查询订单，禁止新增、修改、删除订单。" in body
    # each rule links to its highlight in the before column, and that anchor exists
    assert 'href="#rule-0-before"' in body
    assert 'id="rule-0-before"' in body
    assert "missing" in body
    # token figures per role
    assert 'role-system">system</span></td>' in body


def test_it_checks_ownership(client, alice, charlie, checked) -> None:
    ev = checked("other")
    client.login(username="alice", password=PASSWORD)
    assert client.get(f"/events/{ev.pk}/").status_code == 404
    assert (
        client.get(f"/events/{ev.pk}/expand/?level=messages&op=equal&b0=0&b1=1&a0=0&a1=1").status_code == 404
    )


def test_it_requires_login(client, alice, checked) -> None:
    ev = checked()
    r = client.get(f"/events/{ev.pk}/")
    assert r.status_code == 302
    assert r["Location"].startswith("/login/")


def test_it_rejects_post(client, alice, checked) -> None:
    ev = checked()
    client.login(username="alice", password=PASSWORD)
    assert client.post(f"/events/{ev.pk}/").status_code == 405


def _hostile_event(checked):
    filler = [{"role": "user", "content": f"turn {i}"} for i in range(20)]
    return checked(
        session_id=HOSTILE,
        rules=[{"id": "R1", "text": HOSTILE}, {"id": "R2", "text": "禁止删除任何订单"}],
        before=[
            {"role": "system", "content": "禁止删除任何订单。" + HOSTILE},
            *filler,
            {"role": "user", "content": HOSTILE},
        ],
        after=[
            {"role": "system", "content": "删除订单需谨慎。"},
            *filler,
            {"role": "user", "content": HOSTILE + " again"},
        ],
    )


def _assert_escaped(body: str) -> None:
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<script>alert" not in body
    assert '<div hx-get="/x"' not in body
    assert 'hx-trigger="load"' not in body


def test_it_escapes_context_text(client, alice, checked) -> None:
    ev = _hostile_event(checked)
    client.login(username="alice", password=PASSWORD)
    body = client.get(f"/events/{ev.pk}/").content.decode()
    _assert_escaped(body)
    assert "&lt;div hx-get=&quot;/x&quot; hx-trigger=&quot;load&quot;&gt;" in body
    # foreign text only ever sits inside hx-disable containers: every cell of the diff carries it
    assert (
        body.count('class="cell cell-before') == body.count('class="cell cell-before')
        and "hx-disable" in body
    )
    for cell in body.split('<div class="cell ')[1:]:
        assert cell.split(">", 1)[0].endswith("hx-disable")


def test_it_escapes_context_text_in_the_expand_partial(client, alice, checked) -> None:
    ev = _hostile_event(checked)
    client.login(username="alice", password=PASSWORD)
    page = client.get(f"/events/{ev.pk}/").content.decode()
    assert "Show 18 unchanged messages" in page
    r = client.get(
        f"/events/{ev.pk}/expand/?level=messages&op=equal&b0=0&b1=22&a0=0&a1=22", HTTP_HX_REQUEST="true"
    )
    assert r.status_code == 200
    body = r.content.decode()
    assert "<html" not in body
    _assert_escaped(body)
    assert "turn 7" in body


def test_it_renders_partial_for_htmx(client, alice, checked) -> None:
    ev = checked(
        before=[
            {"role": "system", "content": "\n".join(f"rule line {i}" for i in range(40)) + "\nnever delete"}
        ],
        after=[
            {"role": "system", "content": "\n".join(f"rule line {i}" for i in range(40)) + "\nbe careful"}
        ],
    )
    client.login(username="alice", password=PASSWORD)
    page = client.get(f"/events/{ev.pk}/").content.decode()
    assert "Show 34 unchanged lines" in page
    r = client.get(
        f"/events/{ev.pk}/expand/?level=lines&op=equal&b0=3&b1=37&a0=3&a1=37&bm=0&am=0",
        HTTP_HX_REQUEST="true",
    )
    assert r.status_code == 200
    body = r.content.decode()
    assert "<html" not in body
    assert 'data-n="4">rule line 3</div>' in body
    assert 'data-n="37">rule line 36</div>' in body


def test_it_answers_404_for_a_forged_range(client, alice, checked) -> None:
    ev = checked()
    client.login(username="alice", password=PASSWORD)
    assert (
        client.get(f"/events/{ev.pk}/expand/?level=messages&op=equal&b0=0&b1=99&a0=0&a1=99").status_code
        == 404
    )
    assert client.get(f"/events/{ev.pk}/expand/?level=lines&op=equal&b0=x").status_code == 404


def test_it_shows_everything_without_js(client, alice, checked) -> None:
    ev = _hostile_event(checked)
    client.login(username="alice", password=PASSWORD)
    body = client.get(f"/events/{ev.pk}/?full=1").content.decode()
    assert "unchanged messages" not in body
    assert "turn 7" in body


def test_it_links_hidden_highlights_to_the_full_page(client, alice, checked) -> None:
    turns = [{"role": "user", "content": f"Rule {i}: never delete order {i}."} for i in range(80)]
    ev = checked(
        rules=[{"id": f"R{i}", "text": f"Rule {i}: never delete order {i}."} for i in range(80)],
        before=[{"role": "system", "content": "You are an order bot."}, *turns],
        after=[
            {"role": "system", "content": "You are an order bot!"},
            {"role": "user", "content": "summary"},
        ],
    )
    client.login(username="alice", password=PASSWORD)
    body = client.get(f"/events/{ev.pk}/").content.decode()
    assert "Showing the first 50 of 80 rules" in body
    assert 'href="?full=1#rule-' in body  # a rule whose highlight sits in a collapsed run
    assert 'href="#rule-' in body
    full = client.get(f"/events/{ev.pk}/?full=1&all=1").content.decode()
    assert 'href="?full=1#rule-' not in full
    assert len(re.findall(r'class="anchor" id="rule-\d+-before"', full)) == 80


def test_it_loads_scripts_only_from_files_with_the_csp_nonce(client, alice, checked) -> None:
    ev = checked()
    client.login(username="alice", password=PASSWORD)
    r = client.get(f"/events/{ev.pk}/")
    nonce = re.search(r"'nonce-([^']+)'", r["Content-Security-Policy"]).group(1)
    tags = re.findall(r"<script\b[^>]*>", r.content.decode())
    assert any("js/detail.js" in t for t in tags)
    assert all(f'nonce="{nonce}"' in t and "src=" in t for t in tags)
    assert "style=" not in r.content.decode()  # style-src has no 'unsafe-inline'


def test_it_sends_an_expired_htmx_session_to_the_login_page(client, alice, checked) -> None:
    ev = checked()
    r = client.get(
        f"/events/{ev.pk}/expand/?level=messages&op=equal&b0=0&b1=1&a0=0&a1=1",
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver/events/{ev.pk}/",
    )
    assert r.status_code == 200
    assert r["HX-Redirect"] == f"/login/?next=/events/{ev.pk}/"
    assert (
        client.get(f"/events/{ev.pk}/expand/?level=messages").status_code == 302
    )  # plain request: the usual redirect


def test_an_intact_rule_zone_does_not_read_as_all_rules_kept(client, alice, checked) -> None:
    """The system messages came through word for word, but a standing rule the user gave in the
    history was dropped by the summary: the zone line must not read as a clean bill (no ✓)."""
    system = {
        "role": "system",
        "content": "You are the billing assistant. Never issue a refund above 100 EUR.",
    }
    ev = checked(
        before=[
            system,
            {"role": "user", "content": "From now on, always answer in French."},
            {"role": "assistant", "content": "D'accord."},
            {"role": "user", "content": "Customer 12 asks about invoice 7."},
        ],
        after=[
            system,
            {"role": "user", "content": "Summary: the customer asks about invoice 7."},
        ],
        rules=[
            {"id": "R1", "text": "Never issue a refund above 100 EUR."},
            {"id": "R2", "text": "Always answer in French."},
        ],
    )
    assert ev.verdict == "fail"
    client.login(username="alice", password=PASSWORD)
    body = client.get(f"/events/{ev.pk}/").content.decode()
    line = re.search(r'<p class="zones-summary([^"]*)"[^>]*>(.*?)</p>', body, re.S)
    assert line is not None
    assert "zones-intact" not in line.group(1)
    assert "rule zone came through intact" in line.group(2)
    assert "Rules were lost or changed all the same, in the history rather than the rule zone" in line.group(
        2
    )
