from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db


def test_it_gives_every_page_an_icon_that_loads(client, alice) -> None:
    client.force_login(alice)
    for url in ("/", "/decay/", "/alerts/", "/symptoms/", "/login/"):
        page = client.get(url, follow=True).content.decode()
        (href,) = re.findall(r'<link rel="icon" href="([^"]+)"', page)
        assert href == "/static/favicon.svg"
    r = client.get("/static/favicon.svg")
    assert r.status_code == 200
    body = b"".join(r.streaming_content) if r.streaming else r.content
    assert body.startswith(b"<svg") and len(body) < 2000
