"""Hostile content: the corpus (tests/security/hostile.py) ingested through the API and rendered on
every page that shows context text, findings, rule text, session ids or alert text. Nothing is
markup: raw forms absent, escaped forms present, template syntax shown literally, and every text
node carrying a marker sits inside an element with hx-disable."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from ctxaudit.ingest.models import Event
from tests.factories import PASSWORD
from tests.security.hostile import CORPUS, HX_TARGET, hostile_event_payload

pytestmark = pytest.mark.django_db

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Containers(HTMLParser):
    """Records text nodes holding a marker that have no ancestor with hx-disable."""

    def __init__(self, markers: tuple[str, ...]) -> None:
        super().__init__(convert_charrefs=True)
        self.markers = markers
        self.stack: list[tuple[str, bool]] = []
        self.unprotected: list[str] = []
        self.seen: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        self.stack.append((tag, any(k in ("hx-disable", "data-hx-disable") for k, _ in attrs)))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        hits = [m for m in self.markers if m in data]
        if not hits:
            return
        self.seen.update(hits)
        if self.stack and self.stack[-1][0] in ("title", "textarea") and not any(d for _, d in self.stack):
            return  # RCDATA: never parsed as markup, and htmx does not process it
        if not any(disabled for _, disabled in self.stack):
            self.unprotected.append(f"<{'/'.join(t for t, _ in self.stack[-4:])}>: {data.strip()[:80]!r}")


MARKERS = tuple(h.marker for h in CORPUS) + ("HXS", "HXM")


@pytest.fixture
def hostile_event(client, alice, django_capture_on_commit_callbacks):
    from tests.factories import api_key_for

    key = api_key_for("acme")
    with django_capture_on_commit_callbacks(execute=True):
        r = client.post(
            "/api/v1/events",
            data=json.dumps(hostile_event_payload()),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )
    assert r.status_code == 202, r.content
    event = Event.objects.select_related("session", "project").get(pk=r.json()["id"])
    assert event.status == "checked", event.error
    assert client.login(username="alice", password=PASSWORD)
    return event


def _pages(client, event: Event) -> dict[str, str]:
    """Every page that shows this event's foreign text, by path."""
    paths = [
        "/",
        f"/?session={event.session.external_id[:10]}",
        f"/events/{event.pk}/",
        f"/events/{event.pk}/?full=1",
        f"/events/{event.pk}/checklist/",
        f"/sessions/{event.session_id}/",
        "/decay/",
        "/alerts/",
        f"/projects/{event.project_id}/audit-log/",
        f"/projects/{event.project_id}/regression/",
    ]
    from ctxaudit.alerts.models import Alert

    paths += [f"/alerts/{a.pk}/" for a in Alert.objects.filter(project=event.project)]
    # Turn the incident into a regression case: the set page then lists it.
    client.post(f"/events/{event.pk}/regression-case/", {"case_id": "hostile-case"})
    out = {}
    for path in paths:
        r = client.get(path)
        assert r.status_code == 200, f"{path}: {r.status_code}"
        out[path] = r.content.decode()
    return out


def test_it_stores_nul_and_surrogates_as_replacement_characters(hostile_event) -> None:
    stored = json.dumps(hostile_event.before, ensure_ascii=False)
    assert "HX11 before\ufffdafter" in stored
    assert "HX12 lone\ufffdsurrogate" in stored
    assert "\x00" not in stored


# One ingestion and one pass over the pages for all three properties: the check is the slow part.
def test_it_renders_foreign_text_inert_on_every_page(client, hostile_event) -> None:
    pages = _pages(client, hostile_event)
    assert len(pages) >= 10
    problems = []
    seen: set[str] = set()
    for path, html in pages.items():
        for h in CORPUS:
            for raw in h.raw_forbidden:
                if raw in html:
                    problems.append(f"{path}: raw {raw!r} ({h.marker})")
        if f'hx-get="{HX_TARGET}' in html or f'hx-post="{HX_TARGET}' in html:
            problems.append(f"{path}: a live hx-get/hx-post to the probe target")
        if '<img src=x onerror=alert("HXS")>' in html or '<script>alert("HXM")' in html:
            problems.append(f"{path}: raw session id or model")
        p = _Containers(MARKERS)
        p.feed(html)
        seen |= p.seen
        problems += [f"{path}: outside hx-disable {u}" for u in p.unprotected]
    assert not problems, "\n".join(problems[:40])
    assert {"HX1", "HX5", "HX9", "HXS"} <= seen

    html = pages[f"/events/{hostile_event.pk}/?full=1"]
    assert "&lt;script&gt;alert(&quot;HX1&quot;)&lt;/script&gt;" in html
    assert "&lt;div hx-get=&quot;/hx-target-HX5&quot; hx-trigger=&quot;load&quot;&gt;" in html
    assert "{{ request.user.password }} {% csrf_token %} {% debug %}" in html  # literally, not evaluated
    assert "HX9 " + "A" * 1000 in html
    assert "⟦U+202E⟧fdp.exe" in html  # shown, not obeyed
    assert "\u202e" not in html
    assert "HX11 before\ufffdafter" in html
    assert "&lt;img src=x onerror=alert(&quot;HXS&quot;)&gt;" in html


def test_it_escapes_the_api_answer_as_json(client, hostile_event) -> None:
    from tests.factories import api_key_for

    r = client.get(f"/api/v1/events/{hostile_event.pk}", HTTP_AUTHORIZATION=f"Bearer {api_key_for('acme')}")
    assert r["Content-Type"].startswith("application/json")
    assert r.json()["session_id"].startswith("sess-<img")
