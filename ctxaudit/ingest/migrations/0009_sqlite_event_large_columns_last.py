"""SQLite only: the event table rebuilt with its large JSON columns last.

SQLite keeps a row's columns in table order, and a value too large for its page continues on a
chain of overflow pages that must be walked to reach any column after it. With the contexts in
the middle of the row, reading an event's status, verdict, session or project (the event list,
the session timeline and its decay sync, the check itself) read every page of its contexts:
~0.5 ms per 200k-token event, each time (issue 13). Rebuilt with before, after, report, metadata
and rules last, those reads stop at the first overflow page. PostgreSQL keeps large values out of
line anyway (TOAST); nothing changes there.

A later migration that makes Django rebuild this table on SQLite (an AlterField of an Event field)
puts the columns back in model order; the data stay correct either way, only those reads slow
down again.
"""

from django.db import migrations

LARGE = ("before", "after", "report", "metadata", "rules")


def large_columns_last(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    event = apps.get_model("ingest", "Event")
    large = [f for f in event._meta.local_concrete_fields if f.name in LARGE]
    counters = [f.creation_counter for f in large]
    try:
        # The rebuilt table's columns follow the fields' creation order (Django's SQLite schema
        # editor copies the data by column name).
        for i, f in enumerate(large):
            f.creation_counter = 10**9 + i
        schema_editor._remake_table(event)  # noqa: SLF001 - Django's own SQLite table rebuild
    finally:
        for f, c in zip(large, counters, strict=True):
            f.creation_counter = c


class Migration(migrations.Migration):
    dependencies = [("ingest", "0008_event_rules_extracted_by_check")]

    operations = [migrations.RunPython(large_columns_last, migrations.RunPython.noop)]
