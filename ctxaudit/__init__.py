"""ctxaudit: audit what context compression does to an agent's rules."""

from __future__ import annotations

# Importing the Celery app here makes `celery -A ctxaudit` and @shared_task work.
from ctxaudit.celery import app as celery_app

__all__ = ["celery_app"]
