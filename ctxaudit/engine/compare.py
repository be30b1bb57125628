"""Compare two `ctxaudit check --json` runs of one regression set (issue 15 "Compare two compressors").

ctxaudit has no compressor of its own, so two compressors are compared by their results: a
baseline run and a candidate run of the same cases, each the JSON lines `ctxaudit check --json`
prints (`{"id", "passed", "problems", "report": {"verdict", "rules": [{"id", "text", "state",
"strength", "demoted", ...}], "findings": [{"kind", ...}], ...}}`). A JSON list of those objects
is read too. This is what Braintrust and Phoenix call diff mode; `ctxaudit check --compare` and
the compare page both call `compare()`.

A rule's standing, best first: retained, retained but demoted, weakened, missing, no result (the
rule is not in that run's report). A case's verdict, best first: pass, no_rules, fail (seed §4.6
fail closed: a run that checked nothing vouches for less than one that passed). A **regression** is
a rule or verdict that moved down, a case of the baseline the candidate did not run, or a case only
the candidate ran whose verdict is not pass. Finding kinds that appeared or went away are listed
as other changes and never count as regressions alone (a fail verdict they cause does).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Direction = Literal["worse", "better", "same"]
CaseStatus = Literal["regressed", "improved", "changed", "unchanged"]

# Standings, best (highest) first; see the module docstring.
RULE_STANDING = {"retained": 4, "retained (demoted)": 3, "weakened": 2, "missing": 1, "no result": 0}
VERDICT_STANDING = {"pass": 2, "no_rules": 1, "fail": 0}
NO_RESULT = "no result"
NOT_RUN = "not run"


class CompareInputError(ValueError):
    """A results file that is not `ctxaudit check --json` output; the message names line and field."""


@dataclass(frozen=True, slots=True)
class RuleRun:
    """One rule's outcome in one run."""

    rule_id: str
    text: str
    standing: str  # a RULE_STANDING key
    strength: float | None


@dataclass(frozen=True, slots=True)
class CaseRun:
    """One case's outcome in one run: its verdict, rules by id, and how many findings of each kind."""

    case_id: str
    verdict: str
    rules: Mapping[str, RuleRun]
    finding_kinds: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class RuleChange:
    """One rule of one case in both runs. `before`/`after` are RULE_STANDING keys."""

    rule_id: str
    text: str
    before: str
    after: str
    strength_before: float | None
    strength_after: float | None

    @property
    def direction(self) -> Direction:
        b, a = RULE_STANDING[self.before], RULE_STANDING[self.after]
        return "worse" if a < b else "better" if a > b else "same"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.rule_id,
            "text": self.text,
            "baseline": self.before,
            "candidate": self.after,
            "strength_baseline": self.strength_before,
            "strength_candidate": self.strength_after,
            "direction": self.direction,
        }


@dataclass(frozen=True, slots=True)
class CaseComparison:
    """One case in both runs. A verdict is NOT_RUN when that run has no such case."""

    case_id: str
    verdict_before: str
    verdict_after: str
    rules: tuple[RuleChange, ...]  # worse first, then better, then unchanged; by rule id within
    findings_added: tuple[str, ...] = ()  # kinds with more findings in the candidate
    findings_removed: tuple[str, ...] = ()  # kinds with fewer

    @property
    def regressions(self) -> list[str]:
        """What got worse, one sentence each (empty = no regression in this case)."""
        out = []
        if self.verdict_after == NOT_RUN:
            out.append(f"case {self.case_id} is in the baseline but the candidate did not run it")
        elif self.verdict_before == NOT_RUN:
            if self.verdict_after != "pass":
                out.append(
                    f"case {self.case_id} is new in the candidate and its verdict is {self.verdict_after}"
                )
        elif VERDICT_STANDING[self.verdict_after] < VERDICT_STANDING[self.verdict_before]:
            out.append(f"verdict {self.verdict_before} → {self.verdict_after}")
        out += [
            f"rule {r.rule_id} {r.before} → {r.after}: {r.text}" for r in self.rules if r.direction == "worse"
        ]
        return out

    @property
    def improvements(self) -> list[str]:
        """What got better, one sentence each."""
        out = []
        if (
            NOT_RUN not in (self.verdict_before, self.verdict_after)
            and VERDICT_STANDING[self.verdict_after] > VERDICT_STANDING[self.verdict_before]
        ):
            out.append(f"verdict {self.verdict_before} → {self.verdict_after}")
        out += [
            f"rule {r.rule_id} {r.before} → {r.after}: {r.text}"
            for r in self.rules
            if r.direction == "better"
        ]
        return out

    @property
    def status(self) -> CaseStatus:
        if self.regressions:
            return "regressed"
        if self.improvements:
            return "improved"
        if (
            self.findings_added
            or self.findings_removed
            or NOT_RUN in (self.verdict_before, self.verdict_after)
        ):
            return "changed"
        return "unchanged"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.case_id,
            "status": self.status,
            "verdict_baseline": self.verdict_before,
            "verdict_candidate": self.verdict_after,
            "regressions": self.regressions,
            "improvements": self.improvements,
            "rules": [r.to_dict() for r in self.rules],
            "findings_added": list(self.findings_added),
            "findings_removed": list(self.findings_removed),
        }


_STATUS_ORDER: dict[str, int] = {"regressed": 0, "improved": 1, "changed": 2, "unchanged": 3}
_DIRECTION_ORDER = {"worse": 0, "better": 1, "same": 2}


@dataclass(frozen=True, slots=True)
class Comparison:
    """Every case of either run, regressed cases first, then improved, changed, unchanged."""

    cases: tuple[CaseComparison, ...]
    counts: Mapping[str, int] = field(default_factory=dict)  # status -> number of cases

    @property
    def regressed(self) -> bool:
        """True when any case regressed: `ctxaudit check --compare` exits 1."""
        return any(c.status == "regressed" for c in self.cases)

    def to_dict(self) -> dict[str, Any]:
        return {
            "regressed": self.regressed,
            "counts": dict(self.counts),
            "cases": [c.to_dict() for c in self.cases],
        }


# --- reading results --------------------------------------------------------------------------


def _rule_run(raw: Any, where: str) -> RuleRun:
    if not isinstance(raw, dict):
        raise CompareInputError(f"{where}: must be an object")
    rid, state = raw.get("id"), raw.get("state")
    if not isinstance(rid, str) or not rid:
        raise CompareInputError(f"{where}.id: must be a non-empty string")
    if state not in ("retained", "weakened", "missing"):
        raise CompareInputError(f"{where}.state: must be retained, weakened or missing")
    standing = "retained (demoted)" if state == "retained" and raw.get("demoted") is True else str(state)
    strength = raw.get("strength")
    text = raw.get("text")
    return RuleRun(
        rule_id=rid,
        text=text if isinstance(text, str) else "",
        standing=standing,
        strength=float(strength)
        if isinstance(strength, (int, float)) and not isinstance(strength, bool)
        else None,
    )


def case_run_from_dict(data: Any, where: str) -> CaseRun:
    """One `ctxaudit check --json` line as a CaseRun. Raises CompareInputError naming `where` and the field."""
    if not isinstance(data, dict):
        raise CompareInputError(f"{where}: must be a JSON object (one `ctxaudit check --json` line)")
    case_id = data.get("id")
    if not isinstance(case_id, str) or not case_id:
        raise CompareInputError(f"{where}: id: must be a non-empty string")
    report = data.get("report")
    if not isinstance(report, dict):
        raise CompareInputError(f"{where} (case {case_id}): report: must be an object")
    verdict = report.get("verdict")
    if verdict not in VERDICT_STANDING:
        raise CompareInputError(f"{where} (case {case_id}): report.verdict: must be pass, fail or no_rules")
    raw_rules = report.get("rules", [])
    if not isinstance(raw_rules, list):
        raise CompareInputError(f"{where} (case {case_id}): report.rules: must be a list")
    rules: dict[str, RuleRun] = {}
    for i, raw in enumerate(raw_rules):
        rule = _rule_run(raw, f"{where} (case {case_id}): report.rules[{i}]")
        if rule.rule_id in rules:
            raise CompareInputError(
                f"{where} (case {case_id}): report.rules[{i}].id {rule.rule_id!r} is used twice"
            )
        rules[rule.rule_id] = rule
    raw_findings = report.get("findings", [])
    if not isinstance(raw_findings, list):
        raise CompareInputError(f"{where} (case {case_id}): report.findings: must be a list")
    kinds: Counter[str] = Counter()
    for i, f in enumerate(raw_findings):
        if not isinstance(f, dict) or not isinstance(f.get("kind"), str):
            raise CompareInputError(f"{where} (case {case_id}): report.findings[{i}].kind: must be a string")
        kinds[f["kind"]] += 1
    return CaseRun(case_id=case_id, verdict=str(verdict), rules=rules, finding_kinds=dict(kinds))


def read_results(text: str, where: str = "results") -> dict[str, CaseRun]:
    """Parse `ctxaudit check --json` output (JSON lines, or one JSON list of the same objects).

    Returns {case id: CaseRun} in file order. Raises CompareInputError naming `where`, the line
    (or list index) and the field: invalid JSON, a missing field, a case id used twice, no cases.
    """
    items: list[tuple[str, Any]] = []
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise CompareInputError(
                f"{where}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from None
        items = [(f"{where}[{i}]", obj) for i, obj in enumerate(data)]
    else:
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append((f"{where} line {n}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise CompareInputError(
                    f"{where} line {n}: invalid JSON at column {exc.colno}: {exc.msg}"
                ) from None
    runs: dict[str, CaseRun] = {}
    for origin, obj in items:
        run = case_run_from_dict(obj, origin)
        if run.case_id in runs:
            raise CompareInputError(f"{origin}: case id {run.case_id!r} is used twice")
        runs[run.case_id] = run
    if not runs:
        raise CompareInputError(f"{where}: contains no cases (expected `ctxaudit check --json` output)")
    return runs


# --- comparing --------------------------------------------------------------------------------


def _compare_case(case_id: str, before: CaseRun | None, after: CaseRun | None) -> CaseComparison:
    b_rules = before.rules if before else {}
    a_rules = after.rules if after else {}
    changes = []
    # A case missing from one run has no rule outcomes to compare: its verdict says it all.
    if before is not None and after is not None:
        for rid in dict.fromkeys([*b_rules, *a_rules]):
            b, a = b_rules.get(rid), a_rules.get(rid)
            either = b or a
            changes.append(
                RuleChange(
                    rule_id=rid,
                    text=either.text if either else "",
                    before=b.standing if b else NO_RESULT,
                    after=a.standing if a else NO_RESULT,
                    strength_before=b.strength if b else None,
                    strength_after=a.strength if a else None,
                )
            )
    changes.sort(key=lambda r: (_DIRECTION_ORDER[r.direction], r.rule_id))
    b_kinds = before.finding_kinds if before else {}
    a_kinds = after.finding_kinds if after else {}
    kinds = sorted(set(b_kinds) | set(a_kinds))
    return CaseComparison(
        case_id=case_id,
        verdict_before=before.verdict if before else NOT_RUN,
        verdict_after=after.verdict if after else NOT_RUN,
        rules=tuple(changes),
        findings_added=tuple(k for k in kinds if a_kinds.get(k, 0) > b_kinds.get(k, 0))
        if before and after
        else (),
        findings_removed=tuple(k for k in kinds if a_kinds.get(k, 0) < b_kinds.get(k, 0))
        if before and after
        else (),
    )


def compare(baseline: Mapping[str, CaseRun], candidate: Mapping[str, CaseRun]) -> Comparison:
    """Compare a candidate run with a baseline run of the same set, case by case and rule by rule.

    Cases are matched by id. Returns every case of either run, regressed first (then improved,
    changed, unchanged; baseline order within each group). Pure: no I/O.
    """
    ids = list(dict.fromkeys([*baseline, *candidate]))
    cases = [_compare_case(cid, baseline.get(cid), candidate.get(cid)) for cid in ids]
    cases.sort(key=lambda c: _STATUS_ORDER[c.status])  # stable: keeps file order within a group
    counts: Counter[str] = Counter(c.status for c in cases)
    return Comparison(cases=tuple(cases), counts={s: counts.get(s, 0) for s in _STATUS_ORDER})


def format_comparison(comparison: Comparison, *, show_unchanged: bool = False) -> str:
    """The comparison as plain text for a terminal/CI log: a summary line, then one block per case
    that changed (regressions first), listing regressions (`-`), improvements (`+`) and other
    changes (`~`)."""
    c = comparison.counts
    lines = [
        f"compare: {len(comparison.cases)} case(s): {c.get('regressed', 0)} regressed, "
        f"{c.get('improved', 0)} improved, {c.get('changed', 0)} changed, {c.get('unchanged', 0)} unchanged"
    ]
    for case in comparison.cases:
        if case.status == "unchanged" and not show_unchanged:
            continue
        lines.append(
            f"{case.status.upper()} {case.case_id} (verdict {case.verdict_before} → {case.verdict_after})"
        )
        lines += [f"  - {r}" for r in case.regressions]
        lines += [f"  + {r}" for r in case.improvements]
        lines += [f"  ~ new finding kind: {k}" for k in case.findings_added]
        lines += [f"  ~ finding kind gone: {k}" for k in case.findings_removed]
    return "\n".join(lines) + "\n"


def case_runs(items: Iterable[Mapping[str, Any]], where: str = "current run") -> dict[str, CaseRun]:
    """CaseRuns from already-built `--json` objects (the CLI's current run), read as a file would be."""
    runs: dict[str, CaseRun] = {}
    for i, obj in enumerate(items):
        run = case_run_from_dict(obj, f"{where}[{i}]")
        runs[run.case_id] = run
    return runs
