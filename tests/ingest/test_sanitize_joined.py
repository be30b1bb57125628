"""event_spec_sanitize cleans all of an event's strings in one joined scan (issue 13); what it
stores must be exactly what cleaning each field alone stored before: checked against that
per-field reference on hostile events (PII cut across fields and keys, NUL — the separator —
and lone surrogates in content and ids, bidi controls, over-long ids)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ctxaudit.engine.pii import redact, scrub_unstorable
from ctxaudit.ingest.sanitize import (
    MODEL_MAX,
    RULE_ID_MAX,
    SESSION_ID_MAX,
    _fit,
    event_spec_sanitize,
    reveal_bidi_controls,
)
from ctxaudit.ingest.schemas import STRATEGY_MAX_CHARS, EventIn
from tests.engine.test_pii_scan import PIECES
from tests.security.hostile import CORPUS

KEY = b"p" * 32


def _text(value: str, redact_pii: bool, counts: dict[str, int], key: bytes | None) -> str:
    text = reveal_bidi_controls(scrub_unstorable(value))
    if redact_pii:
        text, found = redact(text, key=key)
        for kind, n in found.items():
            counts[kind] = counts.get(kind, 0) + n
    return text


def _clean(value: Any, redact_pii: bool, counts: dict[str, int], key: bytes | None) -> Any:
    if isinstance(value, str):
        return _text(value, redact_pii, counts, key)
    if isinstance(value, list):
        return [_clean(v, redact_pii, counts, key) for v in value]
    if isinstance(value, dict):
        return {
            _text(str(k), redact_pii, counts, key): _clean(v, redact_pii, counts, key)
            for k, v in value.items()
        }
    return value


def per_field(spec: EventIn, redact_pii: bool, key: bytes | None) -> tuple[dict[str, Any], dict[str, int]]:
    """The sanitizer as it was before the joined scan: every string cleaned on its own."""
    counts: dict[str, int] = {}

    def ident(v: str, limit: int) -> str:
        return _fit(_text(v, redact_pii, counts, key), limit)

    rules = None
    if spec.rules is not None:
        rules = [
            {
                "id": ident(r.id, RULE_ID_MAX),
                "text": _clean(r.text, redact_pii, counts, key),
                "severity": r.severity,
            }
            for r in spec.rules
        ]
    out = {
        "session_id": ident(spec.session_id, SESSION_ID_MAX),
        "model": ident(spec.model, MODEL_MAX) if spec.model is not None else None,
        "strategy": ident(spec.strategy, STRATEGY_MAX_CHARS),
        "before": _clean(spec.before, redact_pii, counts, key),
        "after": _clean(spec.after, redact_pii, counts, key),
        "rules": rules,
        "metadata": _clean(spec.metadata, redact_pii, counts, key),
    }
    return out, counts


def joined(spec: EventIn, redact_pii: bool, key: bytes | None) -> tuple[dict[str, Any], dict[str, int]]:
    clean, counts = event_spec_sanitize(spec, redact_pii=redact_pii, key=key)
    out = clean.model_dump(
        include={"session_id", "model", "strategy", "before", "after", "rules", "metadata"}
    )
    if out["rules"] is not None:
        out["rules"] = [{k: r[k] for k in ("id", "text", "severity")} for r in out["rules"]]
    return out, counts


def test_a_hostile_event_is_stored_as_field_by_field_cleaning_stored_it() -> None:
    spec = EventIn.model_validate(
        {
            "session_id": "alice@example.com-run\u202e1",
            "model": "gpt-x 13812345678",
            "strategy": "summary password=abc",
            "before": [
                {"role": "system", "content": "call 138"},
                {"role": "user", "content": "12345678 or mail a@b"},
                {"role": "user", "content": ".com; token=", "name": "abcdefgh"},
                {"role": "tool", "content": [{"type": "text", "text": "\x00password=abc\x00defghijk\ud800"}]},
            ],
            "after": "4111 1111 1111 1111 and 11010519491231002X \u2066x\u2069",
            "rules": [{"id": "r " + "x" * 85 + " a@b.com", "text": "Bearer abcdefghijklmnop"}],
            "metadata": {
                "li.lei@example.com": {"13812345678": ["+44 20 7946 0958", 3, None, True]},
                "k\x00": "v",
            },
        }
    )
    for redact_pii in (True, False):
        for key in (KEY, None):
            assert joined(spec, redact_pii, key) == per_field(spec, redact_pii, key)
    out, counts = joined(spec, True, None)
    assert out["session_id"] == "[EMAIL]-run⟦U+202E⟧1"  # a NUL in an id is refused (400) before this
    assert out["model"] == "gpt-x [PHONE]"
    assert out["rules"][0]["id"] == "r " + "x" * 85 + " [EMAIL]"
    assert len(joined(spec, True, KEY)[0]["rules"][0]["id"]) == RULE_ID_MAX  # the tag makes it longer: cut
    assert out["strategy"] == "summary password=abc"
    assert out["before"][1]["content"] == "12345678 or mail a@b"
    # NUL becomes U+FFFD before redaction, and U+FFFD can be part of a labelled value
    assert out["before"][3]["content"][0]["text"] == "\ufffdpassword=[SECRET]"
    assert out["after"] == "[CARD] and [CN_ID] ⟦U+2066⟧x⟦U+2069⟧"
    assert out["rules"][0]["text"] == "Bearer [SECRET]"
    assert list(out["metadata"]) == ["[EMAIL]", "k\ufffd"]
    assert out["metadata"]["[EMAIL]"] == {"[PHONE]": ["[PHONE]", 3, None, True]}
    assert counts == {"email": 3, "phone": 3, "card": 1, "cn_id": 1, "secret": 2}


@pytest.mark.parametrize("seed", range(4))
def test_random_hostile_events_match_field_by_field_cleaning(seed: int) -> None:
    rnd = random.Random(seed)
    # pydantic refuses lone surrogates in the str fields (ids, model, strategy, rule text), and
    # the schema refuses a NUL in an identifier (session_id, model, rule ids: kept exactly)
    ids = [
        *PIECES,
        *(h.text[:200] for h in CORPUS if "\ud800" not in h.text and "\x00" not in h.text),
        "\u202e",
        "password=",
        "abc",
        "@",
    ]
    pool = [*ids, "\ud800", "\x00"]

    def text(limit: int = 10_000, choices: list[str] = pool) -> str:
        return "".join(rnd.choice(choices) for _ in range(rnd.randint(1, 6)))[:limit]

    def ident(limit: int) -> str:
        return text(limit, ids).strip() or "x"

    for _ in range(40):
        body = {
            "session_id": ident(200),
            "model": ident(200),
            "strategy": ident(500),
            "before": [
                {"role": rnd.choice(["system", "user", "tool"]), "content": text()}
                for _ in range(rnd.randint(1, 6))
            ],
            "after": text(),
            "rules": [{"id": ident(100), "text": ident(10_000)} for _ in range(rnd.randint(0, 3))] or None,
            "metadata": {text(): [text(), {text(): text()}] for _ in range(rnd.randint(0, 3))},
        }
        spec = EventIn.model_validate(body)
        key = rnd.choice([KEY, None])
        assert joined(spec, True, key) == per_field(spec, True, key), body
