"""Webhook channels may not point at internal addresses (SSRF), neither when saved nor when sent."""

from __future__ import annotations

import pytest

from ctxaudit.alerts.models import Channel
from ctxaudit.alerts.services import channel_test
from tests.alerts.test_settings import login

pytestmark = pytest.mark.django_db

INTERNAL = [
    ("http://169.254.169.254/latest/meta-data", "link-local"),
    ("http://10.1.2.3/hook", "private"),
    ("http://127.0.0.1:8080/hook", "loopback"),
    ("http://[::1]:8080/hook", "loopback"),
    ("http://[::ffff:169.254.169.254]/latest/meta-data", "IPv4 inside IPv6"),
    ("http://localhost:8080/hook", "loopback"),  # a host name that resolves to loopback
    ("http://0.0.0.0/hook", "unspecified"),
]


@pytest.mark.parametrize(("target", "problem"), INTERNAL)
def test_it_refuses_an_internal_webhook_by_default(client, olga, project, target, problem) -> None:
    r = login(client, olga).post(
        f"/alerts/projects/{project.pk}/channels/", {"kind": "webhook", "name": "meta", "target": target}
    )
    assert r.status_code == 400
    page = r.content.decode()
    assert "the webhook URL is refused" in page and problem in page
    assert "CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS" in page  # says how a self-hosted receiver is allowed
    assert not Channel.objects.exists()


def test_it_refuses_a_webhook_host_that_does_not_resolve(client, olga, project) -> None:
    r = login(client, olga).post(
        f"/alerts/projects/{project.pk}/channels/", {"kind": "webhook", "target": "https://nowhere.invalid/x"}
    )
    assert r.status_code == 400 and "does not resolve" in r.content.decode()


def test_it_allows_a_private_receiver_when_configured(client, olga, project, settings) -> None:
    settings.CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS = True
    r = login(client, olga).post(
        f"/alerts/projects/{project.pk}/channels/", {"kind": "webhook", "target": "http://10.1.2.3/hook"}
    )
    assert r.status_code == 302
    assert Channel.objects.get().target == "http://10.1.2.3/hook"


def test_it_rechecks_the_address_when_sending(client, olga, project, receiver, public_dns, settings) -> None:
    """DNS rebinding: the name was public when saved and points at the receiver on 127.0.0.1 now."""
    settings.CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS = False
    port = receiver.url.split(":")[2].split("/")[0]
    r = login(client, olga).post(
        f"/alerts/projects/{project.pk}/channels/",
        {"kind": "webhook", "name": "pager", "target": f"http://rebind.example.com:{port}/hooks/ctxaudit"},
    )
    assert r.status_code == 302
    ch = Channel.objects.get()
    public_dns["rebind.example.com"] = ["127.0.0.1"]
    result = channel_test(channel=ch)
    assert "refused" in result and "loopback" in result
    assert receiver.requests == []  # nothing reached the internal address
    # A channel stored before the guard existed is refused at send time too.
    old = Channel.objects.create(project=project, kind="webhook", name="old", target=receiver.url)
    assert "refused" in channel_test(channel=old)
    assert receiver.requests == []
