"""The literal automata: leftmost-longest and overlapping hits, in characters, on any str."""

from __future__ import annotations

from ctxaudit.engine.language.automata import Automaton
from ctxaudit.engine.runner import run_checks
from ctxaudit.engine.types import Context, ContextPair, Message, Rule


def test_longest_hits_are_leftmost_longest_in_character_offsets() -> None:
    auto = Automaton(["删除", "删除订单", "order", "orders"], longest=True)
    text = "请勿删除订单 or orders"
    assert [(auto.words[k], s, e) for k, s, e in auto.matches(text)] == [
        ("删除订单", 2, 6),
        ("orders", 10, 16),
    ]


def test_overlapping_hits_include_every_occurrence() -> None:
    auto = Automaton(["登录", "录页"], longest=False)
    assert sorted((auto.words[k], s) for k, s, _ in auto.matches("登录页")) == [("录页", 1), ("登录", 0)]


def test_a_lone_surrogate_is_one_character_that_matches_nothing() -> None:
    auto = Automaton(["delete", "\ud800x"], longest=True)
    text = "\ud800 delete \udfff"
    assert [(k, s, e) for k, s, e in auto.matches(text)] == [(0, 2, 8)]
    assert auto.matches("\ud800x") == [(1, 0, 2)]  # the same broken text matches the same broken word


def test_a_context_with_lone_surrogates_is_checked_not_crashed() -> None:
    rule = Rule("r1", "Never delete customer orders.")
    before = Context(
        (Message("system", "Never delete customer orders. \ud800"), Message("user", "delete \udfff orders"))
    )
    after = Context((Message("system", "Never delete customer orders. \ud800"),))
    report = run_checks(ContextPair(before, after, (rule,)))
    assert [r.state.value for r in report.rules] == ["retained"]


def test_an_empty_word_matches_nothing_and_the_others_keep_their_index() -> None:
    auto = Automaton(["", "ab", "", "c"], longest=True)
    assert auto.matches("xabc") == [(1, 1, 3), (3, 3, 4)]
    assert Automaton([""], longest=False).matches("abc") == []


def test_every_occurrence_is_what_the_crates_overlapping_search_finds() -> None:
    """With rare=True the overlapping hits come from a leftmost-first scan (3x faster) plus the
    words that start inside each hit; on texts dense with overlaps they must be the crate's
    overlapping search."""
    import random

    import ahocorasick_rs

    rnd = random.Random(12)
    for words in (
        ["key", "eyj", "akia", "asia", "secret", "token", "sk-"],
        ["ab", "abc", "bc", "c", "abcd", "bcd", "cd", "d"],
        ["登录", "录页", "页面", "登录页面"],
        ["aa", "aaa", "a"],
    ):
        auto = Automaton(words, longest=False, rare=True)
        crate = ahocorasick_rs.AhoCorasick(words, matchkind=ahocorasick_rs.MatchKind.Standard)
        pieces = [*words, "x", " ", "é"]
        for _ in range(300):
            text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
            got = auto.matches(text)
            assert sorted(got) == sorted(crate.find_matches_as_indexes(text, overlapping=True)), (words, text)
            assert [e for _, _, e in got] == sorted(e for _, _, e in got)  # ordered by end
