"""Span.to_dict builds its dict directly (issue 13: asdict deep-copied every span of a report);
it must give exactly what dataclasses.asdict gave, keys in the same order."""

from __future__ import annotations

from dataclasses import asdict

from ctxaudit.engine.types import Span


def test_span_dict_is_what_asdict_gave() -> None:
    span = Span(side="after", message_index=3, start=10, end=24, quote="never delete ⟦U+202E⟧")
    assert span.to_dict() == asdict(span)
    assert list(span.to_dict()) == ["side", "message_index", "start", "end", "quote"]
    assert span.to_dict() == {
        "side": "after",
        "message_index": 3,
        "start": 10,
        "end": 24,
        "quote": "never delete ⟦U+202E⟧",
    }
