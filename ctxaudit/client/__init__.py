"""ctxaudit's Python client: `Client(url, api_key)` with `post_event`, `gate`, `get_event`.

Standard library only, and no Django: it ships both inside `ctxaudit` and alone as the light
distribution `ctxaudit-client` (clients/python/, `pip install ./clients/python`).
"""

from __future__ import annotations

from ctxaudit.client.core import ApiError, Client, ClientError, Unavailable
from ctxaudit.client.results import EventAccepted, EventResult, Finding, GateResult, RuleOutcome, Span

__all__ = [
    "ApiError",
    "Client",
    "ClientError",
    "EventAccepted",
    "EventResult",
    "Finding",
    "GateResult",
    "RuleOutcome",
    "Span",
    "Unavailable",
]
