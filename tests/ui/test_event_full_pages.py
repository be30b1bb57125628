"""`/events/<id>/?full=1` shows every row a page at a time (issue 13: ?full=1 of a 100k-message
event took 47 s and returned 45 MB of HTML)."""

from __future__ import annotations

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
