"""CSP without inline scripts, htmx config, and `manage.py check --deploy` under production settings."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_it_sends_a_csp_without_inline_scripts(client, alice) -> None:
    client.force_login(alice)
    r = client.get("/")
    assert r.status_code == 200
    csp = r["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";") if d.strip())
    assert "'unsafe-inline'" not in directives["script-src"]
    assert "'unsafe-eval'" not in directives["script-src"]
    assert "'unsafe-inline'" not in directives["style-src"]
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    nonce = re.search(r"'nonce-([^']+)'", directives["script-src"]).group(1)
    html = r.content.decode()
    scripts = re.findall(r"<script\b[^>]*>", html)
    assert scripts, "htmx is loaded"
    for tag in scripts:
        assert f'nonce="{nonce}"' in tag
        assert "src=" in tag  # no inline script bodies


@pytest.mark.django_db
def test_it_uses_a_fresh_nonce_per_response(client, alice) -> None:
    client.force_login(alice)
    first = re.search(r"'nonce-([^']+)'", client.get("/")["Content-Security-Policy"]).group(1)
    second = re.search(r"'nonce-([^']+)'", client.get("/")["Content-Security-Policy"]).group(1)
    assert first != second


@pytest.mark.django_db
def test_it_keeps_htmx_history_out_of_local_storage(client, alice) -> None:
    client.force_login(alice)
    html = client.get("/").content.decode()
    assert '"historyCacheSize": 0' in html
    assert '"includeIndicatorStyles": false' in html
    assert '"selfRequestsOnly": true' in html


def test_it_has_no_inline_script_in_templates() -> None:
    for path in (REPO / "templates").rglob("*.html"):
        text = path.read_text()
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag, f"inline <script> in {path.relative_to(REPO)}"
        assert not re.search(r"\son[a-z]+\s*=", text), f"inline event handler in {path.relative_to(REPO)}"
        assert "<style" not in text, f"<style> element in {path.relative_to(REPO)}"


def test_it_passes_check_deploy_with_production_settings(tmp_path) -> None:
    # The browser tests' DJANGO_ALLOW_ASYNC_UNSAFE must not leak into a deployment check.
    env = {
        **{
            k: v
            for k, v in os.environ.items()
            if k not in ("DEBUG", "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE")
        },
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "ctxaudit.example.com",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "ctxaudit.settings",
    }
    r = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "System check identified no issues (0 silenced)." in r.stdout


def test_it_turns_on_secure_cookies_and_hsts_in_production(tmp_path) -> None:
    code = (
        "import django; from django.conf import settings; django.setup();"
        "print(settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE, settings.SECURE_HSTS_SECONDS,"
        " settings.SECURE_SSL_REDIRECT, settings.SESSION_COOKIE_HTTPONLY)"
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_SETTINGS_MODULE": "ctxaudit.settings",
    }
    r = subprocess.run(  # noqa: S603 - our interpreter and a fixed snippet
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert r.stdout.split() == ["True", "True", "31536000", "True", "True"]
