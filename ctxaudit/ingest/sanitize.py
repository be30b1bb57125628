"""Make an incoming event storable and private before its first durable write.

Every string of the event (contexts, rules, metadata, session id, model) loses NUL bytes and lone
surrogates (engine.pii.scrub_unstorable: PostgreSQL rejects \\u0000, UTF-8 cannot hold a lone
surrogate), and bidirectional override/isolate controls are shown as "⟦U+202E⟧" instead of
reordering the text a reviewer reads. When the project has `redact_pii` on (the default), the free text (contexts, rule
texts, metadata values) also has e-mails, phones, resident IDs, cards and secrets replaced with
typed placeholders carrying a per-project keyed tag, "[EMAIL#3f9a1c]" (engine.pii.redact,
pseudonym): the value is gone, but two different addresses stay different for the checks. Session ids and the model name are identifiers: they are
scrubbed, not redacted, so that a session's events stay together.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

from django.conf import settings

from ctxaudit.engine.pii import redact, scrub_unstorable
from ctxaudit.ingest.schemas import EventIn


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


def _clean(value: Any, *, redact_pii: bool, counts: dict[str, int], key: bytes | None = None) -> Any:
    if isinstance(value, str):
        text = reveal_bidi_controls(scrub_unstorable(value))
        if redact_pii:
            text, found = redact(text, key=key)
            for kind, n in found.items():
                counts[kind] = counts.get(kind, 0) + n
        return text
    if isinstance(value, list):
        return [_clean(v, redact_pii=redact_pii, counts=counts, key=key) for v in value]
    if isinstance(value, dict):
        return {
            scrub_unstorable(str(k)): _clean(v, redact_pii=redact_pii, counts=counts, key=key)
            for k, v in value.items()
        }
    return value


def event_spec_sanitize(
    spec: EventIn, *, redact_pii: bool, key: bytes | None = None
) -> tuple[EventIn, dict[str, int]]:
    """A copy of `spec` safe to store; returns (spec, redaction counts by kind, e.g. {"email": 2}).

    key: pseudonym key (pii_key_for); placeholders then carry a per-value tag ("[EMAIL#3f9a1c]")."""
    counts: dict[str, int] = {}
    rules = None
    if spec.rules is not None:
        rules = [
            r.model_copy(
                update={
                    "id": scrub_unstorable(r.id),
                    "text": _clean(r.text, redact_pii=redact_pii, counts=counts, key=key),
                }
            )
            for r in spec.rules
        ]
    clean = spec.model_copy(
        update={
            "session_id": scrub_unstorable(spec.session_id),
            "model": scrub_unstorable(spec.model) if spec.model is not None else None,
            "strategy": reveal_bidi_controls(scrub_unstorable(spec.strategy)),
            "before": _clean(spec.before, redact_pii=redact_pii, counts=counts, key=key),
            "after": _clean(spec.after, redact_pii=redact_pii, counts=counts, key=key),
            "rules": rules,
            "metadata": _clean(spec.metadata, redact_pii=redact_pii, counts=counts, key=key),
        }
    )
    return clean, counts
