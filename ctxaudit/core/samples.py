"""Where the shared samples live (`../shared/samples/` beside the repo), without copying them."""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings


def shared_samples_dir() -> Path | None:
    """CTXAUDIT_SAMPLES_DIR if set, else <repo>/../shared/samples when it exists, else None."""
    explicit = os.environ.get("CTXAUDIT_SAMPLES_DIR")
    if explicit:
        return Path(explicit) if Path(explicit).is_dir() else None
    default = Path(settings.BASE_DIR).parent / "shared" / "samples"
    return default if default.is_dir() else None
