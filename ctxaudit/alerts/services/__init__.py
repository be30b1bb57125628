"""Writes for alerts (the one writer, HackSoft style), by stage: policy and channels, evaluation of a
checked event, lifecycle (user actions), notifications (deliveries)."""

from __future__ import annotations

from ctxaudit.alerts.services.evaluation import (
    alert_raise,
    alerts_evaluate_enqueue,
    alerts_for_event,
    decay_compressions,
)
from ctxaudit.alerts.services.lifecycle import (
    AlertTransitionError,
    alert_acknowledge,
    alert_assign,
    alert_comment,
    alert_mute,
    alert_reopen,
    alert_resolve,
    alerts_bulk_acknowledge,
)
from ctxaudit.alerts.services.notifications import (
    DELIVERY_LEASE_SECONDS,
    alert_to_dict,
    deliveries_create,
    deliveries_requeue,
    delivery_attempt,
    delivery_enqueue,
    evaluations_requeue,
    retry_countdown,
)
from ctxaudit.alerts.services.policy import (
    alert_policy_for_project,
    alert_policy_update,
    channel_create,
    channel_set_enabled,
    channel_test,
)
from ctxaudit.alerts.services.windows import (
    monitor_evaluate,
    window_counts,
    window_monitor_delete,
    window_monitor_save,
    windows_evaluate_all,
    windows_for_project,
)

__all__ = [
    "alert_policy_for_project",
    "alert_policy_update",
    "channel_create",
    "channel_set_enabled",
    "channel_test",
    "alert_raise",
    "alerts_evaluate_enqueue",
    "alerts_for_event",
    "decay_compressions",
    "AlertTransitionError",
    "alert_acknowledge",
    "alert_assign",
    "alert_comment",
    "alert_mute",
    "alert_reopen",
    "alert_resolve",
    "alerts_bulk_acknowledge",
    "DELIVERY_LEASE_SECONDS",
    "alert_to_dict",
    "deliveries_create",
    "deliveries_requeue",
    "delivery_attempt",
    "delivery_enqueue",
    "evaluations_requeue",
    "retry_countdown",
    "monitor_evaluate",
    "window_counts",
    "window_monitor_delete",
    "window_monitor_save",
    "windows_evaluate_all",
    "windows_for_project",
]
