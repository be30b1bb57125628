"""Each row of the event list says what the compression lost (rule id and the start of its text),
else its worst finding, with the top severity; severity and finding-kind filters live in the URL."""

from __future__ import annotations

import re

import pytest

from ctxaudit.audits.models import Finding, RuleOutcome
from tests.factories import PASSWORD, event

pytestmark = pytest.mark.django_db

RULE = "禁止删除任何业务数据，必须经过管理员二次确认。"
SYSTEM = f"你是运营助手。\n{RULE}"
HISTORY = [
    {"role": "user", "content": "查一下昨天的订单量"},
    {"role": "assistant", "content": "昨天共 1280 单。"},
]


def _checked(capture, session: str, after: list[dict], rules: list[dict] | None = None):
    with capture(execute=True):
        return event(
            session_id=session,
            before=[{"role": "system", "content": SYSTEM}, *HISTORY],
            after=after,
            rules=rules or [{"id": "R1", "text": RULE, "severity": "critical"}],
        )


def _row(body: str, pk: int) -> str:
    m = re.search(rf'<tr class="ev[^"]*">(?:(?!</tr>).)*?/events/{pk}/.*?</tr>', body, re.S)
    assert m, pk
    return m.group(0)


@pytest.fixture
def events(alice, django_capture_on_commit_callbacks):
    cap = django_capture_on_commit_callbacks
    return {
        "lost": _checked(cap, "s-lost", [{"role": "system", "content": "你是运营助手。"}, *HISTORY]),
        "kept": _checked(cap, "s-kept", [{"role": "system", "content": SYSTEM}, *HISTORY]),
        "demoted": _checked(
            cap,
            "s-demoted",
            [{"role": "system", "content": "你是运营助手。"}, {"role": "user", "content": RULE}, *HISTORY],
        ),
    }


def test_a_row_names_the_lost_rule_and_the_top_severity(client, events) -> None:
    client.login(username="alice", password=PASSWORD)
    body = client.get("/").content.decode()
    lost = _row(body, events["lost"].pk)
    assert '<span class="badge badge-critical">critical</span>' in lost
    assert '<span class="badge badge-missing">missing</span> <span class="rule-id mono">R1</span>' in lost
    assert f'<q class="rule-text">{RULE}</q>' in lost
    kept = _row(body, events["kept"].pk)
    assert "nothing lost" in kept and "badge-critical" not in kept
    demoted = _row(body, events["demoted"].pk)
    # Retained but demoted: the row says demoted, never a green "retained".
    assert '<span class="badge badge-demoted">demoted</span> <span class="rule-id mono">R1</span>' in demoted
    assert "badge-retained" not in demoted


def test_without_a_lost_rule_the_worst_finding_names_the_row(client, events) -> None:
    ev = events["kept"]
    Finding.objects.create(
        event=ev, kind="summary_unmarked", severity="low", message="建议… / Advice: no marker"
    )
    Finding.objects.create(
        event=ev,
        kind="summary_elevated",
        severity="high",
        message="对话历史被放进了 system 角色 / History/summary text was placed in the system role (message #0)",
    )
    client.login(username="alice", password=PASSWORD)
    row = _row(client.get("/").content.decode(), ev.pk)
    assert '<span class="badge badge-high">high</span>' in row
    assert "Summary placed in the system role" in row
    assert "History/summary text was placed in the system role" in row  # the English half
    assert "Advice: no marker" not in row and "2 findings" in row


def test_many_lost_rules_are_counted_past_three(client, events) -> None:
    ev = events["lost"]
    for i in range(2, 7):
        RuleOutcome.objects.create(event=ev, rule_id=f"R{i}", text=f"规则 {i}", state="missing", strength=0)
    client.login(username="alice", password=PASSWORD)
    row = _row(client.get("/").content.decode(), ev.pk)
    assert row.count('<span class="badge badge-missing">missing</span>') == 3
    assert "+3 more rules" in row


def test_severity_and_kind_filter_in_the_url(client, events) -> None:
    client.login(username="alice", password=PASSWORD)

    def shown(query: str) -> set[int]:
        body = client.get(query).content.decode()
        return {int(pk) for pk in re.findall(r'<td class="when"><a href="/events/(\d+)/"', body)}

    assert shown("/?severity=critical") == {events["lost"].pk}
    assert shown("/?severity=medium") == {
        events["lost"].pk,
        events["demoted"].pk,
    }  # demotion: one level lower, ≥ medium
    assert shown("/?kind=rule_demoted") == {events["demoted"].pk}
    assert shown("/?kind=rule_missing&severity=critical") == {events["lost"].pk}
    assert shown("/?severity=bogus") == {e.pk for e in events.values()}
    page = client.get("/?kind=rule_demoted").content.decode()
    assert '<option value="rule_demoted" selected>' in page
    assert 'name="severity"' in page
