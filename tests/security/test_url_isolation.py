"""Tenant isolation, proven for every URL in the URL conf (walked, not hand-picked).

charlie is admin of project "other". Every URL that takes an object id is requested by charlie
with the id of an object of project "acme" (and with an id that does not exist): the answer must
be 404 (GET), or 405 on GET and then 404 on POST. API URLs are requested with other's API key.
Responses charlie gets from any URL must not contain acme's canary text.

Adding a URL? Classify it here, or this test fails:
- it takes an object id: add `"ns:name": lambda f: {"kwarg": f.<object>.pk}` to URL_ARGS. `f` holds
  acme's objects (project, event, session, membership, api_key, finding, rule_outcome) and
  `f.row("app.Model")` finds (or you create) any other acme-owned row.
- it takes no object: add `"ns:name": "why it cannot leak another project's rows"` to NO_OBJECT.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.apps import apps
from django.db import models
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from ctxaudit.projects.models import ApiKey, Membership, Project
from tests.factories import PASSWORD, api_key_for, event

CANARY = "canary-acme-7f3e"
MISSING_ID = 987654321


class Foreign:
    """acme's objects: what charlie must never reach."""

    def __init__(self) -> None:
        self.project = Project.objects.get(name="acme")
        self.event = event(
            "acme",
            session_id=f"session-{CANARY}",
            before=[
                {"role": "system", "content": f"禁止删除订单。{CANARY}"},
                {"role": "user", "content": f"删除订单 10086 {CANARY}"},
            ],
            after=[{"role": "user", "content": f"【历史摘要】删除订单 {CANARY}"}],
        )
        self.session = self.event.session
        self.membership = Membership.objects.filter(project=self.project).first()
        api_key_for("acme")
        self.api_key = ApiKey.objects.filter(project=self.project).first()
        self.finding = self.event.findings.first()
        self.rule_outcome = self.event.rule_outcomes.first()
        self.alert = self._alert()
        self.channel = self._make(
            "alerts.Channel", project=self.project, kind="webhook", target="https://hooks.example.com/x"
        )
        self.window = self._make("alerts.WindowMonitor", project=self.project, metric="failing_events")
        self.regression_case = self._make(
            "regression.RegressionCase", project=self.project, case_id=f"case-{CANARY}", event=self.event
        )
        self.replay_run = self._make(
            "regression.ReplayRun",
            event=self.event,
            prompt=f"prompt {CANARY}",
            model="m",
            base_url="http://127.0.0.1:9/v1",
        )

    @staticmethod
    def _make(label: str, **fields: Any) -> models.Model | None:
        app_label, _ = label.split(".")
        if app_label not in {a.label for a in apps.get_app_configs()}:
            return None
        return apps.get_model(label).objects.create(**fields)

    def _alert(self) -> models.Model | None:
        """acme's alert (raised by the failing event, or made here when the policy raised none)."""
        if not apps.is_installed("ctxaudit.alerts"):
            return None
        alert_model = apps.get_model("alerts.Alert")
        return alert_model.objects.filter(project=self.project).first() or alert_model.objects.create(
            project=self.project, kind="rule_missing", rule_id="R1", title=f"rule lost {CANARY}"
        )

    def row(self, label: str) -> models.Model:
        """The first row of model `label` ("app.Model") that belongs to acme."""
        model = apps.get_model(label)
        for path in ("project", "event__project", "session__project", "alert__project", "case__project"):
            try:
                row = model.objects.filter(**{path: self.project}).first()
            except Exception:  # noqa: S112 - that model has no such relation; try the next path
                continue
            if row is not None:
                return row
        raise LookupError(f"no {label} row for acme: create one in Foreign.__init__")


# URL name → kwargs pointing at acme's objects.
URL_ARGS: dict[str, Callable[[Foreign], dict[str, Any]]] = {
    "ui:event-detail": lambda f: {"event_id": f.event.pk},
    "ui:project-settings": lambda f: {"project_id": f.project.pk},
    "ui:project-members": lambda f: {"project_id": f.project.pk},
    "ui:project-member-role": lambda f: {"project_id": f.project.pk, "membership_id": f.membership.pk},
    "ui:project-member-remove": lambda f: {"project_id": f.project.pk, "membership_id": f.membership.pk},
    "ui:project-keys": lambda f: {"project_id": f.project.pk},
    "ui:project-rules": lambda f: {"project_id": f.project.pk},
    "ui:project-key-revoke": lambda f: {"project_id": f.project.pk, "key_id": f.api_key.pk},
    "ui:project-audit-log": lambda f: {"project_id": f.project.pk},
    "api:events_detail": lambda f: {"event_id": f.event.pk},
    "ui:event-expand": lambda f: {"event_id": f.event.pk},
    "ui:session-detail": lambda f: {"session_pk": f.session.pk},
    "api:session_timeline_detail": lambda f: {"session_id": f.session.external_id},
    "alerts:detail": lambda f: {"alert_id": f.alert.pk},
    "alerts:status": lambda f: {"alert_id": f.alert.pk},
    "alerts:assign": lambda f: {"alert_id": f.alert.pk},
    "alerts:comment": lambda f: {"alert_id": f.alert.pk},
    "alerts:mute": lambda f: {"alert_id": f.alert.pk},
    "alerts:settings": lambda f: {"project_id": f.project.pk},
    "alerts:policy-edit": lambda f: {"project_id": f.project.pk},
    "alerts:channel-add": lambda f: {"project_id": f.project.pk},
    "alerts:channel-toggle": lambda f: {"channel_id": f.channel.pk},
    "alerts:channel-test": lambda f: {"channel_id": f.channel.pk},
    "alerts:window-add": lambda f: {"project_id": f.project.pk},
    "alerts:window-edit": lambda f: {"window_id": f.row("alerts.WindowMonitor").pk},
    "alerts:window-delete": lambda f: {"window_id": f.row("alerts.WindowMonitor").pk},
    "regression:checklist": lambda f: {"event_id": f.event.pk},
    "regression:checklist-step": lambda f: {"event_id": f.event.pk, "step": 1},
    "regression:checklist-search": lambda f: {"event_id": f.event.pk},
    "regression:event-export": lambda f: {"event_id": f.event.pk},
    "regression:session-export": lambda f: {"event_id": f.event.pk},
    "regression:replay-bundle": lambda f: {"event_id": f.event.pk},
    "regression:replay-run-create": lambda f: {"event_id": f.event.pk},
    "regression:case-add": lambda f: {"event_id": f.event.pk},
    "regression:replay-run-detail": lambda f: {"run_id": f.replay_run.pk},
    "regression:set": lambda f: {"project_id": f.project.pk},
    "regression:export": lambda f: {"project_id": f.project.pk},
    "regression:replay-endpoint": lambda f: {"project_id": f.project.pk},
    "regression:compare": lambda f: {"project_id": f.project.pk},
    "regression:export-as": lambda f: {"project_id": f.project.pk, "kind": "pytest"},
    "regression:case-edit": lambda f: {"case_id": f.regression_case.pk},
    "regression:case-delete": lambda f: {"case_id": f.regression_case.pk},
}

# URL name → why it needs no object (and cannot show another project's rows).
NO_OBJECT: dict[str, str] = {
    "ui:event-list": "lists events_for_user(request.user) only; filters narrow that queryset",
    "ui:project-list": "lists projects_for_user(request.user) only",
    "ui:session-list": "lists sessions of projects_for_user(request.user) only; filters narrow that queryset",
    "login": "public login form",
    "logout": "ends the requester's own session",
    "api:api-root": "ninja's API root, no data",
    "api:openapi-json": "the API schema, no data",
    "api:openapi-view": "the API docs page, no data",
    "api:events_create": "writes into the key's own project (request.project); no id in the URL",
    "api:events_list": "Event.objects.filter(project=request.project): the key's own project (test_it_lists_events_for_a_read_key)",
    "api:gate": "checks into the key's own project (request.project); no id in the URL",
    "otlp-traces": "writes into the key's own project (key.project); pairs calls only within that project",
    "api:alerts_list": "Alert.objects.filter(project=request.project): the key's own project",
    "api:rules_get": "rule_set_current(request.project): the key's own project's rule set; no id in the URL",
    "api:rules_put": "replaces the key's own project's rule set (request.project, admin scope); no id in the URL",
    "api:regression_set_export": "the key's own project's regression set (request.project); no id in the URL",
    "alerts:list": "lists alerts_for_user(request.user) only",
    "alerts:summary": "counts alerts_for_user(request.user) only",
    "ui:decay-overview": "aggregates projects_for_user(request.user) only",
    "regression:symptoms": "the symptom guide (seed §7.1): static text, no tenant rows",
    "regression:symptom-incidents": "one symptom row's incidents: events_with_kinds(request.user) (projects_for_user) only; ?row= names a guide row, not a tenant object",
    "regression:index": "lists projects_for_user(request.user) and their regression sets only",
    "alerts:bulk-acknowledge": "ids in the POST body are filtered through alerts_for_user (test_it_ignores_foreign_ids_in_bulk_acknowledge)",
}

# Namespaces served by someone else's access control.
OTHER_ACCESS = {"admin": "Django admin: staff only (charlie is not staff: redirect to the admin login)"}


def _walk(
    resolver: URLResolver, prefix: str = "", ns: str | None = None
) -> Iterator[tuple[str | None, str, str | None]]:
    for p in resolver.url_patterns:
        if isinstance(p, URLResolver):
            child_ns = ns
            if p.namespace:
                child_ns = f"{ns}:{p.namespace}" if ns else p.namespace
            yield from _walk(p, prefix + str(p.pattern), child_ns)
        elif isinstance(p, URLPattern):
            name = f"{ns}:{p.name}" if (ns and p.name) else p.name
            yield name, prefix + str(p.pattern), ns


def all_urls() -> list[tuple[str | None, str, str | None]]:
    return list(_walk(get_resolver()))


def test_it_classifies_every_url() -> None:
    unclassified = []
    for name, route, ns in all_urls():
        if ns and ns.split(":")[0] in OTHER_ACCESS:
            continue
        if name is None:
            unclassified.append(f"unnamed pattern {route!r}: give it a name")
        elif name not in URL_ARGS and name not in NO_OBJECT:
            unclassified.append(f"{name} ({route})")
    assert not unclassified, (
        "Classify these URLs in tests/security/test_url_isolation.py (URL_ARGS if they take an object id, "
        "NO_OBJECT with a reason otherwise):\n  " + "\n  ".join(unclassified)
    )


def test_it_has_no_stale_classification() -> None:
    names = {n for n, _, _ in all_urls() if n}
    assert not (set(URL_ARGS) | set(NO_OBJECT)) - names


def _request(client, name: str, kwargs: dict[str, Any], key: str) -> tuple[int, int | None, bytes]:
    """(GET status, POST status if GET was 405, body) as charlie (session, or other's key for the API)."""
    url = reverse(name, kwargs=kwargs)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"} if name.startswith("api:") else {}
    r = client.get(url, **headers)
    post_status = None
    body = r.content
    if r.status_code == 405:
        p = client.post(
            url,
            data=json.dumps({}) if name.startswith("api:") else {},
            content_type="application/json"
            if name.startswith("api:")
            else "application/x-www-form-urlencoded",
            **headers,
        )
        post_status, body = p.status_code, p.content
    return r.status_code, post_status, body


@pytest.fixture
def charlie_client(client, alice, charlie):
    assert client.login(username="charlie", password=PASSWORD)
    return client


# One acme setup per test, every URL in a loop: ingesting the event is the slow part.
@pytest.mark.django_db
def test_it_answers_404_for_another_projects_objects(
    charlie_client, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        foreign = Foreign()
    key = api_key_for("other")
    before = _snapshot(foreign)
    problems = []
    for name in sorted(URL_ARGS):
        get_status, post_status, body = _request(charlie_client, name, URL_ARGS[name](foreign), key)
        if (get_status, post_status) not in ((404, None), (405, 404)):
            problems.append(f"{name}: GET {get_status}, POST {post_status}")
        if CANARY.encode() in body:
            problems.append(f"{name}: shows acme's text")
        if _snapshot(foreign) != before:
            problems.append(f"{name}: changed acme's rows for an outsider")
            before = _snapshot(foreign)
    assert not problems, "\n".join(problems)


@pytest.mark.django_db
def test_it_answers_404_for_missing_objects(charlie_client, django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        foreign = Foreign()
    key = api_key_for("other")
    problems = []
    for name in sorted(URL_ARGS):
        kwargs = dict.fromkeys(URL_ARGS[name](foreign), MISSING_ID)
        get_status, post_status, _ = _request(charlie_client, name, kwargs, key)
        if (get_status, post_status) not in ((404, None), (405, 404)):
            problems.append(f"{name}: GET {get_status}, POST {post_status}")
    assert not problems, "\n".join(problems)


@pytest.mark.django_db
def test_it_shows_no_foreign_text_on_object_free_urls(
    charlie_client, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        Foreign()
    key = api_key_for("other")
    problems = []
    for name in sorted(n for n in NO_OBJECT if n != "logout"):
        get_status, _, body = _request(charlie_client, name, {}, key)
        if get_status >= 500 or CANARY.encode() in body:
            problems.append(
                f"{name}: status {get_status}, canary {'shown' if CANARY.encode() in body else 'absent'}"
            )
    assert not problems, "\n".join(problems)


@pytest.mark.django_db
def test_it_keeps_outsiders_out_of_the_admin(charlie_client) -> None:
    r = charlie_client.get("/admin/")
    assert r.status_code == 302
    assert r["Location"].startswith("/admin/login/")


@pytest.mark.django_db
def test_it_ignores_foreign_ids_in_bulk_acknowledge(
    charlie_client, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        foreign = Foreign()
    before = _snapshot(foreign)
    r = charlie_client.post(reverse("alerts:bulk-acknowledge"), {"alert": [str(foreign.alert.pk)]})
    assert r.status_code in (302, 303, 400, 404)
    assert _snapshot(foreign) == before


def _snapshot(f: Foreign) -> tuple[Any, ...]:
    f.project.refresh_from_db()
    alerts: list[Any] = []
    if f.channel is not None:
        alerts.append(
            sorted(type(f.channel).objects.filter(project=f.project).values_list("pk", "enabled", "target"))
        )
    if f.regression_case is not None:
        alerts.append(
            sorted(
                type(f.regression_case)
                .objects.filter(project=f.project)
                .values_list("pk", "case_id", "description")
            )
        )
    if f.alert is not None:
        alerts += sorted(
            type(f.alert)
            .objects.filter(project=f.project)
            .values_list("pk", "status", "assignee_id", "muted_until", "count")
        )
    return (
        alerts,
        (f.project.name, f.project.redact_pii, f.project.retention_days, f.project.decay_compressions),
        sorted(Membership.objects.filter(project=f.project).values_list("user_id", "role")),
        sorted(ApiKey.objects.filter(project=f.project).values_list("pk", "revoked_at", "scopes")),
    )
