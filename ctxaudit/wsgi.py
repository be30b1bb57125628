from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ctxaudit.settings")

from ctxaudit.core.shedding import LoadShedMiddleware  # noqa: E402 - needs the settings module set

# Outside Django: a shed request (503 + Retry-After) costs no request object and no query.
application = LoadShedMiddleware(get_wsgi_application())


def _warm_up() -> None:
    """What the first request would otherwise pay for (issue 13: first check ≤ 1.2 × a warm one):
    the URL conf with every view module and the API schema, then the engine (the embedded default
    checks events inside this process: tokenizer, lexicon, regexes; ctxaudit/engine/warmup.py), and
    what is loaded by then kept out of the garbage collector's full passes (gcpause.py)."""
    from django.urls import get_resolver, reverse

    from ctxaudit.celery import app as celery_app
    from ctxaudit.engine.gcpause import freeze_startup_objects
    from ctxaudit.engine.warmup import warm_up

    get_resolver().url_patterns  # noqa: B018 - imports ctxaudit.urls and everything it names
    reverse("ui:event-detail", args=[1])  # builds the reverse tables the API's answers use (~16 ms)
    celery_app.tasks  # noqa: B018 - finalizes the Celery app: imports every tasks module (~14 ms)
    warm_up()
    freeze_startup_objects()


_warm_up()
