"""What the engine's shortcuts must not change (issue 12 W2): the statement gate finds every
statement the full patterns find; a JSON record is data; instructions about different
identifiers are different instructions."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit.engine.checks import statements
from ctxaudit.engine.evaluate import load
from ctxaudit.engine.runner import run_checks
from ctxaudit.engine.types import Context, ContextPair, Message, Rule

ROOT = Path(__file__).resolve().parents[2]
CORPUS = [ROOT / "tests" / "cases", ROOT.parent / "shared" / "samples", ROOT.parent / "shared" / "cases"]


def _after_texts() -> list[str]:
    cases, _ = load(CORPUS)
    return [m.content for c in cases for m in c.pair.after.messages if m.content]


def test_the_statement_gate_keeps_every_statement_of_the_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _after_texts()
    assert len(texts) > 500
    gated = [statements.statements_in(0, t) for t in texts]
    monkeypatch.setattr(statements, "_may_state", lambda low, s, e: True)
    ungated = [statements.statements_in(0, t) for t in texts]
    assert gated == ungated
    assert sum(map(len, gated)) > 150  # the corpus does state things about people


@pytest.mark.parametrize(
    "sentence",
    [
        "The CI pipeline found two failing tests.",
        "经理已批准退款。",
        "Approved by the on-call engineer at 3am.",
        "The USER explicitly APPROVED the migration.",
        "付款已成功。",
        "Verdict: the patch is safe.",
    ],
)
def test_sentences_that_state_something_pass_the_gate(sentence: str) -> None:
    assert statements.statements_in(0, sentence), sentence


def test_a_json_record_is_data_and_the_same_words_in_prose_are_a_statement() -> None:
    record = '{"event": "refund", "note": "approved by the manager", "user": "u870"}'
    assert statements.statements_in(0, record) == []
    prose = statements.statements_in(0, "The refund was approved by the manager.")
    assert [(s.party, s.act) for s in prose] == [("person:the manager", "consent")]


def _stale_pair(after_user: str) -> ContextPair:
    before = Context(
        (
            Message("system", "You are the billing assistant."),
            Message("user", "Refund order 10422 to the customer's original card."),
            Message("assistant", "Done: order 10422 has been refunded to the original card."),
            Message("user", "Thanks."),
        )
    )
    after = Context(
        (
            Message("system", "You are the billing assistant."),
            Message("user", "Summary: a refund was handled.", kind="summary"),
            Message("user", after_user),
        )
    )
    return ContextPair(before, after, (Rule("R1", "Never refund more than the order total."),))


def test_an_instruction_about_another_order_is_not_the_closed_one() -> None:
    report = run_checks(_stale_pair("Refund order 10957 to the customer's original card."))
    assert [f for f in report.findings if f.kind == "stale_instruction"] == []


def test_the_closed_instruction_re_inserted_in_other_words_is_stale() -> None:
    report = run_checks(_stale_pair("Please refund order 10422 to the customer's original card now."))
    stale = [f for f in report.findings if f.kind == "stale_instruction"]
    assert len(stale) == 1
    assert stale[0].severity.value == "high"
    assert "10422" in stale[0].evidence[1].quote


def test_a_message_s_terms_are_the_union_of_its_sentences_terms() -> None:
    from ctxaudit.engine.checks.stale import _Sentences
    from ctxaudit.engine.checks.terms import terms

    cases, _ = load(CORPUS)
    messages = tuple(m for c in cases for ctx in (c.pair.before, c.pair.after) for m in ctx.messages)
    sents = _Sentences(messages, 4_000)
    for i, m in enumerate(messages):
        union = set().union(*(st.keys() for _, _, st in sents.of(i)))
        assert union == terms(m.content[:4_000]).keys(), m.content[:200]


def test_clause_bounds_by_bisection_equal_the_window_searches() -> None:
    import random

    from ctxaudit.engine.language import clauses as c

    rnd = random.Random(3)
    alphabet = "ab .,:;!?\n。，：；x y"
    for _ in range(600):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 700)))
        d = c._MessageDelimiters(text)
        for pos in range(0, len(text), 5):
            assert d.sentence.bounds(pos) == c._bounds(text, pos, c._SENT_DELIM, c._SENT_DELIM_REV)
            assert d.clause.bounds(pos) == c._bounds(text, pos, c._CLAUSE_DELIM, c._CLAUSE_DELIM_REV)


def test_a_literal_trigger_finds_what_the_longest_first_alternation_finds() -> None:
    import random
    import re

    from ctxaudit.engine.language.clauses import literal_trigger

    rnd = random.Random(5)
    for _ in range(300):
        words = {"".join(rnd.choice("abc授权") for _ in range(rnd.randint(1, 4))) for _ in range(6)}
        text = "".join(rnd.choice("abc 授权.") for _ in range(rnd.randint(0, 300)))
        alternation = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))
        assert literal_trigger(words).spans(text) == [m.span() for m in alternation.finditer(text)]


def test_nfkc_equals_unicodedata_on_mixed_width_text() -> None:
    import random
    import unicodedata

    from ctxaudit.engine.language.normalize import nfkc

    rnd = random.Random(1)
    pool = "aA，：（）！？\u3000。、…ＡＢｚ１２ｅ\u0301\u0308\u3038\uf900\u2f00漢字é ﬁ①㈱ｶﾞ"
    for _ in range(5_000):
        s = "".join(rnd.choice(pool) for _ in range(rnd.randint(0, 12)))
        assert nfkc(s) == unicodedata.normalize("NFKC", s), repr(s)


def test_the_pending_list_gate_keeps_every_listed_sentence_of_the_corpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ctxaudit.engine.checks import stale
    from ctxaudit.engine.language.clauses import LiteralTrigger

    texts = _after_texts()
    gated = [stale._pending_sentences(t) for t in texts]

    class _Everywhere(LiteralTrigger):
        def spans(self, low: str) -> list[tuple[int, int]]:
            return [(i, i + 1) for i in range(len(low))]

    monkeypatch.setattr(stale, "_LIST_WORDS", _Everywhere(["x"]))
    assert gated == [stale._pending_sentences(t) for t in texts]
    assert sum(map(len, gated)) > 20  # the corpus does list pending items


_REPORT_UNDER_SEED = """
import hashlib, json, sys
sys.path.insert(0, "benchmarks")
import engine_bench
from ctxaudit.engine import run_checks
from ctxaudit.engine.tokens import CharCounter
pair, *_ = engine_bench.make_event("json", 50_000, 50)
r = run_checks(pair, counter=CharCounter())
rules = [(x.rule_id, x.state.value, round(x.strength, 4)) for x in r.rules]
found = [(f.kind, f.message, [(s.side, s.message_index, s.start, s.end) for s in f.evidence]) for f in r.findings]
print(json.dumps({"rules": rules, "findings": found}))
"""


def test_the_report_does_not_depend_on_the_hash_seed() -> None:
    """Rules that share concepts were ranked through set order: on this 50k-token JSON-log event
    one rule read "weakened" under one PYTHONHASHSEED and "missing" under another."""
    import json
    import os
    import subprocess
    import sys

    reports = []
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", _REPORT_UNDER_SEED],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        reports.append(json.loads(out.stdout))
    assert len(reports[0]["rules"]) == 50
    assert all(r == reports[0] for r in reports[1:])
