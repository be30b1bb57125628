"""Each log line is printed once (expected values written before the run)."""

from __future__ import annotations

import logging


def _printers(name: str) -> list[str]:
    """The loggers whose console handlers print a record logged to `name` (pytest's own capture
    handlers, StreamHandler subclasses, left out)."""
    logger: logging.Logger | None = logging.getLogger(name)
    out = []
    while logger is not None:
        out += [logger.name for h in logger.handlers if type(h) is logging.StreamHandler]
        if not logger.propagate:
            break
        logger = logger.parent
    return out


def test_a_django_warning_is_printed_once_with_debug_on() -> None:
    # Django's own "django" console handler (DEBUG only) printed every 403/404 beside the root's
    assert _printers("django.request") == ["root"]
    assert _printers("django.security.csrf") == ["root"]
    assert _printers("ctxaudit.ingest") == ["root"]


def test_the_development_server_keeps_its_request_lines() -> None:
    server = logging.getLogger("django.server")
    consoles = [h for h in server.handlers if type(h) is logging.StreamHandler]
    assert len(consoles) == 1 and server.propagate is False
    assert consoles[0].formatter is not None and "server_time" in (consoles[0].formatter._fmt or "")
