"""No template turns off autoescaping (STYLE.md §3.6): contexts, rules, findings are hostile."""

from __future__ import annotations

import re
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
ALLOWED: set[str] = set()  # must stay empty
UNSAFE = re.compile(
    r"\|\s*safe\b|autoescape\s+off|\|\s*safeseq\b|<script>(?!\s*</script>)|\son[a-z]+\s*=", re.I
)


def test_it_finds_no_unsafe_template_constructs() -> None:
    offenders = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if UNSAFE.search(line) and f"{path.relative_to(TEMPLATES)}:{n}" not in ALLOWED:
                offenders.append(f"{path.relative_to(TEMPLATES)}:{n}: {line.strip()}")
    assert offenders == []
