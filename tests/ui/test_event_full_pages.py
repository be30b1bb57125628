"""`/events/<id>/?full=1` shows every row a page at a time (issue 13: ?full=1 of a 100k-message
event took 47 s and returned 45 MB of HTML)."""

from __future__ import annotations

import re

import pytest

from ctxaudit.ingest.models import Event, Session
from ctxaudit.ui.events import FULL_ROWS_PER_PAGE
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def test_full_view_pages_its_rows(client, alice, project) -> None:
    n = 2 * FULL_ROWS_PER_PAGE + 50  # 450 messages: three pages of 200, 200 and 50 rows
    before = [{"role": "user", "content": f"message number {i}"} for i in range(n)]
    after = [
        {"role": "user", "content": f"message number {i}" if i % 2 else f"other text {i}"} for i in range(n)
    ]
    session = Session.objects.create(project=project, external_id="long")
    ev = Event.objects.create(project=project, session=session, before=before, after=after, status="checked")
    client.login(username="alice", password=PASSWORD)
    first = client.get(f"/events/{ev.pk}/?full=1").content.decode()
    assert "messages page 1 of 3" in first and "later ›" in first
    assert "message number 199" in first and "message number 201" not in first
    last = client.get(f"/events/{ev.pk}/?full=1&page=3").content.decode()
    assert "messages page 3 of 3" in last and "later ›</a>" not in last
    assert "message number 449" in last and "message number 399<" not in last
    assert client.get(f"/events/{ev.pk}/?full=1&page=99").content.decode().count("messages page 3 of 3") == 1
    # the collapsed page is not paged
    assert "messages page" not in client.get(f"/events/{ev.pk}/").content.decode()


def test_walking_every_full_page_shows_each_message_once_in_order(client, alice, project) -> None:
    # 500 messages before; after: the first 100 summarised into one, the rest kept, every 7th
    # edited, 30 new at the end. Rows: 1 replaced + 400 kept/edited + 30 inserted = 431 rows,
    # pages of 200: 3 pages.
    before = [{"role": "user", "content": f"message number {i}"} for i in range(500)]
    after = [{"role": "user", "content": "summary of messages 0 to 99"}]
    after += [
        {"role": "user", "content": f"message number {i}" + (" edited" if i % 7 == 0 else "")}
        for i in range(100, 500)
    ]
    after += [{"role": "user", "content": f"new message {k}"} for k in range(30)]
    session = Session.objects.create(project=project, external_id="walk")
    ev = Event.objects.create(project=project, session=session, before=before, after=after, status="checked")
    client.login(username="alice", password=PASSWORD)
    before_ids: list[int] = []
    after_only: list[int] = []  # rows of an after message alone (the summary, the new turns)
    for page in (1, 2, 3):
        body = client.get(f"/events/{ev.pk}/?full=1&page={page}").content.decode()
        assert f"messages page {page} of 3" in body
        before_ids += [int(x) for x in re.findall(r'id="m-before-(\d+)"', body)]
        after_only += [int(x) for x in re.findall(r'id="m-after-(\d+)"', body)]
    assert before_ids == list(range(500))
    assert after_only == [0, *range(401, 431)]
