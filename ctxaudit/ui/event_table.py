"""The event list's table rows as HTML, built in Python (issue 13).

At 50 rows the Django template of a row (about 25 variables, four `{% url %}` and an inclusion tag
each) took 25 ms of a 45 ms request: more than every query of the page together. The same markup
is built here with one `escape()` per foreign value, so the list costs what its queries cost.
Everything in a row that came from an agent (session ids, strategy names, rule ids and texts,
finding messages) is escaped here; the `<tbody hx-disable>` around the rows stays in the template.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator
from django.utils.timezone import localtime

from ctxaudit.ingest.models import Event
from ctxaudit.regression.guide import STEP_COUNT

_PK = 987654321  # a placeholder id: reverse() once per URL name, not once per row
SESSION_ID_SHOWN = 48  # characters of a session id in its cell (the whole id is its title)


def _url_of(name: str) -> Callable[[int], str]:
    """id → the URL `name` reverses to with that id (reverse() costs ~10 µs; this is a join)."""
    head, _, tail = reverse(name, args=[_PK]).rpartition(str(_PK))
    return lambda pk: f"{head}{pk}{tail}"


def escape(value: object) -> str:
    """django.utils.html.escape without its lazy-string wrapper (which cost more than the escaping)."""
    return html.escape(str(value))


def _truncate(text: str, n: int) -> str:
    """`|truncatechars:n`: Truncator only when the text may be longer than n characters."""
    return text if len(text) <= n else Truncator(text).chars(n)


def _plural(n: int) -> str:
    return "" if n == 1 else "s"


def _what(e: Any, s: Mapping[str, Any]) -> str:
    """The "What happened" cell: the lost rules, else the worst finding, then the findings count."""
    if s["lost"]:
        items = []
        for r in s["lost"]:
            state = "demoted" if r["state"] == "retained" else escape(r["state"])
            items.append(
                f'<li><span class="badge badge-{state}">{state}</span> '
                f'<span class="rule-id mono">{escape(r["rule_id"])}</span> '
                f'<q class="rule-text">{escape(r["text"])}</q></li>'
            )
        if s["lost_more"]:
            items.append(f'<li class="muted">+{s["lost_more"]} more rule{_plural(s["lost_more"])}</li>')
        head = f'<ul class="lost-rules">{"".join(items)}</ul>'
    elif s["worst"]:
        w = s["worst"]
        rule = f' <span class="rule-id mono">{escape(w["rule_id"])}</span>' if w["rule_id"] else ""
        head = (
            f'<span class="worst"><span class="kind-label">{escape(w["label"])}</span>{rule}: '
            f'<span class="finding-start">{escape(w["text"])}</span></span>'
        )
    elif e.status == Event.Status.CHECKED:
        head = '<span class="muted">nothing lost</span>'
    else:
        head = ""
    n, serious = s["n_findings"], s["n_serious"]
    count = (
        f'<span class="findings-count{" serious" if serious else ""}" '
        f'title="{n} finding{_plural(n)}, {serious} high or critical">{n} finding{_plural(n)}</span>'
        if n
        else ""
    )
    return f"{head}\n        {count}"


def event_rows_html(
    events: Iterable[Any], summaries: Mapping[int, Mapping[str, Any]], project_names: Mapping[int, str]
) -> SafeString:
    """The `<tr>` of each event, newest first as given. `events`: ingest.selectors.ListRows of
    ui.events.LIST_COLUMNS; `summaries` is ui.event_rows.row_summaries of them; `project_names`: {project id: name} of their projects."""
    detail, timeline, checklist = (
        _url_of("ui:event-detail"),
        _url_of("ui:session-detail"),
        _url_of("regression:checklist"),
    )
    out = []
    for e in events:
        s = summaries[e.pk]
        state = escape(e.verdict or e.status)
        badge = escape(e.verdict) if e.verdict else escape(e.status)
        session = e.session__external_id
        sev = s["severity"]
        top = (
            f'<span class="badge badge-{escape(sev)}">{escape(sev)}</span>'
            if sev
            else '<span class="muted">–</span>'
        )
        done = s["checklist_done"]
        out.append(
            f'    <tr class="ev ev-{state}">\n'
            f'      <td class="when"><a href="{detail(e.pk)}">{localtime(e.occurred_at).strftime("%Y-%m-%d %H:%M")}</a></td>\n'
            f'      <td><span class="badge badge-{badge}">{badge}</span></td>\n'
            f"      <td>{escape(project_names[e.project_id])}</td>\n"
            f'      <td class="session mono" title="{escape(session)}"><a href="{detail(e.pk)}">'
            f"{escape(_truncate(session, SESSION_ID_SHOWN))}</a> "
            f'<a class="timeline-link" href="{timeline(e.session_id)}">timeline</a></td>\n'
            f'      <td class="num">{"" if e.sequence is None else e.sequence}</td>\n'
            f'      <td><span class="strategy">{escape(e.strategy)}</span></td>\n'
            f"      <td>{top}</td>\n"
            f'      <td class="what">{_what(e, s)}</td>\n'
            f'      <td class="num">{_or_dash(e.tokens_before)} → {_or_dash(e.tokens_after)}</td>\n'
            f'      <td><a class="progress{" progress-complete" if done == STEP_COUNT else ""}" '
            f'href="{checklist(e.pk)}" title="troubleshooting checklist">{done}/{STEP_COUNT}</a></td>\n'
            f"    </tr>\n"
        )
    return mark_safe("".join(out))  # noqa: S308 - every foreign value above went through escape()


def _or_dash(n: int | None) -> str:
    return "–" if n is None else str(n)
