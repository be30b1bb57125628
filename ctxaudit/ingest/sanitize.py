"""Make an incoming event storable and private before its first durable write.

Every string of the event — contexts, rule ids and texts, metadata keys and values, session id, strategy,
model — loses NUL bytes and lone surrogates (engine.pii.scrub_unstorable: PostgreSQL rejects
\\u0000, UTF-8 cannot hold a lone surrogate), and bidirectional override/isolate controls are shown
as "⟦U+202E⟧" instead of reordering the text a reviewer reads. When the project has `redact_pii`
on (the default), every one of those strings also has e-mails, phones, resident IDs, cards and
secrets replaced with typed placeholders carrying a per-project keyed tag, "[EMAIL#3f9a1c]"
(engine.pii.redact, pseudonym): the value is gone, but two different addresses stay different for
the checks.

Identifiers (session id, rule ids, model) go through the same steps, deterministically: the same
raw id always becomes the same stored id, so a session's events stay together, Idempotency-Key
replays still match, and `stored_identifier` turns a raw id from a lookup
(GET /api/v1/sessions/<id>/timeline) into the id that was stored. An identifier that the tags or
the ⟦U+…⟧ marks make longer than its column is cut and suffixed with a hash of the whole
(`_fit`), which keeps it unique.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

from django.conf import settings

from ctxaudit.engine.pii import redact, scrub_unstorable
from ctxaudit.ingest.schemas import STRATEGY_MAX_CHARS, EventIn
from ctxaudit.projects.models import Project


def pii_key_for(project_id: int) -> bytes:
    """The project's pseudonym key: derived from SECRET_KEY, so tags are stable per project and
    differ across projects (a tag cannot link one tenant's data to another's)."""
    return hmac.new(
        settings.SECRET_KEY.encode(), f"ctxaudit-pii:{project_id}".encode(), hashlib.sha256
    ).digest()


# Bidirectional overrides and isolates reorder what a reviewer reads ("evil" shown as "live"):
# in evidence they are made visible as their code point instead of taking effect.
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def reveal_bidi_controls(text: str) -> str:
    """ "a\u202eb" → "a⟦U+202E⟧b": the control is shown, not obeyed."""
    return (
        _BIDI_CONTROLS.sub(lambda m: f"⟦U+{ord(m.group()):04X}⟧", text)
        if _BIDI_CONTROLS.search(text)
        else text
    )


def _text(value: str, *, redact_pii: bool, counts: dict[str, int], key: bytes | None) -> str:
    text = reveal_bidi_controls(scrub_unstorable(value))
    if redact_pii:
        text, found = redact(text, key=key)
        for kind, n in found.items():
            counts[kind] = counts.get(kind, 0) + n
    return text


def _clean(value: Any, *, redact_pii: bool, counts: dict[str, int], key: bytes | None = None) -> Any:
    if isinstance(value, str):
        return _text(value, redact_pii=redact_pii, counts=counts, key=key)
    if isinstance(value, list):
        return [_clean(v, redact_pii=redact_pii, counts=counts, key=key) for v in value]
    if isinstance(value, dict):
        return {
            _text(str(k), redact_pii=redact_pii, counts=counts, key=key): _clean(
                v, redact_pii=redact_pii, counts=counts, key=key
            )
            for k, v in value.items()
        }
    return value


# Column widths of the identifiers (ingest.models Session.external_id, Event.model; rule ids in
# SessionRule/RuleOutcome/Finding/Alert).
SESSION_ID_MAX = 200
MODEL_MAX = 200
RULE_ID_MAX = 100


def _fit(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its head + "…" + 12 hex of its SHA-256."""
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{text[: limit - 13]}…{digest}"


def _identifier(
    value: str, limit: int, *, redact_pii: bool, counts: dict[str, int], key: bytes | None
) -> str:
    return _fit(_text(value, redact_pii=redact_pii, counts=counts, key=key), limit)


def stored_identifier(project: Project, raw: str, *, limit: int = SESSION_ID_MAX) -> str:
    """The id stored for identifier `raw` sent to `project` (a Project): what ingestion makes of
    it under the project's current `redact_pii`, so a lookup by the id the agent knows finds the
    row. E.g. "alice@example.com-run1" → "[EMAIL#3f9a1c]-run1"."""
    return _identifier(raw, limit, redact_pii=project.redact_pii, counts={}, key=pii_key_for(project.pk))


def stored_identifiers(project: Project, raw: str, *, limit: int = SESSION_ID_MAX) -> list[str]:
    """Every id `raw` may have been stored under: as ingestion makes it today, and as it was
    made with redaction off (rows stored before the project turned `redact_pii` on)."""
    seen = {stored_identifier(project, raw, limit=limit)}
    seen.add(_identifier(raw, limit, redact_pii=False, counts={}, key=None))
    return sorted(seen)


def event_spec_sanitize(
    spec: EventIn, *, redact_pii: bool, key: bytes | None = None
) -> tuple[EventIn, dict[str, int]]:
    """A copy of `spec` safe to store; returns (spec, redaction counts by kind, e.g. {"email": 2}).

    key: pseudonym key (pii_key_for); placeholders then carry a per-value tag ("[EMAIL#3f9a1c]").
    Every field is cleaned, identifiers included (see the module docstring)."""
    counts: dict[str, int] = {}
    opts: dict[str, Any] = {"redact_pii": redact_pii, "counts": counts, "key": key}
    rules = None
    if spec.rules is not None:
        rules = [
            r.model_copy(
                update={"id": _identifier(r.id, RULE_ID_MAX, **opts), "text": _clean(r.text, **opts)}
            )
            for r in spec.rules
        ]
    clean = spec.model_copy(
        update={
            "session_id": _identifier(spec.session_id, SESSION_ID_MAX, **opts),
            "model": _identifier(spec.model, MODEL_MAX, **opts) if spec.model is not None else None,
            "strategy": _identifier(spec.strategy, STRATEGY_MAX_CHARS, **opts),
            "before": _clean(spec.before, **opts),
            "after": _clean(spec.after, **opts),
            "rules": rules,
            "metadata": _clean(spec.metadata, **opts),
        }
    )
    return clean, counts


def stored_text_sanitize(value: Any, *, redact_pii: bool, key: bytes | None = None) -> Any:
    """Any other ingested value kept on its own (an OTLP call's context), cleaned as event
    contexts are: storable, bidi controls shown, PII redacted with the project's keyed tags."""
    return _clean(value, redact_pii=redact_pii, counts={}, key=key)
