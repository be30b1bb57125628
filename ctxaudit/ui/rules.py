"""The project's rule set page: the current rules, every version (who, when, how, from which
files), and an editor for project admins (htmx; a save is a new version)."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from ctxaudit.projects.access import project_for_user, role_for_user
from ctxaudit.projects.models import Membership, Project, RuleSetVersion
from ctxaudit.projects.rulesets import (
    SEVERITIES,
    RuleSpec,
    rule_set_current,
    rule_set_replace,
    rule_spec_typed,
)

VERSIONS_SHOWN = 50


class RuleSetForm(forms.Form):
    """One rule a line; "[medium] …" or "[low] …" sets its severity (default high)."""

    rules = forms.CharField(widget=forms.Textarea(attrs={"rows": 12, "cols": 100}), max_length=200_000)

    def clean_rules(self) -> list[RuleSpec]:
        specs: list[RuleSpec] = []
        for n, line in enumerate(self.cleaned_data["rules"].splitlines(), start=1):
            line = line.strip()
            if not line:
                continue
            severity = "high"
            for s in SEVERITIES:
                if line.lower().startswith(f"[{s}]"):
                    severity, line = s, line[len(s) + 2 :].strip()
            try:
                specs.append(rule_spec_typed(line, severity=severity))
            except ValueError as exc:
                raise forms.ValidationError(f"line {n}: {exc}") from exc
        if not specs:
            raise forms.ValidationError("give at least one rule")
        return specs


def _as_text(version: RuleSetVersion | None) -> str:
    if version is None:
        return ""
    return "\n".join(
        (f"[{r['severity']}] " if r["severity"] != "high" else "") + r["text"] for r in version.rules
    )


def _page(
    request: HttpRequest,
    project: Project,
    *,
    form: RuleSetForm | None = None,
    saved: bool = False,
    status: int = 200,
) -> HttpResponse:
    current = rule_set_current(project)
    is_admin = role_for_user(request.user, project) == Membership.Role.ADMIN
    ctx = {
        "project": project,
        "tab": "rules",
        "current": current,
        "versions": project.rule_set_versions.select_related("created_by")[:VERSIONS_SHOWN],
        "is_admin": is_admin,
        "form": form or RuleSetForm(initial={"rules": _as_text(current)}),
        "saved": saved,
    }
    template = "ui/projects/_rule_set.html" if request.headers.get("HX-Request") else "ui/projects/rules.html"
    return render(request, template, ctx, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def project_rules(request: HttpRequest, project_id: int) -> HttpResponse:
    """GET: any member sees the rule set and its versions. POST (admins only, 403 otherwise):
    replace the rules with the form's lines, as a new version."""
    if request.method == "GET":
        return _page(request, project_for_user(request.user, project_id))
    project = project_for_user(request.user, project_id, roles=(Membership.Role.ADMIN,))
    form = RuleSetForm(request.POST)
    if not form.is_valid():
        return _page(request, project, form=form, status=400)
    try:
        rule_set_replace(
            project=project,
            rules=form.cleaned_data["rules"],
            source=RuleSetVersion.Source.UI,
            actor=request.user.get_username(),
            user=request.user,
        )
    except ValueError as exc:
        form.add_error("rules", str(exc))
        return _page(request, project, form=form, status=400)
    return _page(request, project, saved=True)
