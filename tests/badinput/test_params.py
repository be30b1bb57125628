from __future__ import annotations

import pytest

from ctxaudit.core.params import db_int


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("12", 12),
        ("0", 0),
        ("9223372036854775807", 2**63 - 1),
        ("9223372036854775808", None),
        ("9" * 30, None),
        ("²", None),
        ("١٢", None),
        ("-1", None),
        (" 1", None),
        ("", None),
        (None, None),
    ],
)
def test_db_int_accepts_only_ids_a_database_can_compare(raw, expected) -> None:
    assert db_int(raw) == expected
