"""`manage.py demo`: migrate, load demo data, print a login, and serve. The README's first command."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from ctxaudit.core.demo.load import demo_load

DEMO_USER = "demo"
DEMO_PASSWORD = "demo-password"  # noqa: S105 - a printed, documented local login


class Command(BaseCommand):
    help = "Set up a local demo (migrate, demo data, login) and run the development server."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-serve", action="store_true", help="set up only; do not start the server")
        parser.add_argument("--addrport", default="127.0.0.1:8000")

    def handle(self, *args: Any, **opts: Any) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        User = get_user_model()
        user, created = User.objects.get_or_create(
            username=DEMO_USER, defaults={"is_staff": True, "is_superuser": True}
        )
        if created or not user.check_password(DEMO_PASSWORD):
            user.set_password(DEMO_PASSWORD)
            user.save()
        summary = demo_load(stdout=self.stdout)  # type: ignore[arg-type]  # OutputWrapper is a TextIO at run time
        self.stdout.write(self.style.SUCCESS(summary))
        self.stdout.write(
            self.style.SUCCESS(
                f"Log in at http://{opts['addrport']}/login/ as  user: {DEMO_USER}  password: {DEMO_PASSWORD}"
            )
        )
        if not opts["no_serve"]:
            call_command("runserver", opts["addrport"], use_reloader=False)
