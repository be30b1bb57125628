"""`ctxaudit_task`: our one task decorator (explicit name, no results, time limits, logging)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import wraps
from typing import Any

from celery import shared_task

logger = logging.getLogger("ctxaudit.tasks")


def ctxaudit_task(*, name: str, **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """shared_task with a required stable `name`, ignore_result and soft/hard time limits."""
    options.setdefault("ignore_result", True)
    options.setdefault("soft_time_limit", 300)
    options.setdefault("time_limit", 360)

    def decorate(fn: Callable[..., Any]) -> Any:
        @wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.monotonic()
            try:
                return fn(*args, **kwargs)
            finally:
                logger.info("task %s took %.3fs", name, time.monotonic() - t0)

        return shared_task(name=name, **options)(timed)

    return decorate
