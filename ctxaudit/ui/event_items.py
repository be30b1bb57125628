"""What the event detail page shows besides the diff: rule and finding evidence as highlights with
page anchors, and the token figures. Plain data for the templates (which escape everything)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ctxaudit.engine.diff import Highlight
from ctxaudit.engine.diff.zones import ZONE_LABELS, Zones
from ctxaudit.engine.types import ROLES

SIDES = ("before", "after")
WIDE = 600  # chars: evidence longer than this is marked lightly (it is usually a whole message)


def _spans(evidence: Any) -> list[dict[str, Any]]:
    """Well-formed evidence spans only: reports are ours, but old or partial ones must not break the page."""
    out = []
    for ev in evidence or []:
        if not isinstance(ev, dict) or ev.get("side") not in SIDES:
            continue
        try:
            mi, start, end = int(ev["message_index"]), int(ev.get("start", 0)), int(ev.get("end", 0))
        except (KeyError, TypeError, ValueError):
            continue
        out.append(
            {
                "side": ev["side"],
                "message_index": mi,
                "start": start,
                "end": end,
                "quote": str(ev.get("quote", "")),
            }
        )
    return out


def _rule_anchors(i: int, spans: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, int] = {}
    anchors = []
    for s in spans:
        k = seen.get(s["side"], 0)
        seen[s["side"]] = k + 1
        anchors.append(f"rule-{i}-{s['side']}" + (f"-{k}" if k else ""))
    return anchors


def shown_state(rule: dict[str, Any]) -> str:
    """What the page shows for a rule of the report: "demoted" for a retained rule that left the
    system role (never the green "retained"), its state otherwise. The API keeps them apart."""
    state = str(rule.get("state", ""))
    return "demoted" if rule.get("demoted") and state == "retained" else state


def _rule_css(rule: dict[str, Any], side: str) -> tuple[str, str]:
    """(css, title) of one piece of a rule's evidence.

    Before: where the rule was, coloured by what became of it ("hl-was-missing": the rule lost).
    After: the rule as it now reads — except for a missing rule, whose after evidence is only the
    closest text, not the rule: it is marked as such ("hl-closest"), never as the rule."""
    state, rid = shown_state(rule), rule.get("id", "")
    if side == "before":
        return f"hl-rule hl-was-{state}", f"rule {rid} before compression: {state}"
    if state == "missing":
        return "hl-closest", f"closest text to rule {rid}, which is missing: this is not the rule"
    return f"hl-rule hl-{state}", f"rule {rid} after compression: {state}"


def detail_highlights(report: dict[str, Any], findings: Iterable[Any]) -> list[Highlight]:
    """Highlights for every rule's and finding's evidence, with the anchors rule_items and
    finding_items link to ("rule-<i>-<side>", "finding-<i>-<k>"). Classes: see _rule_css."""
    out: list[Highlight] = []
    for i, r in enumerate(report.get("rules") or []):
        spans = _spans(r.get("evidence"))
        for s, anchor in zip(spans, _rule_anchors(i, spans), strict=True):
            css, title = _rule_css(r, s["side"])
            if s["end"] - s["start"] > WIDE:
                css += " hl-wide"
            out.append(Highlight(s["side"], s["message_index"], s["start"], s["end"], anchor, css, title))
    for i, f in enumerate(findings):
        for k, s in enumerate(_spans(f.evidence)):
            css = "hl-finding hl-wide" if s["end"] - s["start"] > WIDE else "hl-finding"
            out.append(
                Highlight(
                    s["side"],
                    s["message_index"],
                    s["start"],
                    s["end"],
                    f"finding-{i}-{k}",
                    css,
                    f"finding: {f.kind}",
                )
            )
    return out


HrefOf = Callable[[str, Mapping[str, Any]], str]


def rule_items(
    report: dict[str, Any],
    shown: frozenset[str] | None = None,
    zones: Zones | None = None,
    href: HrefOf | None = None,
) -> list[dict[str, Any]]:
    """Each rule of the report with the anchors of its evidence on each side, lost rules first.

    shown: anchors on the page (ContextDiff.anchors); a link to any other goes to the
    uncollapsed page (?full=1#anchor). zones: the contexts' zones (ContextDiff.zones): each
    piece of evidence then says which zone its message sits in ("rule zone", "history", …).
    href(anchor, span), when given, makes the links instead (ui.event_pages: paged diffs)."""
    items = []
    for i, r in enumerate(report.get("rules") or []):
        spans = _spans(r.get("evidence"))
        anchors = _rule_anchors(i, spans)
        before = [(s, a) for s, a in zip(spans, anchors, strict=True) if s["side"] == "before"]
        after = [(s, a) for s, a in zip(spans, anchors, strict=True) if s["side"] == "after"]
        strength = r.get("strength")
        items.append(
            {
                "r": r,
                "shown_state": shown_state(r),
                "before": [
                    {"span": s, "anchor": a, "href": _href(a, shown, s, href), "zone": _zone(zones, s)}
                    for s, a in before
                ],
                "after": [
                    {"span": s, "anchor": a, "href": _href(a, shown, s, href), "zone": _zone(zones, s)}
                    for s, a in after
                ],
                "strength_pct": round(float(strength) * 100) if isinstance(strength, int | float) else None,
            }
        )
    order = {"missing": 0, "weakened": 1}
    items.sort(key=lambda it: order.get(it["r"].get("state"), 3 if not it["r"].get("demoted") else 2))
    return items


def _zone(zones: Zones | None, span: dict[str, Any]) -> str:
    z = zones.of(span["side"], span["message_index"]) if zones else None
    return ZONE_LABELS.get(z, "") if z else ""


def _href(
    anchor: str, shown: frozenset[str] | None, span: Mapping[str, Any], href: HrefOf | None = None
) -> str:
    if href is not None:
        return href(anchor, span)
    return f"#{anchor}" if shown is None or anchor in shown else f"?full=1#{anchor}"


def finding_items(
    findings: Iterable[Any], shown: frozenset[str] | None = None, href: HrefOf | None = None
) -> list[dict[str, Any]]:
    """Each finding with its evidence spans and their links (as rule_items makes them)."""
    return [
        {
            "f": f,
            "evidence": [
                {"span": s, "anchor": f"finding-{i}-{k}", "href": _href(f"finding-{i}-{k}", shown, s, href)}
                for k, s in enumerate(_spans(f.evidence))
            ],
        }
        for i, f in enumerate(findings)
    ]


def _change_text(before: int, after: int) -> str:
    """ "62% removed", "grew by 118%" (the context got longer: nothing was removed), "same size"."""
    if not before:
        return ""
    pct = round(abs(after - before) * 100 / before)
    if after < before:
        return f"{pct}% removed"
    if after > before:
        return f"grew by {pct}%"
    return "same size"


def token_table(report: dict[str, Any]) -> dict[str, Any] | None:
    """Per-role tokens before/after (roles in hierarchy order, then any other), totals, ratio."""
    t = report.get("tokens")
    if not isinstance(t, dict):
        return None
    b = t.get("before_by_role") or {}
    a = t.get("after_by_role") or {}
    roles = [r for r in ROLES if r in b or r in a] + sorted((set(b) | set(a)) - set(ROLES))
    rows = [
        {"role": r, "before": b.get(r, 0), "after": a.get(r, 0), "delta": a.get(r, 0) - b.get(r, 0)}
        for r in roles
    ]
    ratio = t.get("ratio")
    before, after, rules = t.get("before") or 0, t.get("after") or 0, t.get("rules") or 0
    return {
        "rows": rows,
        "before": before,
        "after": after,
        "delta": after - before,
        "ratio": ratio,
        "saved_pct": round((1 - ratio) * 100) if isinstance(ratio, int | float) else None,
        "change_text": _change_text(before, after),
        "rules": rules,
        "rules_pct_after": round(100 * rules / after, 1) if after and rules <= after else None,
        "rules_exceed_after": bool(after) and rules > after,
        "encoding": t.get("encoding", ""),
    }
