"""Notification transports (healthchecks-style): webhook and email.

Every outbound HTTP request goes through `http_post`, the one seam tests and tools can replace.
A transport returns a `SendResult`; `retry` says whether a later attempt may succeed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import EmailMessage

from ctxaudit.alerts.models import Channel, Delivery
from ctxaudit.core import netguard

SIGNATURE_VERSION = "v1"
USER_AGENT = "ctxaudit-alerts/1"


@dataclass(frozen=True)
class SendResult:
    ok: bool
    retry: bool
    result: str
    status_code: int | None = None


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """`v1=` + hex HMAC-SHA256 of `<timestamp>.<body>` with the channel secret (README "Alerts")."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return f"{SIGNATURE_VERSION}={mac.hexdigest()}"


# No redirects (a redirect would re-send a signed body somewhere the channel does not name), and
# every connection re-checks the resolved address (ctxaudit.core.netguard: DNS can change).
_opener = netguard.opener(follow_redirects=False)


def http_post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
    """POST `body`; return the HTTP status code. Raises OSError (incl. timeouts) on network trouble,
    netguard.UnsafeURL when the host resolves to an internal address."""
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310 (scheme checked in send_webhook)
    try:
        with _opener.open(req, timeout=timeout) as resp:
            resp.read(1024)
            return int(resp.status)
    except urllib.error.HTTPError as e:  # a non-2xx answer is a result, not an error
        return int(e.code)


def send_webhook(channel: Channel, delivery: Delivery) -> SendResult:
    try:
        netguard.check_url(channel.target)
    except netguard.Unresolvable as e:
        return SendResult(ok=False, retry=True, result=f"connection failed: {e}")
    except netguard.UnsafeURL as e:
        return SendResult(ok=False, retry=False, result=f"refused: {e}")
    body = json.dumps(delivery.payload, ensure_ascii=False, sort_keys=True).encode()
    ts = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Ctxaudit-Notification-Id": str(delivery.id),
        "X-Ctxaudit-Timestamp": ts,
        "X-Ctxaudit-Signature": sign(channel.secret, ts, body),
    }
    try:
        code = http_post(channel.target, body, headers, timeout=settings.CTXAUDIT_WEBHOOK_TIMEOUT_SECONDS)
    except netguard.UnsafeURL as e:  # DNS changed since the check above
        return SendResult(ok=False, retry=False, result=f"refused: {e}")
    except TimeoutError:
        return SendResult(ok=False, retry=True, result="timed out")
    except OSError as e:
        reason = getattr(e, "reason", e)
        return SendResult(ok=False, retry=True, result=f"connection failed: {reason}")
    if 200 <= code < 300:
        return SendResult(ok=True, retry=False, result=f"HTTP {code}", status_code=code)
    # 5xx, 429 and 408 may pass later; any other 4xx will not.
    return SendResult(
        ok=False, retry=code >= 500 or code in (408, 429), result=f"HTTP {code}", status_code=code
    )


def send_email(channel: Channel, delivery: Delivery) -> SendResult:
    to = [a.strip() for a in channel.target.split(",") if a.strip()]
    if not to:
        return SendResult(ok=False, retry=False, result="no recipient")
    p = delivery.payload
    a = p["alert"]
    subject = (
        f"[ctxaudit] {a['severity']} {p['type']}: {a['kind']} {a['rule_id'] or ''} in {a['project']}".strip()
    )
    lines = [
        f"Alert {a['id']} ({a['status']}{', regression' if a.get('is_regression') else ''})",
        f"Project: {a['project']}",
        f"Kind: {a['kind']}",
        f"Rule: {a['rule_id'] or '-'}",
        f"Rule text: {a.get('rule_text') or '-'}",
        f"Severity: {a['severity']}",
        f"Seen {a['count']} times in {a['session_count']} sessions, first {a['first_seen']}, last {a['last_seen']}",
        "",
        a["title"],
        "",
        a["url"],
        "",
        f"Notification id: {p['notification_id']}",
    ]
    msg = EmailMessage(
        subject=subject.replace("\n", " ")[:200],
        body="\n".join(lines),  # plain text only: foreign text never becomes markup
        to=to,
        headers={"X-Ctxaudit-Notification-Id": str(delivery.id)},
    )
    try:
        n = msg.send(fail_silently=False)
    except OSError as e:  # smtplib.SMTPException is an OSError
        return SendResult(ok=False, retry=True, result=f"email failed: {e}")
    return SendResult(ok=bool(n), retry=not n, result=f"sent to {len(to)} recipient(s)" if n else "not sent")


TRANSPORTS = {
    Channel.Kind.WEBHOOK: send_webhook,
    Channel.Kind.EMAIL: send_email,
}
