"""Test settings: the app's settings with a fast hasher. DATABASE_URL / CELERY_BROKER_URL still apply."""

from __future__ import annotations

import os

os.environ.setdefault("DEBUG", "true")
os.environ.setdefault("SECRET_KEY", "tests-only-secret-key")

from ctxaudit.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
SECURE_SSL_REDIRECT = False
STORAGES = {"staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}

# Whitenoise serves from the finders in tests (no collectstatic), and so does not look for STATIC_ROOT.
WHITENOISE_AUTOREFRESH = True
WHITENOISE_USE_FINDERS = True

# Rate-limit counters of this test run only: the default directory is shared by every ctxaudit
# process on the host (other test runs included), whose minute sweeps would delete our counters.
import atexit  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

# A server a test starts (with DJANGO_SETTINGS_MODULE inherited) names its own in the environment,
# shared by its worker processes.
CTXAUDIT_RATE_LIMIT_DIR = os.environ.get("CTXAUDIT_RATE_LIMIT_DIR") or tempfile.mkdtemp(
    prefix="ctxaudit-ratelimit-tests-"
)
if not os.environ.get("CTXAUDIT_RATE_LIMIT_DIR"):
    atexit.register(shutil.rmtree, CTXAUDIT_RATE_LIMIT_DIR, ignore_errors=True)
