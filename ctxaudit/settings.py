"""ctxaudit settings: one file, every deployment knob read from the environment.

Documented in README.md ("Configuration"). Unset variables give the embedded default:
SQLite in ./db.sqlite3 and Celery tasks run eagerly in-process.
"""

from __future__ import annotations

from pathlib import Path

import environ
from csp.constants import NONCE as CSP_NONCE
from csp.constants import SELF as CSP_SELF
from django.utils.log import DEFAULT_LOGGING

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False) if (BASE_DIR / ".env").exists() else None

DEBUG = env.bool("DEBUG", default=False)
# A fixed development key is only acceptable with DEBUG on; production must set SECRET_KEY.
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise environ.ImproperlyConfigured("Set SECRET_KEY (or DEBUG=true for a development key).")
    SECRET_KEY = "ctxaudit-insecure-development-key-do-not-use-in-production"  # noqa: S105

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "csp",
    "ninja",  # serves /api/v1/docs from its own static files (no CDN, CSP-compatible)
    "ctxaudit.core",
    "ctxaudit.projects",
    "ctxaudit.ingest",
    "ctxaudit.audits",
    "ctxaudit.alerts",
    "ctxaudit.ui",
    "ctxaudit.regression",
]

MIDDLEWARE = [
    # outermost: the work it defers runs after every other middleware has answered
    "ctxaudit.core.after_response.AfterResponseMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "ctxaudit.ingest.middleware.RequestBodyLimitMiddleware",
    "ctxaudit.core.collector.CollectorPauseMiddleware",
    "ctxaudit.core.badinput.RejectNulMiddleware",  # 400 for %00 before a query reaches PostgreSQL
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "ctxaudit.urls"
WSGI_APPLICATION = "ctxaudit.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "ctxaudit.core.context_processors.csp_nonce",
            ],
        },
    }
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
# Persistent connections (seconds; 0 = one per request): opening a PostgreSQL connection cost a
# dashboard request ~10 ms, more than its queries (issue 13). Health checks drop a connection
# the server closed (a restart) before a request uses it. Each gunicorn thread keeps its own.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    _sqlite = DATABASES["default"].setdefault("OPTIONS", {})
    # WAL lets the dashboard read while an import or a check writes; in WAL mode
    # synchronous=NORMAL is still safe from corruption and skips an fsync per commit
    # (https://www.sqlite.org/pragma.html#pragma_synchronous): a check commits dozens of times.
    # A checkpoint (which syncs) every 4,000 WAL pages (16 MB), not SQLite's 1,000: a 200k-token
    # event writes ~1.3 MB when stored and again with its result, so the default checkpointed
    # every couple of events, copying pages a later write replaced anyway (issue 13: the commits
    # of a POST → checked went from ~55 to ~30 ms).
    _sqlite["init_command"] = (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=4000;"
    )
    # A transaction that reads and then writes cannot wait for another writer: SQLite answers
    # "database is locked" at once (issue 13: 16-21 % of concurrent POSTs with 2 gunicorn
    # workers). BEGIN IMMEDIATE takes the write lock first, and waits up to `timeout` seconds.
    _sqlite.setdefault("transaction_mode", "IMMEDIATE")
    _sqlite.setdefault("timeout", 20)
elif DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # No JIT compilation: it pays off for long analytical queries only, and PostgreSQL starts it
    # from a cost estimate. A list query estimated expensive but stopping after 51 rows (0.3 ms)
    # spent 230 ms compiling (issue 13, the event list's session filter at 100,000 events).
    _pg = DATABASES["default"].setdefault("OPTIONS", {})
    _pg.setdefault("options", "-c jit=off")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]

LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

# --- ingestion -------------------------------------------------------------------------------
# A 200k-token before/after pair is about 1.5 MB of JSON; the default leaves room for two of them.
# Applied after gzip decompression (ingest/middleware.py), answered with 413.
CTXAUDIT_MAX_BODY_BYTES = env.int("CTXAUDIT_MAX_BODY_BYTES", default=8 * 1024 * 1024)
# Django's own cap would answer 400 before ours answers 413; ours is the one that counts.
DATA_UPLOAD_MAX_MEMORY_SIZE = None
# Requests per minute per API key (fixed window in the cache), then 429 with Retry-After; 0 = off.
CTXAUDIT_RATE_LIMIT_PER_MINUTE = env.int("CTXAUDIT_RATE_LIMIT_PER_MINUTE", default=600)
# The rate-limit counters live here when CACHE_URL names a shared cache (redis://...); unset, they
# live in files under CTXAUDIT_RATE_LIMIT_DIR shared by this host's processes (projects/ratelimit.py).
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}
if CACHES["default"]["BACKEND"].endswith("redis.RedisCache"):
    # A stopped or unreachable Redis must cost a request milliseconds, not a hang: the limiter
    # fails open on the error (projects/ratelimit.py).
    CACHES["default"].setdefault("OPTIONS", {}).update({"socket_connect_timeout": 0.5, "socket_timeout": 0.5})
CTXAUDIT_RATE_LIMIT_DIR = env.str("CTXAUDIT_RATE_LIMIT_DIR", default="")
# Load shedding per server process (core/shedding.py). API requests (/api/, /v1/): how many run at
# once, how many may wait for a slot, how long one may wait; pages (the dashboard, /login/) have
# slots of their own, more patient (htmx loads a page's parts side by side). Retry-After of a 503.
CTXAUDIT_SHED_MAX_ACTIVE = env.int("CTXAUDIT_SHED_MAX_ACTIVE", default=1)
CTXAUDIT_SHED_MAX_WAITING = env.int("CTXAUDIT_SHED_MAX_WAITING", default=1)
CTXAUDIT_SHED_MAX_WAIT_MS = env.int("CTXAUDIT_SHED_MAX_WAIT_MS", default=100)
CTXAUDIT_SHED_UI_MAX_ACTIVE = env.int("CTXAUDIT_SHED_UI_MAX_ACTIVE", default=2)
CTXAUDIT_SHED_UI_MAX_WAITING = env.int("CTXAUDIT_SHED_UI_MAX_WAITING", default=4)
CTXAUDIT_SHED_UI_MAX_WAIT_MS = env.int("CTXAUDIT_SHED_UI_MAX_WAIT_MS", default=2000)
CTXAUDIT_SHED_RETRY_AFTER = env.int("CTXAUDIT_SHED_RETRY_AFTER", default=1)
# Events left pending longer than this are re-enqueued by the periodic sweep.
CTXAUDIT_PENDING_TIMEOUT_SECONDS = env.int("CTXAUDIT_PENDING_TIMEOUT_SECONDS", default=300)

# --- Celery ----------------------------------------------------------------------------------
_broker_url = env.str("CELERY_BROKER_URL", default="")
# No broker configured: run tasks eagerly in-process so a new user needs no Redis. "memory://"
# only keeps kombu from guessing a localhost AMQP broker (it is never used while eager).
CELERY_BROKER_URL = _broker_url or "memory://"
CELERY_TASK_ALWAYS_EAGER = not _broker_url
# Alert evaluation after a request's answer, not before it (core/after_response.py). Off, it runs
# before the answer; the tests that use Django's live_server turn it off: there the server thread
# and the test share one SQLite connection, and work after the answer would run beside the test.
CTXAUDIT_WORK_AFTER_RESPONSE = True
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# visibility_timeout: how long a message a dead worker had taken stays invisible before Redis
# hands it to another worker (acks_late + reject_on_worker_lost need it to redeliver).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600),
    "socket_connect_timeout": 2,
    "socket_timeout": 10,
}
# With the broker down, an API request must not hang: publishing gives up quickly, the event
# row is already committed, and the pending sweep (beat) enqueues it once the broker is back.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BEAT_SCHEDULE = {
    "ingest.requeue_pending": {"task": "ingest.requeue_pending", "schedule": 60.0},
    # Retention: events older than their project's retention_days, hourly (issue 7).
    "ingest.purge_expired": {"task": "ingest.purge_expired", "schedule": 3600.0},
    "alerts.requeue_deliveries": {"task": "alerts.requeue_deliveries", "schedule": 300.0},
    "alerts.requeue_evaluations": {"task": "alerts.requeue_evaluations", "schedule": 300.0},
    # Windowed policies recover (or fire on a backlog) without new traffic.
    "alerts.evaluate_windows": {"task": "alerts.evaluate_windows", "schedule": 60.0},
}

# --- alerts ----------------------------------------------------------------------------------
# Absolute base of links in notifications (webhook payloads, emails).
CTXAUDIT_BASE_URL = env.str("CTXAUDIT_BASE_URL", default="http://localhost:8000")
# PagerDuty channels post here (Events API v2); tests point it at a local receiver.
CTXAUDIT_PAGERDUTY_EVENTS_URL = env.str(
    "CTXAUDIT_PAGERDUTY_EVENTS_URL", default="https://events.pagerduty.com/v2/enqueue"
)
CTXAUDIT_WEBHOOK_TIMEOUT_SECONDS = env.float("CTXAUDIT_WEBHOOK_TIMEOUT_SECONDS", default=10.0)
# Webhook channels and replay endpoints may point at loopback/private/link-local addresses (SSRF guard off).
CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS = env.bool("CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS", default=False)
# First retry after this many seconds, then doubling (10, 20, 40, 80, 160), capped at an hour.
CTXAUDIT_ALERT_RETRY_BASE_SECONDS = env.int("CTXAUDIT_ALERT_RETRY_BASE_SECONDS", default=10)
# Email: EMAIL_URL (smtp+tls://user:pass@host:587, consolemail://, ...); EMAIL_BACKEND overrides its backend.
_email = env.email_url("EMAIL_URL", default="consolemail://")
EMAIL_BACKEND = env.str("EMAIL_BACKEND", default=_email["EMAIL_BACKEND"])
EMAIL_HOST = _email.get("EMAIL_HOST") or "localhost"
EMAIL_PORT = _email.get("EMAIL_PORT") or 25
EMAIL_HOST_USER = _email.get("EMAIL_HOST_USER") or ""
EMAIL_HOST_PASSWORD = _email.get("EMAIL_HOST_PASSWORD") or ""
EMAIL_USE_TLS = bool(_email.get("EMAIL_USE_TLS", False))
EMAIL_USE_SSL = bool(_email.get("EMAIL_USE_SSL", False))
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="ctxaudit <alerts@localhost>")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # runserver's request lines as Django formats them (configuring "django" below resets it)
    "formatters": {"django.server": DEFAULT_LOGGING["formatters"]["django.server"]},
    "handlers": {
        "console": {"class": "logging.StreamHandler"},
        "django.server": DEFAULT_LOGGING["handlers"]["django.server"],
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # In the embedded default every check would print "Task … succeeded": that is worker chatter.
    "loggers": {
        # Django's own console handler (DEBUG only) printed each 403/404 a second time beside the
        # root's: its records go to the root handler only.
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        "django.server": DEFAULT_LOGGING["loggers"]["django.server"],
        "celery.app.trace": {"level": "INFO" if _broker_url else "WARNING"},
        "ctxaudit.tasks": {"level": "INFO" if _broker_url else "WARNING"},
        # kombu warns that memory:// has no hostname; with no broker that is expected.
        "kombu.connection": {"level": "WARNING" if _broker_url else "ERROR"},
    },
}

# --- Content-Security-Policy (django-csp 4) ------------------------------------------------
# No inline scripts: scripts come from our origin, and {% htmx_script %} carries the per-request
# nonce. No <style> elements either (htmx's indicator styles are off in base.html); style
# *attributes* stay allowed for server-computed widths (timeline bars). Untrusted text is escaped
# anyway; this is the second line of defence.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [CSP_SELF],
        "script-src": [CSP_SELF, CSP_NONCE],
        "style-src": [CSP_SELF],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": [CSP_SELF, "data:"],
        "connect-src": [CSP_SELF],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": [CSP_SELF],
    }
}

# --- production hardening (active when DEBUG is off) -----------------------------------------
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
if not DEBUG:
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    # The preload directive only matters once the domain owner submits it to hstspreload.org.
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
