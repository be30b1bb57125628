"""A WSGI app for tests/load: any path sleeps `?s=` seconds (at most 5), behind the real load
shedder (ctxaudit/core/shedding.py), so a test can hold gunicorn's threads for a known time."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ctxaudit.settings")

from ctxaudit.core.shedding import LoadShedMiddleware  # noqa: E402 - needs the settings module set


def _sleep(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    seconds = float(parse_qs(environ.get("QUERY_STRING", "")).get("s", ["0"])[0])
    time.sleep(min(max(seconds, 0.0), 5.0))
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


application = LoadShedMiddleware(_sleep)
