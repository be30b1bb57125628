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
        assert sents.terms_of(i) == terms(m.content[:4_000]).keys(), m.content[:200]


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


def _reference_automaton(
    extra: dict[str, tuple[str, float]], only: set[str] | None
) -> list[tuple[str, object]]:
    """What a matcher's automaton holds, built the plain way: the whole lexicon table copied, the
    fallback tokens' forms added, every surface's value computed."""
    from ctxaudit.engine.language import constraints as c

    table = {k: list(v) for k, v in c._base_table()}
    if only is not None:
        table = {
            k: kept
            for k, v in table.items()
            if (kept := [(t, m) for t, m in v if t[0] == c.CONCEPT and t[1] in only])
        }
    for token, (cid, _) in extra.items():
        forms = c._english_forms(token) if token[:1].isascii() else [(token, c._WORD)]
        if token[:1].isascii():
            forms += [(stem, c._WORD) for stem in c._stems(token)]
        for surface, mode in forms:
            entries = table[surface] = list(table.get(surface, ()))
            if ((c.CONCEPT, cid), mode) not in entries:
                entries.append(((c.CONCEPT, cid), mode))
    return sorted((s, c._surface_value(s, e)) for s, e in table.items())


@pytest.mark.parametrize(
    "rules",
    [
        ["Never ship any pallets of the border region before customs clearance."],
        ["禁止向供应商透露任何报价，除非法务已批准。", "Any refund above 200 needs two approvals."],
        ["Keep replies under 120 words.", "不得超过三十行。"],
    ],
)
def test_a_matcher_holds_what_the_plain_build_holds(rules: list[str]) -> None:
    """The matcher reuses the lexicon's precomputed values and recomputes only the surfaces a rule
    set's fallback tokens touch; its automaton must be the plain build's, with and without `only`,
    and one rule set's tokens must not leak into the next matcher."""
    from ctxaudit.engine.language.constraints import Matcher, fallback_tokens

    extra: dict[str, tuple[str, float]] = {}
    for text in rules:
        extra.update(fallback_tokens(text))
    assert extra
    Matcher(fallback_tokens("Never delete any invoices of the archive vault."))  # another rule set first
    for only in (None, {"delete", "refund", "approval", *(cid for cid, _ in extra.values())}):
        got = sorted(Matcher(extra, only=only).items())
        assert got == _reference_automaton(extra, only)


def _trimmed_split(content: str) -> list[tuple[int, int]]:
    """Sentence bounds the plain way: split after each sentence end, trim with _trimmed."""
    from ctxaudit.engine.language.clauses import _SENTENCE_END, _trimmed

    out, pos = [], 0
    for m in _SENTENCE_END.finditer(content):
        s, e = _trimmed(content, pos, m.end())
        if e > s:
            out.append((s, e))
        pos = m.end()
    s, e = _trimmed(content, pos, len(content))
    return out + [(s, e)] if e > s else out


def test_sentence_bounds_are_the_plain_split_inside_and_outside_a_run() -> None:
    import random

    from ctxaudit.engine.language.clauses import sentence_memo, sentences

    alphabet = list("ab 。！？；!?;\n.\t-–—<>#*•·，：,:\u3000x中")
    texts = ["".join(random.Random(n).choice(alphabet) for _ in range(n % 40)) for n in range(3000)]
    texts += ["  - Never delete orders. 禁止删除订单；\n* Ask first: always!  ", "", "   ", "a.b. c"]
    for text in texts:
        assert list(sentences(text)) == _trimmed_split(text)
    with sentence_memo():
        first = [list(sentences(t)) for t in texts]
        again = [list(sentences(t)) for t in texts]
    assert first == again == [_trimmed_split(t) for t in texts]
    assert list(sentences("One. Two. Three.")) == [(0, 4), (5, 9), (10, 16)]


def _random_texts(alphabet: str, n: int = 3000) -> list[str]:
    import random

    rnd = random.Random(5)
    return ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40))) for _ in range(n)]


def test_the_fast_sentence_end_patterns_match_what_the_plain_ones_match() -> None:
    import re

    from ctxaudit.engine.checks import retention
    from ctxaudit.engine.language import clauses

    plain_split = re.compile(r"[。！？；!?;\n]+|\.(?=\s|$)")
    plain_index = re.compile(r"[。！？；;!?\n]|(?<=[^\s\d])\.(?=\s)")
    texts = _random_texts('a1 .。！？；!?;\n\t好"]},') + _after_texts()
    for t in texts:
        assert [m.span() for m in clauses._SENTENCE_END.finditer(t)] == [
            m.span() for m in plain_split.finditer(t)
        ], t
        if '"' not in t:
            fast = [m.span() for m in retention._SENT_END_PROSE.finditer(t)]
            assert fast == [m.span() for m in plain_index.finditer(t)], t
            assert fast == [m.span() for m in retention._SENT_END.finditer(t)], t


def test_folding_replaces_every_full_width_character_wherever_it_repeats() -> None:
    from ctxaudit.engine.language.constraints import fold

    assert fold("禁止ＤＥＬＥＴＥ，ＤＥＬＥＴＥ！　‘ｘ’，，") == "禁止delete,delete! 'x',,"
    for t in _random_texts("aＡＢ，！　‘’好 .", 500):
        assert fold(t) == t.lower().translate(
            {i: i - 0xFEE0 for i in range(0xFF01, 0xFF5F)} | {0x3000: 0x20, 0x2018: 0x27, 0x2019: 0x27}
        )


def test_punctuation_is_removed_the_same_way_from_ascii_and_other_text() -> None:
    from ctxaudit.engine.language import normalize as n

    assert n.without_punctuation("Never delete orders, ok?\t(really)") == "Neverdeleteordersokreally"
    assert n.without_punctuation("禁止 删除，订单。") == "禁止删除订单"
    for text in [chr(i) for i in range(128)] + _random_texts("a Z1_\t\x1c!-/:@[`{~.,", 500):
        assert n.without_punctuation(text) == "".join(n.KEPT_RUNS.findall(text)), repr(text)
