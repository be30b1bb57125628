"""`python manage.py evaluate_checks PATH...`: the engine's evaluator (ctxaudit.engine.evaluate) as a command."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ctxaudit.engine import evaluate


class Command(BaseCommand):
    help = (
        "Score the checks on labelled cases (tests/cases/, ../shared/samples/): precision and recall per check and per "
        "kind, and the cases that disagree. Exits non-zero under --min-precision/--min-recall/--threshold/"
        "--kind-threshold."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+")
        parser.add_argument("--min-precision", type=float, default=0.0)
        parser.add_argument("--min-recall", type=float, default=0.0)
        parser.add_argument("--threshold", action="append", default=[], metavar="CHECK=P[,R]")
        parser.add_argument("--kind-threshold", action="append", default=[], metavar="KIND=P[,R[,A]]")
        parser.add_argument("--exact", action="store_true")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **opts: Any) -> None:
        argv = [
            *opts["paths"],
            "--min-precision",
            str(opts["min_precision"]),
            "--min-recall",
            str(opts["min_recall"]),
        ]
        for t in opts["threshold"]:
            argv += ["--threshold", t]
        for t in opts["kind_threshold"]:
            argv += ["--kind-threshold", t]
        argv += ["--exact"] if opts["exact"] else []
        argv += ["--json"] if opts["json"] else []
        rc = evaluate.main(argv, out=self.stdout)
        if rc:
            raise CommandError("the checks are below the thresholds (see above)", returncode=rc)
