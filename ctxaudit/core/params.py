"""Reading ids and numbers from query strings and forms without letting a bad value reach SQL."""

from __future__ import annotations

# The largest value of a PostgreSQL bigint / SQLite INTEGER (signed 64-bit).
DB_INT_MAX = 2**63 - 1


def db_int(raw: str | None) -> int | None:
    """`raw` as a non-negative int that every database column can compare with, else None.

    Only ASCII digits count ("²".isdigit() is True, int("²") raises), and values past
    DB_INT_MAX (which SQLite refuses with OverflowError and PostgreSQL with "out of range") are
    None: no row can have such an id.
    """
    if not raw or not raw.isascii() or not raw.isdigit() or len(raw) > 19:
        return None
    value = int(raw)
    return value if value <= DB_INT_MAX else None
