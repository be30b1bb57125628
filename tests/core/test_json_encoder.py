"""The contexts' and reports' JSON encoder: orjson's speed, the json module's values (expected
values written before the run)."""

from __future__ import annotations

import json

import pytest

from ctxaudit.ingest.models import Event, Utf8JSONEncoder


def test_it_writes_utf8_and_escapes_controls() -> None:
    text = Utf8JSONEncoder().encode({"k": "中文\n\x00", "n": [1, 2.5, None, True]})
    assert text == '{"k":"中文\\n\\u0000","n":[1,2.5,null,true]}'
    assert json.loads(text) == {"k": "中文\n\x00", "n": [1, 2.5, None, True]}


def test_what_orjson_will_not_write_goes_the_json_module_way() -> None:
    assert Utf8JSONEncoder().encode(2**70) == "1180591620717411303424"
    # a lone surrogate: as the json module writes it with ensure_ascii off (ingestion removes them first)
    assert Utf8JSONEncoder().encode("\ud800") == json.dumps("\ud800", ensure_ascii=False)
    assert Utf8JSONEncoder().encode({1: "a"}) == '{"1": "a"}'
    assert Utf8JSONEncoder(indent=1).encode({"a": 1}) == '{\n "a": 1\n}'
    assert Utf8JSONEncoder().encode(float("nan")) == "null"


@pytest.mark.django_db
def test_contexts_round_trip_through_the_database() -> None:
    from tests.factories import event

    text = "规则：不得泄露密钥。\n\tTab \u202e and \x01 end"
    ev = event(before=[{"role": "system", "content": text}, {"role": "user", "content": "hi"}])
    stored = Event.objects.values_list("before", flat=True).get(pk=ev.pk)
    assert stored[0]["content"] == "规则：不得泄露密钥。\n\tTab ⟦U+202E⟧ and \x01 end"
    assert stored[1]["content"] == "hi"
