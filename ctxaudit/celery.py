"""The Celery app. Without CELERY_BROKER_URL, settings make tasks run eagerly in-process."""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ctxaudit.settings")

app = Celery("ctxaudit")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _warm_engine(**_: object) -> None:
    """Each worker process loads the tokenizer and the engine's tables before its first task, and
    keeps them out of the garbage collector's full passes (engine/gcpause.py)."""
    from ctxaudit.engine.gcpause import freeze_startup_objects
    from ctxaudit.engine.warmup import warm_up

    warm_up()
    freeze_startup_objects()


worker_process_init.connect(_warm_engine, weak=False)
