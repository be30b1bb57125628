from __future__ import annotations

from django.db import InterfaceError, OperationalError

from ctxaudit.core.tasks import ctxaudit_task


@ctxaudit_task(
    name="audits.event_check",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),  # transient database trouble only
    retry_backoff=True,
    max_retries=5,
)
def event_check_task(event_id: int) -> None:
    from ctxaudit.audits.services import event_check
    from ctxaudit.engine.gcpause import gc_paused

    with gc_paused():  # loading a 2 MB event and checking it makes short-lived objects only
        event_check(event_id=event_id)
