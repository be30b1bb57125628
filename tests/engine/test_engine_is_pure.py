"""The engine must not import Django or our Django apps: the CLI and tests use it bare."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "ctxaudit" / "engine"
FORBIDDEN = (
    "django",
    "ninja",
    "celery",
    "ctxaudit.core",
    "ctxaudit.projects",
    "ctxaudit.ingest",
    "ctxaudit.audits",
    "ctxaudit.ui",
    "ctxaudit.alerts",
)


def test_it_has_no_django_imports() -> None:
    offenders = []
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.startswith(FORBIDDEN)]
    assert offenders == []
