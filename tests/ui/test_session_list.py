"""/sessions/: every session a user can see, with its counts, scoped by project."""

from __future__ import annotations

import pytest

from tests.factories import event, event_payload

pytestmark = pytest.mark.django_db

HOSTILE = "<img src=x onerror=alert(1)>\u202eevil"


def test_it_lists_the_users_sessions_with_counts_newest_first(client, alice, charlie) -> None:
    event("acme", **event_payload(session_id="s-old", sequence=1, occurred_at="2026-11-01T10:00:00Z"))
    event("acme", **event_payload(session_id="s-new", sequence=1, occurred_at="2026-11-20T10:00:00Z"))
    event("acme", **event_payload(session_id="s-new", sequence=2, occurred_at="2026-11-20T11:00:00Z"))
    event("other", **event_payload(session_id="s-secret"))
    client.force_login(alice)
    page = client.get("/sessions/").content.decode()
    assert page.index("s-new") < page.index("s-old")
    assert "s-secret" not in page
    row = page[page.index("s-new") :].split("</tr>")[0]
    assert "<td>2</td>" in row  # two compressions
    assert "2026-11-20 11:00" in row
    assert "s-old" not in client.get("/sessions/?q=new").content.decode()


def test_it_escapes_session_ids(client, alice) -> None:
    event("acme", **event_payload(session_id=HOSTILE))
    client.force_login(alice)
    page = client.get("/sessions/").content.decode()
    assert "<img src=x" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "\u202e" not in page


def test_the_api_docs_link_back_to_the_dashboard(client) -> None:
    schema = client.get("/api/v1/openapi.json").json()
    assert "[← Back to the ctxaudit dashboard](/)" in schema["info"]["description"]


def test_a_refused_page_says_why_inside_the_layout(client, bob, project) -> None:
    client.force_login(bob)  # a reviewer of acme
    r = client.get(f"/projects/{project.pk}/keys/")
    assert r.status_code == 403
    page = r.content.decode()
    assert "Not allowed" in page and "<nav>" in page
    assert "admin" in page


def test_a_failing_event_with_every_rule_kept_says_why_it_failed(client, alice) -> None:
    from ctxaudit.audits.models import Finding

    e = event("acme", **event_payload(session_id="why"))
    e.verdict = "fail"
    e.save(update_fields=["verdict"])
    Finding.objects.filter(event=e).delete()
    Finding.objects.create(
        event=e, kind="injection_promoted", severity="critical", message="A tool's text became an order."
    )
    Finding.objects.create(event=e, kind="summary_unmarked", severity="low", message="advice only")
    client.force_login(alice)
    page = client.get(f"/events/{e.pk}/").content.decode()
    why = page[page.index("Why it failed:") :].split("</div>")[0]
    assert "injection_promoted" in why and "A tool&#x27;s text became an order." in why
    assert "summary_unmarked" not in why
