from __future__ import annotations

import logging
import os

from django.apps import AppConfig
from django.conf import settings

logger = logging.getLogger("ctxaudit")


class CoreConfig(AppConfig):
    name = "ctxaudit.core"
    label = "core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        if not settings.DEBUG and not os.environ.get("CTXAUDIT_BASE_URL"):
            logger.warning(
                "CTXAUDIT_BASE_URL is not set: links in alert notifications will point at %s; "
                "set it to the address people open the dashboard at",
                settings.CTXAUDIT_BASE_URL,
            )
