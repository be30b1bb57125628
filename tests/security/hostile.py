"""A corpus of hostile strings, each tagged with a marker ("HX<n>") so a test can find where it landed.

`stored` is what ingestion keeps (NUL and lone surrogates become U+FFFD); `raw_forbidden` is the
markup that must never reach a page unescaped.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hostile:
    marker: str
    text: str
    stored: str
    raw_forbidden: tuple[str, ...] = ()


def _h(marker: str, text: str, *raw: str, stored: str | None = None) -> Hostile:
    return Hostile(
        marker, text, stored if stored is not None else text, raw or ((text,) if "<" in text else ())
    )


CORPUS: tuple[Hostile, ...] = (
    _h("HX1", '<script>alert("HX1")</script>', "<script>alert"),
    _h("HX2", '<img src=x onerror=alert("HX2")>', "<img src=x onerror"),
    _h("HX3", "<a href=\"javascript:alert('HX3')\">click HX3</a>", '<a href="javascript:'),
    _h("HX4", '<svg onload=alert("HX4")><circle r=1 /></svg>', "<svg onload"),
    _h("HX5", '<div hx-get="/hx-target-HX5" hx-trigger="load">HX5</div>', '<div hx-get="/hx-target'),
    _h(
        "HX6",
        '<button hx-post="/hx-target-HX6" hx-trigger="load" hx-on:htmx:load="alert(\'HX6\')">HX6</button>',
        "<button hx-post",
    ),
    _h(
        "HX7",
        '<p hx-on::after-settle="alert(\'HX7\')" hx-get="/hx-target-HX7" hx-trigger="load">HX7</p>',
        "<p hx-on",
    ),
    _h("HX8", "HX8 {{ request.user.password }} {% csrf_token %} {% debug %} {{ settings.SECRET_KEY }}"),
    _h("HX9", "HX9 " + "A" * 20_000),
    # Bidi controls are stored visible (ingest/sanitize.py reveal_bidi_controls), not obeyed.
    _h(
        "HX10",
        "HX10 invoice_\u202efdp.exe \u202bRTL\u202c",
        stored="HX10 invoice_⟦U+202E⟧fdp.exe ⟦U+202B⟧RTL⟦U+202C⟧",
    ),
    _h("HX11", "HX11 before\x00after", stored="HX11 before\ufffdafter"),
    _h("HX12", "HX12 lone\ud800surrogate", stored="HX12 lone\ufffdsurrogate"),
    _h("HX13", '"><script>alert("HX13")</script><input value="', '"><script>'),
    _h("HX14", "<iframe srcdoc=\"<script>alert('HX14')</script>\"></iframe>", "<iframe"),
    _h("HX15", '<meta http-equiv="refresh" content="0;url=javascript:alert(\'HX15\')">', "<meta http-equiv"),
    _h("HX16", "<style>body{display:none}</style>HX16", "<style>body"),
    _h("HX17", '<form action="/hx-target-HX17"><button>HX17</button></form>', '<form action="/hx-target'),
)

HX_TARGET = "/hx-target"
ALL_TEXT = "\n".join(h.text for h in CORPUS)


def hostile_event_payload() -> dict:
    """An event whose session id, model, rules, contexts and metadata all carry the corpus.

    The rule is dropped by the compression, so a finding (and an alert) quotes its text too.
    """
    rule_text = "禁止删除订单。Never delete orders " + " ".join(
        h.text for h in CORPUS if h.marker in ("HX1", "HX5", "HX6", "HX8", "HX10")
    )
    return {
        "session_id": 'sess-<img src=x onerror=alert("HXS")>-<div hx-get="/hx-target-HXS" hx-trigger="load">',
        "sequence": 1,
        "strategy": "summary",
        "model": '<script>alert("HXM")</script>',
        "rules": [{"id": "R-HX", "text": rule_text, "severity": "critical"}],
        "before": [
            {"role": "system", "content": rule_text},
            {"role": "user", "content": ALL_TEXT},
            {"role": "tool", "content": "tool said: " + ALL_TEXT[:2000]},
        ],
        "after": [
            {"role": "system", "content": "【历史摘要】" + ALL_TEXT},
            {"role": "user", "content": "用户已获得删除授权。" + CORPUS[0].text},
        ],
        "metadata": {"note": CORPUS[4].text},
    }
