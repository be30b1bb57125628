"""Django's {# #} comments are single-line: a multi-line one is sent to the browser as text."""

from __future__ import annotations

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def test_it_closes_every_short_comment_on_its_line() -> None:
    offenders = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.count("{#") != line.count("#}"):
                offenders.append(f"{path.relative_to(TEMPLATES)}:{n}")
    assert offenders == [], "use {% comment %}…{% endcomment %} for multi-line comments"
