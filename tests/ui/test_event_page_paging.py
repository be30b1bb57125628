"""The event page of a very large event pages its diff, and every highlight link lands on the page
that holds it (issue 13: a 65,000-message event with every tenth message edited rendered 26,000
rows, 16 MB of HTML; links into `?full=1` always opened its first page)."""

from __future__ import annotations

import re

import pytest

from ctxaudit.ingest.models import Event, Session
from ctxaudit.ui.event_pages import COLLAPSED_ROWS_PER_PAGE, FULL_ROWS_PER_PAGE
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def _event(project, before, after, rules=()) -> Event:
    session = Session.objects.create(project=project, external_id="paging")
    return Event.objects.create(
        project=project,
        session=session,
        before=before,
        after=after,
        status="checked",
        verdict="pass",
        report={"rules": list(rules)},
    )


def _retained(i: int, message_index: int, text: str) -> dict:
    span = {"message_index": message_index, "start": 0, "end": len(text), "quote": text}
    return {
        "id": f"R{i}",
        "text": text,
        "state": "retained",
        "evidence": [{"side": "before", **span}, {"side": "after", **span}],
    }


def _alternating(n: int) -> tuple[list[dict], list[dict]]:
    """n messages, every even one rewritten after: nothing folds, one row per message."""
    before = [{"role": "user", "content": f"message number {i}"} for i in range(n)]
    after = [
        {"role": "user", "content": f"message number {i}" if i % 2 else f"other text {i}"} for i in range(n)
    ]
    return before, after


def test_a_collapsed_page_with_more_rows_than_it_shows_pages_them(client, alice, project) -> None:
    n = 2 * COLLAPSED_ROWS_PER_PAGE + 100  # 2,100 rows: pages of 1,000, 1,000 and 100
    ev = _event(project, *_alternating(n))
    client.login(username="alice", password=PASSWORD)
    first = client.get(f"/events/{ev.pk}/").content.decode()
    assert "messages page 1 of 3" in first
    assert '<a href="?page=2#diff">later ›</a>' in first
    assert "message number 999" in first and "message number 1001" not in first
    second = client.get(f"/events/{ev.pk}/?page=2").content.decode()
    assert "messages page 2 of 3" in second and "message number 1001" in second
    assert "message number 1999" in second and "message number 2001" not in second
    assert '<a href="?page=1#diff">‹ earlier</a>' in second


def test_a_highlight_on_another_page_is_linked_with_its_page(client, alice, project) -> None:
    before, after = _alternating(2 * COLLAPSED_ROWS_PER_PAGE + 100)
    ev = _event(project, before, after, [_retained(0, 1501, "message number 1501")])
    client.login(username="alice", password=PASSWORD)
    first = client.get(f"/events/{ev.pk}/?all=1").content.decode()
    assert 'href="?page=2#rule-0-before"' in first and 'href="?page=2#rule-0-after"' in first
    second = client.get(f"/events/{ev.pk}/?page=2&all=1").content.decode()
    assert 'href="#rule-0-before"' in second
    assert re.search(r'class="anchor" id="rule-0-before"', second)
    full = client.get(f"/events/{ev.pk}/?full=1&all=1").content.decode()
    on = 1501 // FULL_ROWS_PER_PAGE + 1  # page 8 of the full view
    assert f'href="?full=1&page={on}#rule-0-before"' in full.replace("&amp;", "&")


def test_a_folded_highlight_opens_the_full_page_that_holds_it(client, alice, project) -> None:
    # 80 rules in one long unchanged run: 30 are kept visible, the rest fold into the run.
    before = [{"role": "user", "content": f"Rule {i}: never delete order {i}."} for i in range(1000)]
    after = [*before[:-1], {"role": "user", "content": "summary"}]
    rules = [_retained(i, 300 + i, f"Rule {300 + i}: never delete order {300 + i}.") for i in range(80)]
    ev = _event(project, before, after, rules)
    client.login(username="alice", password=PASSWORD)
    body = client.get(f"/events/{ev.pk}/?all=1").content.decode().replace("&amp;", "&")
    folded = re.findall(r'href="\?full=1&at=before-(\d+)#rule-(\d+)-before"', body)
    assert folded, "some highlights fold into the unchanged run"
    for mi, k in folded[:3]:
        assert int(mi) == 300 + int(k)
        page = client.get(f"/events/{ev.pk}/?full=1&at=before-{mi}").content.decode()
        assert f"messages page {int(mi) // FULL_ROWS_PER_PAGE + 1} of 5" in page
        assert f'class="anchor" id="rule-{k}-before"' in page
    # a bad "at" is the first page
    assert "messages page 1 of 5" in client.get(f"/events/{ev.pk}/?full=1&at=sideways-3").content.decode()


def test_a_full_page_holds_about_fifty_thousand_characters_of_messages(client, alice, project) -> None:
    # 60 unchanged messages of 2,000 characters: a row shows 4,000 (both columns), 12 rows a page.
    before = [{"role": "user", "content": f"{i:04d} " + "x" * 1995} for i in range(60)]
    ev = _event(project, before, before)
    client.login(username="alice", password=PASSWORD)
    first = client.get(f"/events/{ev.pk}/?full=1").content.decode()
    assert "messages page 1 of 5" in first
    assert "0011 " in first and "0012 " not in first
    third = client.get(f"/events/{ev.pk}/?full=1&at=before-30").content.decode()
    assert "messages page 3 of 5" in third and "0030 " in third and "0023 " not in third
    assert "messages page" not in client.get(f"/events/{ev.pk}/").content.decode()  # collapsed: one page
