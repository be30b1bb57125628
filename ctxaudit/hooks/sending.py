"""Delivery for hook runs: post or gate within the time budget, spool what cannot go now."""

from __future__ import annotations

import sys
from typing import Any

from ctxaudit.client import ApiError, Client, GateResult, Unavailable
from ctxaudit.hooks.settings import HookSettings
from ctxaudit.hooks.spool import flush_spool, spool_event


class Sender:
    """Sends one hook run's events; never raises for network trouble.

    Every call gets what is left of CTXAUDIT_HOOK_TIMEOUT as its deadline. An event the server
    cannot take now (down, slow, 429/5xx) is spooled; one it refuses (4xx) is reported on
    stderr and dropped, since sending it again cannot succeed.
    """

    def __init__(self, settings: HookSettings, client: Client | None = None) -> None:
        assert settings.url, "a Sender needs CTXAUDIT_URL"
        self.settings = settings
        self.client = client or Client(settings.url, settings.api_key, retries=2)
        self.spooled: list[str] = []

    def _budget(self) -> float:
        left = self.settings.remaining()
        self.client.deadline = left
        self.client.timeout = max(0.05, left)
        return left

    def post(self, key: str, body: dict[str, Any]) -> bool:
        """POST /api/v1/events. True when the server has the event."""
        if self._budget() <= 0:
            self._spool(key, body, "no time left")
            return False
        try:
            self.client.post_event(body, idempotency_key=key)
            return True
        except Unavailable as exc:
            self._spool(key, body, str(exc))
        except ApiError as exc:
            sys.stderr.write(f"ctxaudit hook: the server refused the event: {exc}\n")
        return False

    def gate(self, key: str, body: dict[str, Any]) -> GateResult | None:
        """POST /api/v1/gate. None when there is no answer in time (the event is then spooled
        and sent later through POST /api/v1/events, under the same key)."""
        if self._budget() <= 0:
            self._spool(key, body, "no time left")
            return None
        try:
            return self.client.gate(body, idempotency_key=key)
        except Unavailable as exc:
            self._spool(key, body, str(exc))
        except ApiError as exc:
            sys.stderr.write(f"ctxaudit hook: the server refused the event: {exc}\n")
        return None

    def flush(self) -> tuple[int, int]:
        """Send what earlier runs spooled, with the time left (never the events of this run)."""
        return flush_spool(self.settings, self.client, skip=set(self.spooled))

    def _spool(self, key: str, body: dict[str, Any], why: str) -> None:
        path = spool_event(self.settings, key, body)
        self.spooled.append(path.name)
        sys.stderr.write(f"ctxaudit hook: spooled the event for later ({why}): {path}\n")
