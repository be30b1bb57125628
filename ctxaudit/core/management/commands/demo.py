"""`manage.py demo`: migrate, load demo data, print a login, and serve. The README's first command."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from ctxaudit.alerts.services import evaluations_requeue
from ctxaudit.core.demo.load import DEMO_PROJECT, demo_load
from ctxaudit.projects.models import Membership, Project

DEMO_USER = "demo"
DEMO_PASSWORD = "demo-password"  # noqa: S105 - a printed, documented local login
# A second login, a reviewer of the demo project, so roles can be tried (reviewers read, ops and
# admins change alerts, admins manage members and keys).
REVIEWER_USER = "reviewer"
REVIEWER_PASSWORD = "reviewer-password"  # noqa: S105 - a printed, documented local login


class Command(BaseCommand):
    help = "Set up a local demo (migrate, demo data, login) and run the development server."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-serve", action="store_true", help="set up only; do not start the server")
        parser.add_argument("--addrport", default="127.0.0.1:8000")

    def handle(self, *args: Any, **opts: Any) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        # Alerts of events a previous run checked but died before evaluating (they follow the
        # answer: core/after_response.py); with no broker and no beat, nothing else would.
        evaluations_requeue(older_than_seconds=0)
        if not os.environ.get("CTXAUDIT_BASE_URL"):
            # Links in alert notifications point at the address the demo serves.
            settings.CTXAUDIT_BASE_URL = f"http://{opts['addrport']}"
        summary = demo_load(stdout=self.stdout)  # type: ignore[arg-type]  # OutputWrapper is a TextIO at run time
        project = Project.objects.get(name=DEMO_PROJECT)
        _member(DEMO_USER, DEMO_PASSWORD, project, Membership.Role.ADMIN, superuser=True)
        _member(REVIEWER_USER, REVIEWER_PASSWORD, project, Membership.Role.REVIEWER)
        self.stdout.write(self.style.SUCCESS(summary))
        self.stdout.write(
            self.style.SUCCESS(
                f"Log in at http://{opts['addrport']}/login/ as  user: {DEMO_USER}  password: {DEMO_PASSWORD}"
                f"  (project admin; a reviewer: {REVIEWER_USER} / {REVIEWER_PASSWORD})"
            )
        )
        if not opts["no_serve"]:
            call_command("runserver", opts["addrport"], use_reloader=False)


def _member(username: str, password: str, project: Project, role: str, *, superuser: bool = False) -> None:
    """A demo login that is a member of the demo project with `role` (password reset if changed)."""
    user, created = get_user_model().objects.get_or_create(
        username=username, defaults={"is_staff": superuser, "is_superuser": superuser}
    )
    if created or not user.check_password(password):
        user.set_password(password)
        user.save()
    Membership.objects.update_or_create(user=user, project=project, defaults={"role": role})
