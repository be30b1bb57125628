"""Settings for the Celery worker that integration tests start as a real process.

CTXAUDIT_TEST_CHECK_DELAY (seconds) stretches each check so a test can kill -9 the worker in
the middle of one. The delay sits between the claim (attempts + 1) and the result write.
"""

from __future__ import annotations

import os
import time

from celery.signals import worker_process_init, worker_ready

from tests.settings import *  # noqa: F403

_DELAY = float(os.environ.get("CTXAUDIT_TEST_CHECK_DELAY", "0"))


def _slow_down_checks(**_: object) -> None:
    if not _DELAY:
        return
    from ctxaudit.audits import services

    real = services.run_checks

    def slow_run_checks(*args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(_DELAY)
        return real(*args, **kwargs)

    services.run_checks = slow_run_checks


worker_process_init.connect(_slow_down_checks, weak=False)
worker_ready.connect(_slow_down_checks, weak=False)  # solo pool: no child process init
