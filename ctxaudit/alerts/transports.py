"""Notification transports (healthchecks-style): webhook, email, Slack and PagerDuty.

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
from typing import Any

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


def _deliver(url: str, body: bytes, headers: dict[str, str], *, check: bool = True) -> SendResult:
    """POST `body` and classify the answer: 2xx sent; timeouts, connection errors, 5xx, 408 and
    429 may pass later (retry); any other 4xx and refused addresses will not."""
    if check:
        try:
            netguard.check_url(url)
        except netguard.Unresolvable as e:
            return SendResult(ok=False, retry=True, result=f"connection failed: {e}")
        except netguard.UnsafeURL as e:
            return SendResult(ok=False, retry=False, result=f"refused: {e}")
    try:
        code = http_post(url, body, headers, timeout=settings.CTXAUDIT_WEBHOOK_TIMEOUT_SECONDS)
    except netguard.UnsafeURL as e:  # DNS changed since the check above
        return SendResult(ok=False, retry=False, result=f"refused: {e}")
    except TimeoutError:
        return SendResult(ok=False, retry=True, result="timed out")
    except OSError as e:
        return SendResult(ok=False, retry=True, result=f"connection failed: {getattr(e, 'reason', e)}")
    if 200 <= code < 300:
        return SendResult(ok=True, retry=False, result=f"HTTP {code}", status_code=code)
    return SendResult(
        ok=False, retry=code >= 500 or code in (408, 429), result=f"HTTP {code}", status_code=code
    )


def send_webhook(channel: Channel, delivery: Delivery) -> SendResult:
    body = json.dumps(delivery.payload, ensure_ascii=False, sort_keys=True).encode()
    ts = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Ctxaudit-Notification-Id": str(delivery.id),
        "X-Ctxaudit-Timestamp": ts,
        "X-Ctxaudit-Signature": sign(channel.secret, ts, body),
    }
    return _deliver(channel.target, body, headers)


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


def _post_json(url: str, payload: dict[str, Any], *, check: bool = True) -> SendResult:
    """POST JSON to a third-party endpoint (Slack, PagerDuty), classified as webhooks are."""
    body = json.dumps(payload, ensure_ascii=False).encode()
    return _deliver(url, body, {"Content-Type": "application/json", "User-Agent": USER_AGENT}, check=check)


def slack_escape(text: str) -> str:
    """Slack's three control characters as entities, so foreign text cannot form links or
    mentions (<!channel>, <https://evil|click>): api.slack.com/reference/surfaces/formatting#escaping."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_message(payload: dict[str, Any]) -> dict[str, Any]:
    """A Slack message (fallback text + Block Kit) saying which rule was lost, where, and a link."""
    a = payload["alert"]
    kind = payload["type"].removeprefix("alert.")
    title = slack_escape(a["title"])[:2900]
    rule = (
        slack_escape(f"{a['rule_id']}: {a.get('rule_text') or ''}".strip(": "))[:2900]
        if a.get("rule_id")
        else ""
    )
    facts = f"*{slack_escape(a['severity'])}* · {slack_escape(kind)} · project {slack_escape(a['project'])} · seen {a['count']}× in {a['session_count']} session(s)"
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{title}*"}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": facts}]},
    ]
    if rule:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": f"Rule lost: >{rule}"}})
    blocks.append(
        {"type": "section", "text": {"type": "mrkdwn", "text": f"<{a['url']}|Open the alert in ctxaudit>"}}
    )
    return {"text": f"[ctxaudit] {a['severity']} {kind}: {title}", "blocks": blocks, "unfurl_links": False}


def send_slack(channel: Channel, delivery: Delivery) -> SendResult:
    """Slack incoming webhook: the channel's target is the hooks.slack.com URL."""
    return _post_json(channel.target, slack_message(delivery.payload))


# PagerDuty Events API v2 severities (developer.pagerduty.com/docs/events-api-v2/trigger-events).
_PD_SEVERITY = {"critical": "critical", "high": "error", "medium": "warning", "low": "info"}


def pagerduty_event(routing_key: str, payload: dict[str, Any]) -> dict[str, Any]:
    """An Events API v2 event: trigger on open/regression/reopen, resolve on resolve; the dedup key
    is the alert's fingerprint, so PagerDuty keeps one incident per alert."""
    a = payload["alert"]
    kind = payload["type"].removeprefix("alert.")
    dedup = a.get("fingerprint") or f"ctxaudit:{a['project']}:{a.get('rule_id') or ''}:{a['kind']}"
    event: dict[str, Any] = {
        "routing_key": routing_key,
        "event_action": "resolve" if kind == "resolved" else "trigger",
        "dedup_key": dedup[:255],
    }
    if event["event_action"] == "trigger":
        event["payload"] = {
            "summary": a["title"][:1024],
            "source": f"ctxaudit project {a['project']}"[:255],
            "severity": _PD_SEVERITY.get(a["severity"], "error"),
            "timestamp": payload.get("created_at"),
            "component": a.get("rule_id") or a["kind"],
            "group": a["project"],
            "class": a["kind"],
            "custom_details": {
                "rule_text": a.get("rule_text") or "",
                "count": a["count"],
                "sessions": a["session_count"],
            },
        }
        event["links"] = [{"href": a["url"], "text": "Alert in ctxaudit"}]
    return event


def send_pagerduty(channel: Channel, delivery: Delivery) -> SendResult:
    """PagerDuty Events API v2 (CTXAUDIT_PAGERDUTY_EVENTS_URL); the channel's target is the
    integration's routing key."""
    url = settings.CTXAUDIT_PAGERDUTY_EVENTS_URL
    return _post_json(
        url, pagerduty_event(channel.target, delivery.payload), check=url != PAGERDUTY_EVENTS_URL
    )


PAGERDUTY_EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"

TRANSPORTS = {
    Channel.Kind.WEBHOOK: send_webhook,
    Channel.Kind.EMAIL: send_email,
    Channel.Kind.SLACK: send_slack,
    Channel.Kind.PAGERDUTY: send_pagerduty,
}
