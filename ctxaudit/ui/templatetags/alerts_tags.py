from __future__ import annotations

from typing import Any

from django import template

from ctxaudit.alerts.selectors import open_alerts_by_severity

register = template.Library()


@register.inclusion_tag("ui/partials/_alert_summary.html", takes_context=True)
def alert_summary(context: template.Context) -> dict[str, Any]:
    """Open alerts by severity for the nav (counts only the user's projects). A page that counted
    them already (`alert_counts` in its context, as alerts.selectors.open_alert_counts makes
    them) is not asked again."""
    given = context.get("alert_counts")
    if given is not None:
        return {"alert_counts": given}
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"alert_counts": []}
    return {"alert_counts": open_alerts_by_severity(user)}
