"""SQLite: an event's small columns come before its large JSON ones (migration ingest/0009), so
reading its status, verdict, session or project does not walk the overflow pages of its
contexts (issue 13)."""

from __future__ import annotations

import pytest
from django.db import connection

LARGE = {"before", "after", "report", "metadata", "rules"}


@pytest.mark.django_db
def test_the_event_tables_large_columns_come_last() -> None:
    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL keeps large values out of line (TOAST): the order does not matter there")
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pragma_table_info('ingest_event') ORDER BY cid")
        columns = [row[0] for row in cursor.fetchall()]
    first_large = min(columns.index(c) for c in LARGE)
    assert set(columns[first_large:]) == LARGE, columns
    assert {"status", "verdict", "session_id", "project_id", "occurred_at"} <= set(columns[:first_large])
