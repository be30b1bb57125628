from __future__ import annotations

from django.conf import settings

from ctxaudit.core.tasks import ctxaudit_task


@ctxaudit_task(name="ingest.requeue_pending")
def requeue_pending_task() -> None:
    from ctxaudit.ingest.services import events_requeue_pending

    events_requeue_pending(older_than_seconds=settings.CTXAUDIT_PENDING_TIMEOUT_SECONDS)


@ctxaudit_task(name="ingest.purge_expired")
def purge_expired_task() -> None:
    from ctxaudit.ingest.services import events_purge_expired

    events_purge_expired()
