"""No 5xx from any URL in the URL conf with hostile input (issue 13 "Bad input in every field").

Walked, not hand-picked: every URL of the URL conf (tests/security/test_url_isolation.all_urls;
Django's admin aside, which is Django's own and staff-only), as alice, admin of acme, with acme's
objects in the URL. For each URL the test finds the parameters the view really reads (QueryDict
reads are recorded during a plain request, and the fields of every <form> on every page are
collected), then sends each of them every HOSTILE value, in the query string (GET) and in a form
body (POST). The API's operations come from its OpenAPI document: query and path parameters, and
every top-level field of the JSON body with values of the wrong type, NUL, lone surrogates, bidi
controls, 10 kB strings and deep nesting. NUL must answer 400; nothing may answer 5xx.
Runs on whichever database DATABASE_URL names (CI runs it on SQLite and on PostgreSQL).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote

import pytest
from django.http import QueryDict
from django.urls import reverse
from django.utils.datastructures import MultiValueDict

from tests.factories import PASSWORD, api_key_for
from tests.security.test_url_isolation import URL_ARGS, Foreign, all_urls

pytestmark = pytest.mark.django_db

# Raw (already percent-encoded) query/form values.
HOSTILE = {
    "nul": "x%00y",
    "lone-surrogate": "%ED%A0%80",
    "invalid-utf8": "%FF%FE",
    "bidi": "%E2%80%AEevil%E2%80%AC",
    "10kB": "A" * 10240,
    "negative": "-1",
    "huge-int": "9" * 30,
    "float-overflow": "1e309",
    "word": "abc",
    "superscript-digit": "%C2%B2",
    "bad-date": "2026-13-45T99%3A99",
}
NUL_VALUES = {"nul"}
# POSTs that destroy a fixture the other URLs need run last.
DESTRUCTIVE = ("remove", "revoke", "delete")


class _Forms(HTMLParser):
    """Collects (action, method, {field: default}) of every <form> on a page."""

    def __init__(self, page_path: str) -> None:
        super().__init__()
        self.page_path = page_path
        self.forms: list[tuple[str, str, dict[str, str]]] = []
        self._current: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self._current = {}
            action = a.get("action") or a.get("hx-post") or self.page_path
            method = "post" if (a.get("method", "get").lower() == "post" or "hx-post" in a) else "get"
            self.forms.append((action.split("?")[0], method, self._current))
        elif self._current is not None and tag in ("input", "select", "textarea", "button") and a.get("name"):
            if a.get("type") in ("checkbox", "radio") and "checked" not in a and a["name"] in self._current:
                return
            self._current.setdefault(a["name"], a.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._current = None


@contextmanager
def _recording() -> Iterator[set[str]]:
    """Names read from any QueryDict (request.GET / request.POST) while the block runs."""
    seen: set[str] = set()
    originals = {
        name: getattr(MultiValueDict, name) for name in ("get", "getlist", "__getitem__", "__contains__")
    }

    def wrap(name: str):  # type: ignore[no-untyped-def]
        real = originals[name]

        def recorder(self, key, *args, **kwargs):  # type: ignore[no-untyped-def]
            if isinstance(self, QueryDict) and isinstance(key, str):
                seen.add(key)
            return real(self, key, *args, **kwargs)

        return recorder

    for name in originals:
        setattr(QueryDict, name, wrap(name))
    try:
        yield seen
    finally:
        for name in originals:
            if name in QueryDict.__dict__:
                delattr(QueryDict, name)


def _pages(f: Foreign) -> list[tuple[str, str]]:
    """(url name, path) of every non-API, non-admin URL, with acme's objects as arguments."""
    out = []
    for name, _, ns in all_urls():
        if not name or (ns and ns.split(":")[0] in ("admin", "api")) or name == "logout":
            continue
        kwargs = URL_ARGS[name](f) if name in URL_ARGS else {}
        out.append((name, reverse(name, kwargs=kwargs)))
    return sorted(out, key=lambda p: any(d in p[0] for d in DESTRUCTIVE))


def _one_per_shape(names: set[str]) -> list[str]:
    """One name per shape: "cond-1-enabled" stands for "cond-2-enabled" … (the same field of
    another row of a repeated form)."""
    shapes: dict[str, str] = {}
    for n in sorted(names):
        shapes.setdefault(re.sub(r"\d+", "#", n), n)
    return sorted(shapes.values())


def _form_body(fields: dict[str, str], name: str, raw: str) -> str:
    parts = [f"{quote(k)}={raw if k == name else quote(v)}" for k, v in fields.items()]
    return "&".join(parts)


def _check(failures: list[str], what: str, response, *, nul: bool) -> None:  # type: ignore[no-untyped-def]
    code = response.status_code
    if code >= 500 or (nul and code != 400):
        failures.append(f"{what} -> {code}")


@pytest.fixture
def fuzz(client, alice):
    """(alice's client, acme's objects: event, session, alert, channel, regression case, replay run)."""
    f = Foreign()
    client.login(username="alice", password=PASSWORD)
    client.raise_request_exception = False  # a 500 is a finding to list, not an exception
    return client, f


def test_no_page_answers_5xx_to_hostile_query_strings(fuzz) -> None:
    fuzz_client, f = fuzz
    failures: list[str] = []
    requests = 0
    for name, path in _pages(f):
        if any(d in name for d in DESTRUCTIVE):
            continue
        with _recording() as read:
            base = fuzz_client.get(path)
        assert base.status_code < 500, (name, base.status_code)
        for param in sorted(read):
            for label, raw in HOSTILE.items():
                r = fuzz_client.get(f"{path}?{quote(param)}={raw}")
                requests += 1
                _check(failures, f"GET {name} {path}?{param}=<{label}>", r, nul=label in NUL_VALUES)
    assert not failures, "\n".join(failures)
    assert requests > 300, requests  # the walk really ran


def test_no_form_answers_5xx_to_hostile_fields(fuzz) -> None:
    fuzz_client, f = fuzz
    forms: dict[str, dict[str, str]] = defaultdict(dict)
    pages = _pages(f)
    for name, path in pages:
        if any(d in name for d in DESTRUCTIVE):
            continue
        page = fuzz_client.get(path)
        if page.status_code == 200 and "html" in page.get("Content-Type", ""):
            parser = _Forms(path)
            parser.feed(page.content.decode())
            for action, method, fields in parser.forms:
                if method == "post":
                    forms[action].update(fields)
    assert len(forms) >= 8, sorted(forms)  # alert comment, checklist note, case, channel, ...
    failures: list[str] = []
    requests = 0
    for name, path in pages:
        fields = {k: v for k, v in forms.get(path, {}).items() if k != "csrfmiddlewaretoken"}
        with _recording() as read:
            base = fuzz_client.post(
                path, data=_form_body(fields, "", ""), content_type="application/x-www-form-urlencoded"
            )
        _check(failures, f"POST {name} {path} (defaults)", base, nul=False)
        for param in _one_per_shape(read | set(fields)):
            for label, raw in HOSTILE.items():
                body = _form_body({**fields, param: ""}, param, raw)
                r = fuzz_client.post(path, data=body, content_type="application/x-www-form-urlencoded")
                requests += 1
                _check(failures, f"POST {name} {path} {param}=<{label}>", r, nul=label in NUL_VALUES)
    assert not failures, "\n".join(failures)
    assert requests > 300


# JSON values for API fields: wrong types, hostile strings, deep nesting. "\ud800" is spliced in
# as raw JSON text (json.dumps cannot write a lone surrogate unescaped... it writes the escape).
JSON_HOSTILE: dict[str, Any] = {
    "null": None,
    "int": 1,
    "negative": -1,
    "huge-int": 10**40,
    "float": 1e308,
    "bool": True,
    "empty-string": "",
    "nul": "a\x00b",
    "lone-surrogate": "a\ud800b",
    "bidi": "x\u202ey",
    "10kB": "A" * 10240,
    "list": [],
    "dict": {},
    "list-of-junk": [None, 1, "x", {"role": 5}],
    "deep": json.loads("[" * 200 + "]" * 200),
}


def _api_operations(client, key: str) -> list[tuple[str, str, dict[str, Any]]]:
    schema = client.get("/api/v1/openapi.json").json()
    out = []
    for path, methods in schema["paths"].items():
        for method, op in methods.items():
            out.append((path, method, op))
    return out


def _body_fields(op: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    content = op.get("requestBody", {}).get("content", {}).get("application/json", {})
    ref = content.get("schema", {}).get("$ref", "")
    if not ref:
        return []
    model = schema["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    return list(model.get("properties", {}))


def test_no_api_operation_answers_5xx_to_hostile_input(client, alice) -> None:
    from tests.factories import event_payload

    Foreign()
    client.raise_request_exception = False
    key = api_key_for("acme")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    schema = client.get("/api/v1/openapi.json").json()
    failures: list[str] = []
    requests = 0
    for path, method, op in _api_operations(client, key):
        params = op.get("parameters", [])
        path_params = {p["name"] for p in params if p["in"] == "path"}
        query_params = [p["name"] for p in params if p["in"] == "query"]
        concrete = path
        for p in path_params:
            concrete = concrete.replace("{" + p + "}", "1")
        # Path parameters: hostile strings in place of each.
        for p in path_params:
            for label, raw in HOSTILE.items():
                url = path
                for q in path_params:
                    url = url.replace("{" + q + "}", raw if q == p else "1")
                r = client.generic(method.upper(), url, **auth)
                requests += 1
                _check(failures, f"{method.upper()} {path} {p}=<{label}>", r, nul=label in NUL_VALUES)
        for q in query_params:
            for label, raw in HOSTILE.items():
                r = client.generic(method.upper(), f"{concrete}?{q}={raw}", **auth)
                requests += 1
                _check(failures, f"{method.upper()} {path}?{q}=<{label}>", r, nul=label in NUL_VALUES)
        fields = _body_fields(op, schema)
        base = (
            event_payload(rules=[{"id": "R1", "text": "Never delete orders."}])
            if "session_id" in fields
            else {}
        )
        for field in fields:
            for label, value in JSON_HOSTILE.items():
                body = json.dumps({**base, field: value})
                r = client.generic(
                    method.upper(), concrete, data=body, content_type="application/json", **auth
                )
                requests += 1
                _check(failures, f"{method.upper()} {path} body.{field}=<{label}>", r, nul=False)
    assert not failures, "\n".join(failures)
    assert requests > 200
