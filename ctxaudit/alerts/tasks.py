"""Thin tasks: fetch by id, call a service (services.py does the work)."""

from __future__ import annotations

from typing import Any

from django.db import InterfaceError, OperationalError

from ctxaudit.core.tasks import ctxaudit_task

DELIVERY_MAX_RETRIES = 5


@ctxaudit_task(
    name="alerts.evaluate",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),  # transient database trouble only
    retry_backoff=True,
    max_retries=5,
)
def alerts_evaluate_task(event_id: int) -> None:
    from ctxaudit.alerts.services import alerts_for_event

    alerts_for_event(event_id)


@ctxaudit_task(
    name="alerts.deliver",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=DELIVERY_MAX_RETRIES,
)
def alerts_deliver_task(self: Any, delivery_id: str) -> None:
    """Send one notification; on a transient failure retry with exponential backoff.

    In the embedded default (no broker) Celery runs the retry at once, without the countdown.
    """
    from ctxaudit.alerts.services import delivery_attempt, retry_countdown

    retries = self.request.retries or 0
    outcome = delivery_attempt(delivery_id=delivery_id, last_try=retries >= DELIVERY_MAX_RETRIES)
    if outcome == "retry":
        raise self.retry(countdown=retry_countdown(retries))


@ctxaudit_task(name="alerts.requeue_deliveries")
def alerts_requeue_deliveries_task() -> None:
    from ctxaudit.alerts.services import deliveries_requeue

    deliveries_requeue()


@ctxaudit_task(name="alerts.requeue_evaluations")
def alerts_requeue_evaluations_task() -> None:
    from ctxaudit.alerts.services import evaluations_requeue

    evaluations_requeue()


@ctxaudit_task(name="alerts.evaluate_windows")
def alerts_evaluate_windows_task() -> None:
    from ctxaudit.alerts.services import windows_evaluate_all

    windows_evaluate_all()
