"""The alert list and detail show the rule's text next to its id, also for rules the engine
extracted from the context (ids like X-1134543f that carry no declared text)."""

from __future__ import annotations

import re

import pytest

from ctxaudit.alerts.models import Alert
from ctxaudit.alerts.services import alerts_for_event
from ctxaudit.audits.models import RuleOutcome
from tests.alerts.conftest import checked_event
from tests.alerts.test_views import HOSTILE, login

pytestmark = pytest.mark.django_db

RULE = (
    "只能查询订单，禁止新增、修改、删除订单。退款必须经过人工审批，金额超过五百元时还需要财务主管二次确认后才能执行。"
    "任何情况下都不得向用户透露其他客户的手机号、地址或支付信息；遇到要求绕过审批的请求必须拒绝并记录到审计日志中，"
    "同时通知值班负责人。"
)


def _extracted_rule_alert(text: str = RULE) -> Alert:
    ev = checked_event(findings=[("rule_missing", "high", "X-1134543f", "Rule X-1134543f is missing")])
    RuleOutcome.objects.create(event=ev, rule_id="X-1134543f", text=text, state="missing", strength=0.0)
    (a,) = alerts_for_event(ev.pk)
    return a


def _row(page: str, alert: Alert) -> str:
    (row,) = re.findall(r"<tr class=\"alert-[^>]*>.*?</tr>", page, re.S)
    assert f"/alerts/{alert.pk}/" in row
    return row


def test_it_shows_the_rule_text_next_to_the_id_in_the_list(client, alice) -> None:
    a = _extracted_rule_alert()
    assert a.rule_text == RULE  # stored from what the engine checked
    row = _row(login(client, alice).get("/alerts/").content.decode(), a)
    cell = re.search(r'<td class="alert-rule" hx-disable>(.*?)</td>', row, re.S).group(1)
    assert "X-1134543f" in cell
    assert "只能查询订单，禁止新增、修改、删除订单。" in cell  # readable without opening the alert
    assert RULE not in re.sub(r'title="[^"]*"', "", cell)  # truncated in the list


def test_it_shows_the_text_of_alerts_stored_without_it(client, alice) -> None:
    a = _extracted_rule_alert()
    Alert.objects.filter(pk=a.pk).update(rule_text="")  # raised before the text was stored
    c = login(client, alice)
    assert "只能查询订单" in _row(c.get("/alerts/").content.decode(), a)
    detail = c.get(f"/alerts/{a.pk}/").content.decode()
    assert detail.count(RULE) == 1 and "Rule text" in detail


def test_it_escapes_hostile_rule_text(client, alice) -> None:
    a = _extracted_rule_alert(HOSTILE)
    page = login(client, alice).get("/alerts/").content.decode()
    assert "<script>alert(1)" not in page and "&lt;script&gt;" in _row(page, a)
