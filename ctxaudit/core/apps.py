from __future__ import annotations

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "ctxaudit.core"
    label = "core"
    default_auto_field = "django.db.models.BigAutoField"
