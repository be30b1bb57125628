"""`Client`: POST events, ask the gate, read an event back. Standard library HTTP only.

Retries: a 429, 502, 503 or 504 answer, a refused/reset connection or a timeout is retried with
the same Idempotency-Key (so a retry never makes a second event; the server answers 200 with the
first one), waiting `Retry-After` when the server sends it, else 0.5 s, 1 s, 2 s … Other answers
are not retried: 4xx raise `ApiError` naming the server's `error` and `field`.
"""

from __future__ import annotations

import gzip
import json
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from ctxaudit.client.results import EventAccepted, EventResult, GateResult

RETRY_STATUSES = frozenset({429, 502, 503, 504})
# Bodies above this are gzip-compressed (the API accepts Content-Encoding: gzip; README "API").
GZIP_ABOVE_BYTES = 64 * 1024
USER_AGENT = "ctxaudit-client/0.1"


class ClientError(Exception):
    """Base of every error `Client` raises."""


class ApiError(ClientError):
    """The server refused the request (4xx, or a 5xx that is not retried).

    status: the HTTP status; error: the server's message; field: the request field it names
    (e.g. "before", "Idempotency-Key"), when it names one.
    """

    def __init__(self, status: int, error: str, field: str | None = None) -> None:
        where = f" (field {field})" if field else ""
        super().__init__(f"HTTP {status}: {error}{where}")
        self.status = status
        self.error = error
        self.field = field


class Unavailable(ClientError):
    """The server could not be reached, or kept answering 429/5xx, within the retries and the
    time budget. `last_status` is the last HTTP status seen (None: no answer at all)."""

    def __init__(self, message: str, last_status: int | None = None) -> None:
        super().__init__(message)
        self.last_status = last_status


def _event_body(event: Mapping[str, Any] | None, fields: Mapping[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = dict(event or {})
    body.update({k: v for k, v in fields.items() if v is not None})
    for key in ("session_id", "before", "after"):
        if key not in body:
            raise ValueError(f"an event needs {key!r}")
    return body


class Client:
    """A client of one ctxaudit server.

    url: the server's base URL (e.g. "https://ctxaudit.example.com"); api_key: a key of the
    project (`manage.py create_api_key`), sent as `Authorization: Bearer`; timeout: seconds per
    request; retries: how many times a retryable failure is tried again; deadline: seconds the
    whole call may take, retries and waits included (None: no limit) — a hook that must never
    hold up its agent sets it; sleep: how to wait between tries (tests pass a fake).
    """

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        *,
        timeout: float = 10.0,
        retries: int = 3,
        deadline: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"url must be an http(s) URL, got {url!r}")
        self.url = url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.retries = max(0, retries)
        self.deadline = deadline
        self._sleep = sleep

    # --- the API -------------------------------------------------------------------------

    def post_event(
        self, event: Mapping[str, Any] | None = None, *, idempotency_key: str | None = None, **fields: Any
    ) -> EventAccepted:
        """POST /api/v1/events. `event` is the body as a dict (README "API" fields: session_id,
        before, after, rules, sequence, strategy, model, format, metadata, occurred_at) and/or
        the same fields as keywords. Without `idempotency_key` a random one is made, so retries
        of this call never create a second event. Returns EventAccepted (created=False when the
        key was already used). Raises ApiError (4xx), Unavailable, ValueError (no session_id,
        before or after)."""
        key = idempotency_key or str(uuid.uuid4())
        status, data = self._request("POST", "/api/v1/events", _event_body(event, fields), key)
        return EventAccepted.from_json(data, created=status == 202, idempotency_key=key)

    def gate(
        self, event: Mapping[str, Any] | None = None, *, idempotency_key: str | None = None, **fields: Any
    ) -> GateResult:
        """POST /api/v1/gate: store the event and check it now. Same body and errors as
        `post_event`. Returns GateResult; `result.passed` is False for any verdict but "pass"."""
        key = idempotency_key or str(uuid.uuid4())
        _, data = self._request("POST", "/api/v1/gate", _event_body(event, fields), key)
        return GateResult.from_json(data, idempotency_key=key)

    def get_event(self, event_id: int) -> EventResult:
        """GET /api/v1/events/<id> (a key with the `read` scope). Raises ApiError (404: not an
        event of this key's project) or Unavailable."""
        _, data = self._request("GET", f"/api/v1/events/{int(event_id)}", None, None)
        return EventResult.from_json(data)

    # --- transport -----------------------------------------------------------------------

    def _build(self, method: str, path: str, body: Any, key: str | None) -> urllib.request.Request:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
            headers["Content-Type"] = "application/json"
            if len(data) > GZIP_ABOVE_BYTES:
                data = gzip.compress(data)
                headers["Content-Encoding"] = "gzip"
        if key:
            headers["Idempotency-Key"] = key
        return urllib.request.Request(self.url + path, data=data, headers=headers, method=method)  # noqa: S310 - scheme checked in __init__

    def _request(self, method: str, path: str, body: Any, key: str | None) -> tuple[int, Any]:
        start = time.monotonic()
        last_status: int | None = None
        problem = "no attempt"
        for attempt in range(self.retries + 1):
            remaining = None if self.deadline is None else self.deadline - (time.monotonic() - start)
            if remaining is not None and remaining <= 0:
                break
            timeout = self.timeout if remaining is None else min(self.timeout, remaining)
            wait: float | None = None
            try:
                with urllib.request.urlopen(self._build(method, path, body, key), timeout=timeout) as resp:  # noqa: S310 - the URL's scheme is checked in __init__
                    return resp.status, _decode(resp.read())
            except urllib.error.HTTPError as exc:
                payload = _decode(exc.read())
                last_status = exc.code
                if exc.code not in RETRY_STATUSES:
                    err = payload.get("error") if isinstance(payload, dict) else None
                    fld = payload.get("field") if isinstance(payload, dict) else None
                    raise ApiError(
                        exc.code,
                        err if isinstance(err, str) else exc.reason,
                        fld if isinstance(fld, str) else None,
                    ) from None
                problem = f"HTTP {exc.code}"
                wait = _retry_after(exc.headers.get("Retry-After"))
            except OSError as exc:  # URLError, refused/reset connections and timeouts are all OSErrors
                reason = getattr(exc, "reason", exc)
                problem = f"cannot reach {self.url}: {reason}"
            if attempt == self.retries:
                break
            delay = wait if wait is not None else 0.5 * 2**attempt
            if self.deadline is not None:
                left = self.deadline - (time.monotonic() - start)
                if delay >= left:
                    break
            self._sleep(delay)
        raise Unavailable(f"{method} {path}: {problem}", last_status)


def _decode(raw: bytes) -> Any:
    if not raw:
        return {}
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {"error": raw[:200].decode("utf-8", "replace")}


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds form); None when absent or a date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
