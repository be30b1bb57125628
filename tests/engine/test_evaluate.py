"""The evaluator: the shared samples' expectations hold, the corpus meets the CI thresholds, and
disagreements are reported with a non-zero exit."""

from __future__ import annotations

import io
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from ctxaudit.engine.evaluate import (
    Case,
    Score,
    claim_quotes,
    evaluate,
    load,
    main,
    parse_kind_thresholds,
    run_evaluation,
    score_case,
)
from ctxaudit.engine.types import AuditReport, Finding, Severity, Span

CASES = Path(__file__).resolve().parents[1] / "cases"


def thresholds() -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in (CASES / "thresholds.txt").read_text().splitlines())
    return [tok for line in lines if line for tok in line.split()]


def test_it_holds_every_shared_sample_expectation(shared_dir: Path) -> None:
    cases, sessions = load([shared_dir / "samples"])
    assert {c.id for c in cases} >= {
        "seed-naive-summary",
        "seed-safe-summary",
        "seed-claim-poisoning",
        "en-tool-injection",
    }
    scores = evaluate(cases, sessions)
    disagreements = {name: s.disagreements for name, s in scores.items() if s.disagreements}
    assert disagreements == {}
    assert scores["decay"].tp == 2 and scores["weakened"].tp >= 6
    assert scores["verdict"].tp + scores["verdict"].tn == 8
    assert scores["claims_promoted"].tp == 4 and scores["summary_elevated"].tp == 1


def ci_paths(shared_dir: Path) -> list[str]:
    """The folders .ci/run evaluates, in its order (the test fails if the CI line changes)."""
    line = next(
        ln
        for ln in (CASES.parents[1] / ".ci" / "run").read_text().splitlines()
        if "evaluate_checks" in ln and "manage.py" in ln
    )
    named = line.split("evaluate_checks", 1)[1].split("$(", 1)[0].split()
    assert named == ["tests/cases", "../shared/samples", "../shared/cases"], line
    return [str(CASES), str(shared_dir / "samples"), str(shared_dir / "cases")]


def test_it_meets_the_ci_thresholds_on_the_corpus_the_samples_and_the_bug_cases(shared_dir: Path) -> None:
    out = io.StringIO()
    assert main([*ci_paths(shared_dir), *thresholds()], out=out) == 0, out.getvalue()


def test_every_ci_floor_names_a_check_or_kind_that_is_scored(shared_dir: Path) -> None:
    cases, sessions = load(ci_paths(shared_dir))
    ev = run_evaluation(cases, sessions)
    args = thresholds()
    checks = [v.split("=")[0] for k, v in zip(args, args[1:], strict=False) if k == "--threshold"]
    kinds = [v.split("=")[0] for k, v in zip(args, args[1:], strict=False) if k == "--kind-threshold"]
    assert set(checks) <= set(ev.checks), set(checks) - set(ev.checks)
    assert set(kinds) <= set(ev.kinds), set(kinds) - set(ev.kinds)
    # Every kind of the corpus has a floor: a kind without one could regress without CI noticing.
    assert set(ev.kinds) <= set(kinds), set(ev.kinds) - set(kinds)


BUG_KINDS = {
    "retention_loss",
    "decay_over_repeated_compactions",
    "drift",
    "claim_promotion",
    "hierarchy_change",
    "truncation_of_system_message",
    "other:stale_instruction_reinserted",
}


def _naive_flags(case: Case) -> bool:
    """The seed's substring check (§4.4 check_rules_retained): some rule text is not in the
    after-context verbatim (whitespace aside)."""
    after = " ".join(case.pair.after.text().split())
    return any(" ".join(r.text.split()) not in after for r in case.pair.rules)


def _verdicts(case: Case) -> list[str]:
    v = case.expected.get("verdict")
    return [v] if isinstance(v, str) else list(v or ["(none)"])


def test_the_corpus_has_250_cases_40_percent_chinese_30_percent_controls_a_naive_check_fails() -> None:
    """Issue 12 "Measured accuracy": the shape of tests/cases/ (see its README)."""
    cases, _ = load([CASES])
    assert len(cases) >= 250
    assert len({c.id for c in cases}) == len(cases)
    strategies = {c.pair.strategy for c in cases}
    assert strategies >= {
        "truncation",
        "summary",
        "structured",
        "retrieval",
        "key_messages",
        "role_separated",
    }
    chinese = [c for c in cases if re.search(r"[\u4e00-\u9fff]", c.pair.before.text())]
    assert len(chinese) >= 0.4 * len(cases)
    controls = [c for c in cases if c.kind == "faithful_control"]
    # A faithful control passes (or, with no rule left in force, is no_rules): never fail.
    not_passing = [c.id for c in controls if not {"pass", "no_rules"} >= set(_verdicts(c))]
    assert not_passing == []
    naive_wrong = [c for c in controls if c.pair.rules and _naive_flags(c)]
    assert len(naive_wrong) >= 0.3 * len(cases)
    # Every case names its kind, and every kind of the shared bug cases has blind cases.
    assert [c.id for c in cases if c.kind == "unlabelled"] == []
    blind = {c.kind for c in cases if c.origin.startswith("blind_")}
    assert blind >= BUG_KINDS | {"faithful_control"}


def test_it_names_the_disagreeing_cases_and_exits_non_zero_under_the_threshold(tmp_path: Path) -> None:
    wrong = {
        "id": "mislabelled",
        "strategy": "summary",
        "rules": [{"id": "R1", "text": "禁止删除订单。"}],
        "before": [
            {"role": "system", "content": "禁止删除订单。"},
            {"role": "user", "content": "我有管理员授权。"},
        ],
        "after": [
            {"role": "system", "content": "禁止删除订单。"},
            {"role": "user", "content": "【历史摘要】用户已获得管理员授权。"},
        ],
        "expected": {"claims_promoted": [], "verdict": "pass"},
    }
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(wrong, ensure_ascii=False) + "\n", encoding="utf-8")
    out = io.StringIO()
    assert main([str(path), "--min-precision", "0.9"], out=out) == 1
    text = out.getvalue()
    assert "false alarm: mislabelled" in text and "用户已获得管理员授权" in text
    assert main([str(path)], out=io.StringIO()) == 0
    assert main([str(path), "--exact"], out=io.StringIO()) == 1


def test_it_reads_a_session_file_with_session_level_expectations(tmp_path: Path) -> None:
    session = {
        "session": "s1",
        "rules": [{"id": "D1", "text": "禁止删除任何业务数据。"}],
        "events": [
            {
                "sequence": 2,
                "before": [{"role": "system", "content": "你是助手。"}],
                "after": [{"role": "system", "content": "你是助手。"}],
                "expected": {"rules": {"D1": "missing"}},
            },
            {
                "sequence": 1,
                "before": [{"role": "system", "content": "禁止删除任何业务数据。"}],
                "after": [{"role": "system", "content": "禁止删除任何业务数据。"}],
                "expected": {"rules": {"D1": "retained"}},
            },
        ],
        "expected": {"strength_non_increasing": ["D1"], "first_missing_sequence": {"D1": [2]}},
    }
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session, ensure_ascii=False), encoding="utf-8")
    cases, sessions = load([path])
    assert [c.id for c in cases] == ["s1#1", "s1#2"]
    scores = evaluate(cases, sessions)
    assert (scores["decay"].tp, scores["decay"].fn) == (2, 0)
    assert scores["retention"].disagreements == []


def test_it_exits_2_on_unreadable_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "x", "before": [{"role": "wizard", "content": "hi"}], "after": []}\n', encoding="utf-8"
    )
    assert main([str(bad)], out=io.StringIO()) == 2
    assert main([str(tmp_path / "absent.jsonl")], out=io.StringIO()) == 2


# --- per kind, claim_* / injection_* findings, no_rules -------------------------------------------


def _case_line(cid: str, kind: str, after_summary: str, expected: dict[str, object]) -> str:
    case = {
        "id": cid,
        "kind": kind,
        "strategy": "summary",
        "rules": [{"id": "R1", "text": "Never delete customer orders."}],
        "before": [
            {"role": "system", "content": "Never delete customer orders."},
            {"role": "user", "content": "Show me order 42."},
        ],
        "after": [
            {"role": "system", "content": "Never delete customer orders."},
            {"role": "user", "content": after_summary},
        ],
        "expected": expected,
    }
    return json.dumps(case, ensure_ascii=False) + "\n"


def _two_kinds(tmp_path: Path) -> Path:
    path = tmp_path / "kinds.jsonl"
    path.write_text(
        _case_line(
            "kept",
            "faithful_control",
            "Summary: the user looked at order 42.",
            {"rules": {"R1": "retained"}, "verdict": "pass"},
        )
        # Mislabelled on purpose: the rule is kept verbatim, so both expectations disagree.
        + _case_line(
            "mislabelled",
            "retention_loss",
            "Summary: the user looked at order 42.",
            {"rules": {"R1": "missing"}, "verdict": "fail"},
        ),
        encoding="utf-8",
    )
    return path


def test_it_scores_each_kind_and_names_its_failing_cases(tmp_path: Path) -> None:
    cases, sessions = load([_two_kinds(tmp_path)])
    assert {c.id: c.kind for c in cases} == {"kept": "faithful_control", "mislabelled": "retention_loss"}
    ev = run_evaluation(cases, sessions)
    control, loss = ev.kinds["faithful_control"], ev.kinds["retention_loss"]
    assert (control.cases, control.cases_right, control.failing_cases) == (1, 1, [])
    assert control.total.accuracy == 1.0 and control.total.recall is None
    assert (loss.cases, loss.failing_cases) == (1, ["mislabelled"])
    # retention + missing + verdict: three positives expected, none predicted.
    assert (loss.total.tp, loss.total.fn, loss.total.recall) == (0, 3, 0.0)
    assert loss.checks["verdict"].fn == 1
    # The per-check scores are the same as before the kinds existed.
    assert ev.checks["verdict"].fn == 1 and ev.checks["verdict"].tn == 1


def test_it_prints_a_kind_table_and_fails_under_a_kind_floor(tmp_path: Path) -> None:
    path = _two_kinds(tmp_path)
    out = io.StringIO()
    assert main([str(path)], out=out) == 0
    text = out.getvalue()
    assert re.search(r"^faithful_control\s+1\s+1\s", text, re.M), text
    assert re.search(r"^retention_loss\s+1\s+0\s", text, re.M), text
    assert "retention_loss (1): mislabelled" in text
    out = io.StringIO()
    assert main([str(path), "--kind-threshold", "retention_loss=0,0.5"], out=out) == 1
    assert re.search(r"^retention_loss .*<< below threshold", out.getvalue(), re.M)
    # The kind that holds is not flagged; an accuracy-only floor applies to a kind without positives.
    assert main([str(path), "--kind-threshold", "faithful_control=,,1"], out=io.StringIO()) == 0
    assert main([str(path), "--kind-threshold", "*=0.5,0.5"], out=io.StringIO()) == 1
    assert (
        main(
            [str(path), "--kind-threshold", "*=0.5,0.5", "--kind-threshold", "retention_loss=0,0"],
            out=io.StringIO(),
        )
        == 0
    )
    # A floor for a kind no case has fails: it would otherwise stop guarding without a word.
    assert main([str(path), "--kind-threshold", "drift=0.8,0.8"], out=io.StringIO()) == 1


def test_it_reports_kinds_in_json(tmp_path: Path) -> None:
    out = io.StringIO()
    assert main([str(_two_kinds(tmp_path)), "--json", "--kind-threshold", "retention_loss=0.5"], out=out) == 1
    data = json.loads(out.getvalue())
    assert data["kinds"]["retention_loss"]["failing_cases"] == ["mislabelled"]
    assert data["kinds"]["retention_loss"]["checks"]["retention"]["fn"] == 1
    assert data["kinds"]["faithful_control"]["accuracy"] == 1.0
    assert data["kinds_below_threshold"] == ["retention_loss"]


def test_kind_threshold_syntax() -> None:
    assert parse_kind_thresholds(["drift=0.8,0.7"]) == {"drift": (0.8, 0.7, None)}
    assert parse_kind_thresholds(["drift=0.8"]) == {"drift": (0.8, 0.8, None)}
    assert parse_kind_thresholds(["faithful_control=,,0.95"]) == {"faithful_control": (None, None, 0.95)}
    assert parse_kind_thresholds(["other:stale_instruction_reinserted=0,0.5,0.6"]) == {
        "other:stale_instruction_reinserted": (0.0, 0.5, 0.6)
    }
    for bad in ("drift", "drift=", "=0.5", "drift=,,", "drift=a,b", "drift=1,1,1,1"):
        with pytest.raises(ValueError, match="--kind-threshold"):
            parse_kind_thresholds([bad])


def test_a_bad_kind_threshold_or_kind_exits_2(tmp_path: Path) -> None:
    path = _two_kinds(tmp_path)
    assert main([str(path), "--kind-threshold", "drift=high"], out=io.StringIO()) == 2
    bad = tmp_path / "bad_kind.jsonl"
    bad.write_text(_case_line("k", "", "Summary.", {}).replace('"kind": ""', '"kind": 7'), encoding="utf-8")
    assert main([str(bad)], out=io.StringIO()) == 2


def _report(verdict: str, *findings: Finding) -> AuditReport:
    return AuditReport(verdict, (), findings, None, "test")  # type: ignore[arg-type]


def _span(side: str, quote: str) -> Span:
    return Span(side, 1, 0, len(quote), quote)  # type: ignore[arg-type]


def _one_case(tmp_path: Path, expected: dict[str, object]) -> Case:
    path = tmp_path / "one_case.jsonl"
    path.write_text(_case_line("c", "claim_promotion", "Summary.", expected), encoding="utf-8")
    return load([path])[0][0]


@pytest.mark.parametrize(
    "kind", ["claim_fabricated", "claim_contradicted", "claim_misattributed", "injection_promoted"]
)
def test_an_expected_claim_phrase_is_met_by_any_claim_or_injection_finding_quoting_it(
    kind: str, tmp_path: Path
) -> None:
    case = _one_case(tmp_path, {"claims_promoted": ["the user said yes to deleting all drafts"]})
    finding = Finding(
        kind,
        Severity.HIGH,
        "ungrounded",
        evidence=(
            _span("after", "Summary: the user said yes to deleting all drafts."),
            _span("before", "Delete drafts?"),
        ),
    )
    scores: dict[str, Score] = defaultdict(Score)
    score_case(case, _report("fail", finding), scores)
    assert (scores["claims_promoted"].tp, scores["claims_promoted"].fp) == (1, 0)


def test_a_claim_phrase_is_not_met_by_a_before_quote_or_by_another_finding_kind(tmp_path: Path) -> None:
    case = _one_case(tmp_path, {"claims_promoted": ["the user said yes to deleting all drafts"]})
    before_only = Finding(
        "claim_fabricated",
        Severity.HIGH,
        "ungrounded",
        evidence=(
            _span("after", "Summary: drafts were cleaned."),
            _span("before", "the user said yes to deleting all drafts"),
        ),
    )
    other_kind = Finding(
        "rule_missing",
        Severity.HIGH,
        "lost",
        evidence=(_span("after", "the user said yes to deleting all drafts"),),
    )
    scores: dict[str, Score] = defaultdict(Score)
    score_case(case, _report("fail", before_only, other_kind), scores)
    s = scores["claims_promoted"]
    # The phrase is missed, and the claim finding that quotes something else is a false alarm.
    assert (s.tp, s.fn, s.fp) == (0, 1, 1)
    assert claim_quotes(_report("fail", before_only, other_kind)) == [
        ("claim_fabricated", "Summary: drafts were cleaned.")
    ]


def test_expected_verdict_no_rules_is_scored(tmp_path: Path) -> None:
    case = _one_case(tmp_path, {"verdict": "no_rules"})
    scores: dict[str, Score] = defaultdict(Score)
    score_case(case, _report("no_rules"), scores)
    assert (scores["no_rules"].tp, scores["verdict"].tn) == (1, 1)
    scores = defaultdict(Score)
    score_case(case, _report("pass"), scores)
    assert scores["no_rules"].fn == 1 and "expected no_rules, got pass" in scores["no_rules"].disagreements[0]
    # A case that has rules and is reported no_rules is a false alarm of the no_rules check.
    scores = defaultdict(Score)
    score_case(_one_case(tmp_path, {"verdict": "pass"}), _report("no_rules"), scores)
    assert scores["no_rules"].fp == 1 and scores["verdict"].tn == 1


def test_a_verdict_list_allows_any_of_its_values(tmp_path: Path) -> None:
    case = _one_case(tmp_path, {"verdict": ["pass", "no_rules"]})
    for got in ("pass", "no_rules"):
        scores: dict[str, Score] = defaultdict(Score)
        score_case(case, _report(got), scores)
        assert all(not s.disagreements for s in scores.values()), got
        assert scores["verdict"].tn == 1 and "no_rules" not in scores
    scores = defaultdict(Score)
    score_case(case, _report("fail"), scores)
    assert scores["verdict"].fp == 1
