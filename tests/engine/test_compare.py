"""Comparing two `ctxaudit check --json` runs (issue 15 "Compare two compressors"): engine/compare.py
and `ctxaudit check --compare BASELINE.json`. No database, no Django."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxaudit.engine.compare import CompareInputError, compare, format_comparison, read_results
from tests.engine.test_cli import failing_case, passing_case, run, write_jsonl


def line(case_id: str, verdict: str, rules: dict[str, str], kinds: tuple[str, ...] = ()) -> dict:
    """One `--json` line; a rule state "retained*" means retained and demoted."""
    return {
        "id": case_id,
        "passed": verdict == "pass",
        "problems": [],
        "report": {
            "verdict": verdict,
            "rules": [
                {
                    "id": rid,
                    "text": f"text of {rid}",
                    "state": state.rstrip("*"),
                    "strength": 1.0 if state.startswith("retained") else 0.0,
                    "demoted": state.endswith("*"),
                }
                for rid, state in rules.items()
            ],
            "findings": [{"kind": k, "severity": "high", "message": "m", "evidence": []} for k in kinds],
        },
    }


def runs(*lines: dict) -> dict:
    return read_results("\n".join(json.dumps(x) for x in lines))


def test_a_lost_rule_and_a_failed_verdict_are_regressions_listed_first() -> None:
    baseline = runs(
        line("same", "pass", {"R1": "retained"}),
        line("better", "fail", {"R1": "weakened"}),
        line("worse", "pass", {"R1": "retained", "R2": "retained"}),
    )
    candidate = runs(
        line("same", "pass", {"R1": "retained"}),
        line("better", "pass", {"R1": "retained"}),
        line("worse", "fail", {"R1": "retained", "R2": "missing"}),
    )
    result = compare(baseline, candidate)
    assert [c.case_id for c in result.cases] == ["worse", "better", "same"]
    assert [c.status for c in result.cases] == ["regressed", "improved", "unchanged"]
    worse = result.cases[0]
    assert worse.regressions == ["verdict pass → fail", "rule R2 retained → missing: text of R2"]
    assert [r.rule_id for r in worse.rules] == ["R2", "R1"]  # the worse rule first
    assert result.cases[1].improvements == ["verdict fail → pass", "rule R1 weakened → retained: text of R1"]
    assert result.regressed is True
    assert dict(result.counts) == {"regressed": 1, "improved": 1, "changed": 0, "unchanged": 1}


def test_demotion_no_rules_and_vanished_rules_count_as_regressions() -> None:
    baseline = runs(line("demote", "pass", {"R1": "retained"}), line("empty", "pass", {"R1": "retained"}))
    candidate = runs(line("demote", "fail", {"R1": "retained*"}), line("empty", "no_rules", {}))
    by_id = {c.case_id: c for c in compare(baseline, candidate).cases}
    assert by_id["demote"].regressions == [
        "verdict pass → fail",
        "rule R1 retained → retained (demoted): text of R1",
    ]
    assert by_id["empty"].regressions == [
        "verdict pass → no_rules",
        "rule R1 retained → no result: text of R1",
    ]
    # weakened → missing is worse too, missing → weakened better
    b2 = runs(line("x", "fail", {"R1": "weakened", "R2": "missing"}))
    c2 = runs(line("x", "fail", {"R1": "missing", "R2": "weakened"}))
    x = compare(b2, c2).cases[0]
    assert [r.direction for r in x.rules] == ["worse", "better"]
    assert x.status == "regressed"


def test_cases_in_one_run_only() -> None:
    baseline = runs(line("dropped", "pass", {"R1": "retained"}), line("kept", "pass", {"R1": "retained"}))
    candidate = runs(
        line("kept", "pass", {"R1": "retained"}),
        line("new-ok", "pass", {"R1": "retained"}),
        line("new-bad", "fail", {"R1": "missing"}),
    )
    by_id = {c.case_id: c for c in compare(baseline, candidate).cases}
    assert by_id["dropped"].status == "regressed"
    assert by_id["dropped"].verdict_after == "not run"
    assert by_id["new-bad"].status == "regressed"
    assert by_id["new-ok"].status == "changed"
    assert by_id["kept"].status == "unchanged"


def test_new_finding_kinds_alone_are_a_change_not_a_regression() -> None:
    result = compare(
        runs(line("c", "pass", {"R1": "retained"}, ("summary_elevated",))),
        runs(line("c", "pass", {"R1": "retained"}, ("claim_promoted",))),
    )
    case = result.cases[0]
    assert case.status == "changed"
    assert case.findings_added == ("claim_promoted",)
    assert case.findings_removed == ("summary_elevated",)
    assert result.regressed is False
    text = format_comparison(result)
    assert "~ new finding kind: claim_promoted" in text


def test_a_json_list_is_read_too() -> None:
    got = read_results(json.dumps([line("a", "pass", {}), line("b", "no_rules", {})]))
    assert list(got) == ["a", "b"]
    assert got["b"].verdict == "no_rules"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"id": "a", "report": {"verdict": "pass"}}\n{not json', "results line 2: invalid JSON"),
        ('{"id": "a", "report": {"verdict": "maybe"}}', "report.verdict"),
        (
            '{"id": "a", "report": {"verdict": "pass", "rules": [{"id": "R1", "state": "gone"}]}}',
            "report.rules[0].state",
        ),
        ('{"report": {"verdict": "pass"}}', "id: must be"),
        (
            '{"id": "a", "report": {"verdict": "pass"}}\n{"id": "a", "report": {"verdict": "pass"}}',
            "used twice",
        ),
        ("\n\n", "contains no cases"),
        ('["x"]', "results[0]: must be a JSON object"),
    ],
)
def test_bad_results_name_the_line_and_field(text: str, needle: str) -> None:
    with pytest.raises(CompareInputError) as exc:
        read_results(text)
    assert needle in str(exc.value)


# --- the CLI ---------------------------------------------------------------------------------


def baseline_of(tmp_path: Path, case: dict) -> Path:
    """Run `ctxaudit check --json` on one case and save it, as a CI job would."""
    cases = write_jsonl(tmp_path / "base_cases.jsonl", [case])
    _, out, _ = run(["check", "--json", str(cases)])
    path = tmp_path / "baseline.json"
    path.write_text(out, encoding="utf-8")
    return path


def test_cli_exits_1_on_a_regression(tmp_path: Path) -> None:
    baseline = baseline_of(tmp_path, passing_case("c1"))
    cases = write_jsonl(tmp_path / "cand.jsonl", [failing_case("c1")])
    code, out, _ = run(["check", str(cases), "--compare", str(baseline)])
    assert code == 1
    assert "REGRESSED c1 (verdict pass → fail)" in out
    assert "rule R1 retained → missing" in out


def test_cli_exits_0_when_failures_are_the_baselines_own(tmp_path: Path) -> None:
    baseline = baseline_of(tmp_path, failing_case("c1"))
    cases = write_jsonl(tmp_path / "cand.jsonl", [failing_case("c1")])
    code, out, _ = run(["check", str(cases), "--compare", str(baseline)])
    assert code == 0
    assert "0 regressed" in out
    # without --compare the same run fails the gate
    assert run(["check", str(cases)])[0] == 1


def test_cli_reports_an_improvement(tmp_path: Path) -> None:
    baseline = baseline_of(tmp_path, failing_case("c1"))
    cases = write_jsonl(tmp_path / "cand.jsonl", [passing_case("c1")])
    code, out, _ = run(["check", str(cases), "--compare", str(baseline)])
    assert code == 0
    assert "IMPROVED c1 (verdict fail → pass)" in out


def test_cli_json_keeps_stdout_machine_readable(tmp_path: Path) -> None:
    baseline = baseline_of(tmp_path, passing_case("c1"))
    cases = write_jsonl(tmp_path / "cand.jsonl", [failing_case("c1")])
    code, out, err = run(["check", "--json", str(cases), "--compare", str(baseline)])
    assert code == 1
    assert [json.loads(x)["id"] for x in out.splitlines()] == ["c1"]
    assert "1 regressed" in err


def test_cli_bad_baseline_is_bad_input(tmp_path: Path) -> None:
    cases = write_jsonl(tmp_path / "cand.jsonl", [failing_case("c1")])
    bad = tmp_path / "baseline.json"
    bad.write_text('{"id": "c1"}\n', encoding="utf-8")
    code, _, err = run(["check", str(cases), "--compare", str(bad)])
    assert code == 2
    assert "--compare" in err and "report" in err
    code, _, err = run(["check", str(cases), "--compare", str(tmp_path / "nope.json")])
    assert code == 2
    assert "cannot read" in err
