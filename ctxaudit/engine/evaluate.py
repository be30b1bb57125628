"""Measure the checks against labelled cases: precision and recall per check, and the cases that disagree.

    python -m ctxaudit.engine.evaluate PATH... [--min-precision 0.9] [--min-recall 0.9]
                                       [--threshold CHECK=P,R ...] [--exact] [--json]

PATH: a case file or a folder of them. Accepted: JSON Lines of cases in the format of
../shared/samples/README.md (`{"id", "strategy", "rules", "before", "after", "expected"}`, plus the
optional keys `format`, `metadata`), a JSON list of such cases, and a session file
(`{"session", "rules", "events": [{"sequence", "before", "after", "expected"}], "expected"}`, like
seed_decay_session.json: a session's rules stay in force for all its events).

Checks scored (a case is scored by a check only when its `expected` has the key):
- retention (`rules`): per rule, positive = not retained; predicted positive = weakened or missing.
- weakened / missing (`rules`): per rule, one state against the allowed states (a list allows any).
- demotion (`demoted_rules`): per rule of the case, positive = listed.
- summary_elevated: per case.
- claims_promoted: per phrase; an expected phrase is found when the after-evidence quote of a
  claim_promoted/injection_promoted finding contains it (after normalising); a promoted finding
  matching no expected phrase is a false positive.
- verdict: per case, positive = "fail".
- findings:<kind> (`findings_kinds`: kinds that must be reported; `absent_kinds`: kinds that
  must not be) — see tests/cases/README.md.
- decay (session `expected`): `strength_non_increasing` and `first_missing_sequence` hold.

Exit status: 0 when every check meets its thresholds (a check without positives has no precision
or recall and is not held to them), 1 otherwise, 2 on unreadable input. `--exact` also fails on
any disagreement.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxaudit.engine.formats import ContextFormatError, parse_context
from ctxaudit.engine.language.clauses import keys
from ctxaudit.engine.language.normalize import normalize
from ctxaudit.engine.runner import run_checks
from ctxaudit.engine.tokens import CharCounter
from ctxaudit.engine.types import AuditReport, ContextPair, Rule, Severity

PROMOTED_KINDS = ("claim_promoted", "injection_promoted")


class CaseError(ValueError):
    """A case file cannot be read; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class Case:
    """One labelled compression event. `session`/`sequence` are set for events of a session file."""

    id: str
    origin: str
    pair: ContextPair
    expected: dict[str, Any]
    session: str | None = None
    sequence: int | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """Session-level expectations of a session file, over its cases (in sequence order)."""

    id: str
    origin: str
    expected: dict[str, Any]
    case_ids: tuple[str, ...]


@dataclass(slots=True)
class Score:
    """Confusion counts of one check, and the disagreements as readable lines."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    disagreements: list[str] = field(default_factory=list)

    def add(self, expected: bool, predicted: bool, where: str) -> None:
        if expected and predicted:
            self.tp += 1
        elif expected:
            self.fn += 1
            self.disagreements.append(f"missed: {where}")
        elif predicted:
            self.fp += 1
            self.disagreements.append(f"false alarm: {where}")
        else:
            self.tn += 1

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn


# --- loading --------------------------------------------------------------------------------------


def _rules(raw: Any, where: str) -> tuple[Rule, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise CaseError(f"{where}: rules must be a list")
    out = []
    for r in raw:
        if not isinstance(r, dict) or not isinstance(r.get("id"), str) or not isinstance(r.get("text"), str):
            raise CaseError(f"{where}: each rule needs a string id and text")
        out.append(Rule(r["id"], r["text"], Severity(r.get("severity", "high"))))
    return tuple(out)


def _pair(raw: dict[str, Any], rules: tuple[Rule, ...], where: str) -> ContextPair:
    fmt = raw.get("format", "auto")
    try:
        before = parse_context(raw.get("before"), format=fmt, field="before")
        after = parse_context(raw.get("after"), format=fmt, field="after")
    except ContextFormatError as exc:
        raise CaseError(f"{where}: {exc}") from exc
    meta = raw.get("metadata") or {}
    return ContextPair(before, after, rules, raw.get("strategy"), meta if isinstance(meta, dict) else {})


def _case(raw: Any, origin: str) -> Case:
    if not isinstance(raw, dict):
        raise CaseError(f"{origin}: a case must be an object")
    cid = str(raw.get("id") or origin)
    expected = raw.get("expected") or {}
    if not isinstance(expected, dict):
        raise CaseError(f"{origin}: expected must be an object")
    return Case(cid, origin, _pair(raw, _rules(raw.get("rules"), origin), origin), expected)


def _session(raw: dict[str, Any], origin: str) -> tuple[list[Case], Session]:
    sid = str(raw.get("session") or raw.get("id") or origin)
    rules = _rules(raw.get("rules"), origin)
    cases = []
    events = raw.get("events")
    if not isinstance(events, list):
        raise CaseError(f"{origin}: events must be a list")
    for n, ev in enumerate(sorted(events, key=lambda e: e.get("sequence", 0) if isinstance(e, dict) else 0)):
        where = f"{origin} events[{n}]"
        if not isinstance(ev, dict):
            raise CaseError(f"{where}: an event must be an object")
        seq = ev.get("sequence", n + 1)
        ev_rules = _rules(ev["rules"], where) if "rules" in ev else rules
        expected = ev.get("expected") or {}
        cases.append(Case(f"{sid}#{seq}", where, _pair(ev, ev_rules, where), expected, sid, seq))
    return cases, Session(sid, origin, raw.get("expected") or {}, tuple(c.id for c in cases))


def _files(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(q for q in p.iterdir() if q.suffix in (".jsonl", ".json") and q.is_file())
        elif p.is_file():
            out.append(p)
        else:
            raise CaseError(f"{p}: no such file or directory")
    return out


def load(paths: Iterable[str | Path]) -> tuple[list[Case], list[Session]]:
    """Cases and sessions from files or folders (*.jsonl, *.json). Raises CaseError."""
    cases: list[Case] = []
    sessions: list[Session] = []
    for path in _files(paths):
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            for lineno, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    raw = json.loads(line)
                except ValueError as exc:
                    raise CaseError(f"{path}:{lineno}: not JSON ({exc})") from exc
                cases.append(_case(raw, f"{path.name}:{lineno}"))
            continue
        try:
            raw = json.loads(text)
        except ValueError as exc:
            raise CaseError(f"{path}: not JSON ({exc})") from exc
        if isinstance(raw, dict) and "events" in raw:
            got, session = _session(raw, path.name)
            cases += got
            sessions.append(session)
        elif isinstance(raw, list):
            cases += [_case(r, f"{path.name}[{i}]") for i, r in enumerate(raw)]
        elif isinstance(raw, dict) and "before" in raw:
            cases.append(_case(raw, path.name))
        else:
            raise CaseError(f"{path}: neither a case, a list of cases nor a session with events")
    return cases, sessions


# --- scoring --------------------------------------------------------------------------------------


def _allowed(value: Any) -> set[str]:
    return (
        {value} if isinstance(value, str) else {str(v) for v in value} if isinstance(value, list) else set()
    )


def _phrase_found(phrase: str, quote: str) -> bool:
    p, q = normalize(phrase), normalize(quote)
    if p and (p in q or (len(q) >= 4 and q in p)):
        return True
    pk = keys(phrase)
    return bool(pk) and len(pk & keys(quote)) / len(pk) >= 0.8


def score_case(case: Case, report: AuditReport, scores: dict[str, Score]) -> None:
    """Add one case's agreements and disagreements to `scores` (check name → Score)."""
    exp = case.expected
    results = {r.rule_id: r for r in report.rules}
    kinds = [f.kind for f in report.findings]
    if isinstance(exp.get("rules"), dict):
        for rid, want in exp["rules"].items():
            allowed = _allowed(want)
            r = results.get(rid)
            got = r.state.value if r else "absent"
            where = f"{case.id} {rid}: expected {'/'.join(sorted(allowed))}, got {got}"
            scores["retention"].add("retained" not in allowed, got != "retained", where)
            for state in ("weakened", "missing"):
                if got == state or allowed == {state}:
                    scores[state].add(state in allowed, got == state, where)
    if isinstance(exp.get("demoted_rules"), list):
        want_demoted = set(exp["demoted_rules"])
        ids = set(results) | want_demoted | {r.id for r in case.pair.rules}
        for rid in sorted(ids):
            demoted = bool(results.get(rid) and results[rid].demoted)
            scores["demotion"].add(
                rid in want_demoted,
                demoted,
                f"{case.id} {rid}: demoted expected {rid in want_demoted}, demoted {demoted}",
            )
    if "summary_elevated" in exp:
        want = bool(exp["summary_elevated"])
        scores["summary_elevated"].add(
            want, report.summary_elevated, f"{case.id}: expected {want}, demoted {report.summary_elevated}"
        )
    if isinstance(exp.get("claims_promoted"), list):
        quotes = [
            (f.kind, f.evidence[-1].quote if f.evidence else "")
            for f in report.findings
            if f.kind in PROMOTED_KINDS
        ]
        for phrase in exp["claims_promoted"]:
            found = any(_phrase_found(phrase, q) for _, q in quotes)
            scores["claims_promoted"].add(
                True,
                found,
                f"{case.id}: “{phrase}” "
                + ("" if found else f"not flagged (flagged: {[q for _, q in quotes]})"),
            )
        for kind, q in quotes:
            if not any(_phrase_found(p, q) for p in exp["claims_promoted"]):
                scores["claims_promoted"].add(
                    False, True, f"{case.id}: {kind} “{q}” is not an expected phrase"
                )
        if not exp["claims_promoted"] and not quotes:
            scores["claims_promoted"].add(False, False, case.id)
    if exp.get("verdict") in ("pass", "fail"):
        want_fail = exp["verdict"] == "fail"
        detail = ", ".join(
            sorted({k for f in report.findings if f.severity.rank >= Severity.MEDIUM.rank for k in [f.kind]})
        )
        scores["verdict"].add(
            want_fail,
            report.verdict == "fail",
            f"{case.id}: expected {exp['verdict']}, demoted {report.verdict} ({detail or 'no failing findings'})",
        )
    for kind in exp.get("findings_kinds") or ():
        scores[f"findings:{kind}"].add(True, kind in kinds, f"{case.id}: {kind} expected")
    for kind in exp.get("absent_kinds") or ():
        scores[f"findings:{kind}"].add(False, kind in kinds, f"{case.id}: {kind} reported")


def score_session(
    session: Session, reports: dict[str, AuditReport], cases: dict[str, Case], scores: dict[str, Score]
) -> None:
    """Session-level decay expectations (seed §3.5): strengths never rise; first missing at a sequence."""
    exp = session.expected
    for rid in exp.get("strength_non_increasing") or ():
        strengths = [
            next((r.strength for r in reports[c].rules if r.rule_id == rid), 0.0)
            for c in session.case_ids
            if c in reports
        ]
        ok = all(b <= a + 1e-9 for a, b in zip(strengths, strengths[1:], strict=False))
        scores["decay"].add(
            True,
            ok,
            f"{session.id} {rid}: strength non-increasing expected, got {[round(s, 2) for s in strengths]}",
        )
    for rid, allowed in (exp.get("first_missing_sequence") or {}).items():
        first = next(
            (
                cases[c].sequence
                for c in session.case_ids
                if c in reports
                and any(r.rule_id == rid and r.state.value == "missing" for r in reports[c].rules)
            ),
            None,
        )
        want = set(allowed) if isinstance(allowed, list) else {allowed}
        scores["decay"].add(
            True, first in want, f"{session.id} {rid}: first missing at {sorted(want)}, got {first}"
        )


def evaluate(cases: Sequence[Case], sessions: Sequence[Session] = ()) -> dict[str, Score]:
    """Run the checks on every case and score them. Token counts use the chars/4 stand-in."""
    scores: dict[str, Score] = defaultdict(Score)
    reports: dict[str, AuditReport] = {}
    counter = CharCounter()
    for case in cases:
        report = run_checks(case.pair, counter=counter)
        reports[case.id] = report
        score_case(case, report, scores)
    by_id = {c.id: c for c in cases}
    for s in sessions:
        score_session(s, reports, by_id, scores)
    return dict(sorted(scores.items()))


# --- command line ---------------------------------------------------------------------------------


def _fmt(x: float | None) -> str:
    return "  n/a" if x is None else f"{x:5.3f}"


def parse_thresholds(items: Sequence[str]) -> dict[str, tuple[float, float]]:
    """["claims_promoted=0.9,0.9", "verdict=1"] → {"claims_promoted": (0.9, 0.9), "verdict": (1.0, 1.0)}."""
    out = {}
    for item in items:
        name, _, values = item.partition("=")
        parts = [float(v) for v in values.split(",") if v.strip()]
        if not name or not parts or len(parts) > 2:
            raise ValueError(f"--threshold {item!r}: expected CHECK=PRECISION[,RECALL]")
        out[name.strip()] = (parts[0], parts[-1])
    return out


def below(
    scores: dict[str, Score], min_p: float, min_r: float, per_check: dict[str, tuple[float, float]]
) -> list[str]:
    """Names of checks under their thresholds (per-check ones override the global pair)."""
    out = []
    for name, s in scores.items():
        p_min, r_min = per_check.get(name, per_check.get(name.split(":")[0] + ":*", (min_p, min_r)))
        if (s.precision is not None and s.precision < p_min) or (s.recall is not None and s.recall < r_min):
            out.append(name)
    return out


def main(argv: Sequence[str] | None = None, out: Any = None) -> int:
    """The command line (see the module docstring). Returns the exit status."""
    out = out or sys.stdout
    ap = argparse.ArgumentParser(
        prog="python -m ctxaudit.engine.evaluate", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("paths", nargs="+", help="case files (.jsonl/.json) or folders of them")
    ap.add_argument("--min-precision", type=float, default=0.0)
    ap.add_argument("--min-recall", type=float, default=0.0)
    ap.add_argument(
        "--threshold",
        action="append",
        default=[],
        metavar="CHECK=P[,R]",
        help="per-check thresholds; findings:* matches every findings:<kind>",
    )
    ap.add_argument("--exact", action="store_true", help="fail on any disagreement")
    ap.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = ap.parse_args(argv)
    try:
        per_check = parse_thresholds(args.threshold)
        cases, sessions = load(args.paths)
    except (CaseError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    scores = evaluate(cases, sessions)
    failing = below(scores, args.min_precision, args.min_recall, per_check)
    disagreeing = [n for n, s in scores.items() if s.disagreements]
    if args.json:
        json.dump(
            {
                "cases": len(cases),
                "checks": {
                    n: {
                        "tp": s.tp,
                        "fp": s.fp,
                        "fn": s.fn,
                        "tn": s.tn,
                        "precision": s.precision,
                        "recall": s.recall,
                        "disagreements": s.disagreements,
                    }
                    for n, s in scores.items()
                },
                "below_threshold": failing,
            },
            out,
            ensure_ascii=False,
            indent=1,
        )
        out.write("\n")
    else:
        out.write(f"{len(cases)} cases, {len(sessions)} sessions\n")
        out.write(
            f"{'check':34} {'n':>5} {'tp':>4} {'fp':>4} {'fn':>4} {'tn':>4} {'prec':>6} {'recall':>6}\n"
        )
        for name, s in scores.items():
            flag = "  << below threshold" if name in failing else ""
            out.write(
                f"{name:34} {s.n:5d} {s.tp:4d} {s.fp:4d} {s.fn:4d} {s.tn:4d} {_fmt(s.precision):>6} {_fmt(s.recall):>6}{flag}\n"
            )
        for name in disagreeing:
            out.write(f"\n{name} — cases that disagree:\n")
            for line in scores[name].disagreements:
                out.write(f"  {line}\n")
    if failing:
        print(f"below threshold: {', '.join(failing)}", file=sys.stderr)
        return 1
    if args.exact and disagreeing:
        print(f"disagreements in: {', '.join(disagreeing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
