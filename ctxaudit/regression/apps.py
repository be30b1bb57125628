from __future__ import annotations

from django.apps import AppConfig


class RegressionConfig(AppConfig):
    """The troubleshooting checklist (seed §7.2), the symptom guide (§7.1), the regression set (§6.6)
    and the synchronous gate (POST /api/v1/gate)."""

    name = "ctxaudit.regression"
    label = "regression"
    default_auto_field = "django.db.models.BigAutoField"
