"""Outbound-request guard (SSRF): the one place that decides whether ctxaudit may send a request to a URL.

Used twice for every user-configured target (alert webhook channels, the checklist replay endpoint):

* at save time, `check_url(url)` validates the scheme, resolves the host and refuses internal
  addresses with a message a user can act on (raises `UnsafeURL`, a ValueError);
* at send time, `opener()` builds a urllib opener whose connections resolve the host again and
  connect only to the address that passed the check (DNS can change between save and send, and a
  redirect could point elsewhere).

Refused by default: loopback, private (RFC 1918, fc00::/7), link-local (169.254/16 incl. cloud
metadata, fe80::/10), multicast, reserved, unspecified (0.0.0.0, ::), shared (100.64/10) and any
other non-global address, for IPv4 and IPv6, including IPv4 embedded in IPv6 (::ffff:127.0.0.1,
6to4, Teredo). `CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS=true` allows them, for self-hosted receivers.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}


class UnsafeURL(ValueError):
    """The URL may not be used as an outbound target; str() says why, in words for the user."""


class Unresolvable(UnsafeURL):
    """The host does not resolve (now): refused at save time, a transient failure at send time."""


def private_allowed() -> bool:
    return bool(getattr(settings, "CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS", False))


def _getaddrinfo(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to (the seam tests replace to fake DNS)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def address_problem(address: str) -> str | None:
    """Why `address` (an IPv4/IPv6 literal) is internal, e.g. "loopback"; None for a public address."""
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "not an IP address"
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None:
            problem = address_problem(str(embedded))
            if problem:
                return f"{problem} (IPv4 inside IPv6)"
    for name in ("unspecified", "loopback", "link_local", "multicast", "reserved", "private"):
        if getattr(ip, f"is_{name}"):
            return name.replace("_", "-")
    if not ip.is_global:
        return "not a public address"
    return None


def resolve_public(host: str, port: int, *, allow_private: bool | None = None) -> list[str]:
    """Resolve `host` and return its addresses, all of them public. Raises UnsafeURL when it does
    not resolve or when any address is internal (unless private targets are allowed)."""
    allow = private_allowed() if allow_private is None else allow_private
    try:
        addresses = _getaddrinfo(host, port)
    except (OSError, UnicodeError):
        raise Unresolvable(f"the host {host} does not resolve") from None
    if not addresses:
        raise Unresolvable(f"the host {host} does not resolve")
    if not allow:
        for address in addresses:
            problem = address_problem(address)
            if problem:
                shown = host if host == address else f"{host} ({address})"
                raise UnsafeURL(
                    f"the host {shown} is an internal address ({problem}); ctxaudit only sends to public "
                    "addresses unless CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS is set"
                )
    return addresses


def check_url(url: str, *, allow_private: bool | None = None) -> str:
    """Validate `url` as an outbound target: http/https, a host, and (resolved) public addresses.

    Returns the URL stripped of surrounding whitespace. Raises UnsafeURL with a user-facing message.
    """
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UnsafeURL("the URL is not valid") from None
    if parts.scheme not in SCHEMES:
        raise UnsafeURL("the URL must start with http:// or https://")
    host = parts.hostname
    if not host:
        raise UnsafeURL("the URL has no host")
    resolve_public(host, port or DEFAULT_PORTS[parts.scheme], allow_private=allow_private)
    return url


def _guarded_create_connection(
    address: tuple[str, int],
    timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,  # type: ignore[attr-defined]  # the stdlib default, private
    source_address: Any = None,
    **kw: Any,
) -> socket.socket:
    host, port = address
    last: OSError | None = None
    try:
        addresses = resolve_public(host, port)  # re-resolved now; we connect to the very address checked
    except Unresolvable as e:
        raise OSError(str(e)) from None
    for ip in addresses:
        try:
            return socket.create_connection((ip, port), timeout, source_address, **kw)
        except OSError as e:
            last = e
    raise last or OSError(f"could not connect to {host}")


class GuardedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = _guarded_create_connection


class GuardedHTTPSConnection(http.client.HTTPSConnection):
    # TLS still verifies the certificate against, and sends SNI for, the URL's host name.
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = _guarded_create_connection


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(GuardedHTTPConnection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(GuardedHTTPSConnection, req, context=self._context)  # type: ignore[attr-defined]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def opener(*, follow_redirects: bool = False) -> urllib.request.OpenerDirector:
    """A urllib opener for user-configured targets: every connection re-checks its address (raises
    UnsafeURL, not wrapped in URLError), no proxy from the environment (the guard must see the real
    destination), and by default no redirects."""
    handlers: list[Any] = [urllib.request.ProxyHandler({}), _HTTPHandler(), _HTTPSHandler()]
    if not follow_redirects:
        handlers.append(_NoRedirect())
    return urllib.request.build_opener(*handlers)
