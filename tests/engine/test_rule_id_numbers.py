"""Readable ids of Chinese rules keep the numbers that tell sibling rules apart."""

from __future__ import annotations

from ctxaudit.engine.rules import rule_id_for


def test_a_number_inside_a_chinese_rule_stays_in_its_id() -> None:
    assert rule_id_for("退款金额超过 500 元必须转人工审核") == "退款金额超过500"


def test_a_number_right_after_the_cut_is_kept() -> None:
    assert rule_id_for("每单退款不得超过 2000 元") == "每单退款不得超过2000"
    assert rule_id_for("每单退款不得超过 5000 元") != rule_id_for("每单退款不得超过 2000 元")


def test_ids_without_numbers_are_unchanged() -> None:
    assert rule_id_for("禁止删除任何业务数据。") == "禁止删除任何业务"
