from __future__ import annotations

import pytest

from ctxaudit.core import netguard


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("127.0.0.1", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("0.0.0.0", "unspecified"),  # noqa: S104 - an address under test, not a bind
        ("100.64.0.1", "not a public address"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fd00::1", "private"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback (IPv4 inside IPv6)"),
        ("::ffff:10.0.0.1", "private (IPv4 inside IPv6)"),
        ("2002:7f00:1::", "loopback (IPv4 inside IPv6)"),  # 6to4 of 127.0.0.1
    ],
)
def test_it_names_why_an_address_is_internal(address, problem) -> None:
    assert netguard.address_problem(address) == problem


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111"])
def test_it_lets_public_addresses_through(address) -> None:
    assert netguard.address_problem(address) is None


@pytest.mark.parametrize(
    "url", ["ftp://93.184.215.14/x", "file:///etc/passwd", "http://", "gopher://127.0.0.1:6379/_FLUSHALL"]
)
def test_it_refuses_other_schemes_and_hostless_urls(url) -> None:
    with pytest.raises(netguard.UnsafeURL):
        netguard.check_url(url, allow_private=True)


def test_it_refuses_integer_spellings_of_loopback(settings) -> None:
    settings.CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS = False
    with pytest.raises(netguard.UnsafeURL, match="loopback"):
        netguard.check_url("http://2130706433/")  # 127.0.0.1 as one number
