"""Measure the checks against labelled cases: precision and recall per check, and the cases that disagree.

    python -m ctxaudit.engine.evaluate PATH... [--min-precision 0.9] [--min-recall 0.9]
                                       [--threshold CHECK=P,R ...] [--kind-threshold KIND=P,R[,A] ...]
                                       [--exact] [--json]

PATH: a case file or a folder of them. Accepted: JSON Lines of cases in the format of
../shared/samples/README.md (`{"id", "strategy", "rules", "before", "after", "expected"}`, plus the
optional keys `format`, `metadata`, `kind`), a JSON list of such cases, and a session file
(`{"session", "rules", "events": [{"sequence", "before", "after", "expected"}], "expected"}`, like
seed_decay_session.json: a session's rules stay in force for all its events). `kind` names the
fault a case reproduces (the kinds of ../shared/cases/bug_cases.jsonl, plus `faithful_control`);
a case without one is scored under `unlabelled`. A session's events take the event's `kind`, else
the session's.

Checks scored (a case is scored by a check only when its `expected` has the key):
- retention (`rules`): per rule, positive = not retained; predicted positive = weakened or missing.
- weakened / missing (`rules`): per rule, one state against the allowed states (a list allows any).
- demotion (`demoted_rules`): per rule of the case, positive = listed.
- summary_elevated: per case.
- claims_promoted: per phrase; an expected phrase is met by any finding whose kind starts with
  `claim_` or `injection_` (claim_promoted, claim_fabricated, injection_promoted, …) with an
  after-side evidence quote that contains it or that it contains (after normalising; issue 12 §1);
  such a finding matching no expected phrase is a false positive.
- verdict: per case, positive = "fail" (`expected.verdict` is "pass", "fail" or "no_rules", or a
  list of those that allows any of them, e.g. ["pass", "no_rules"]).
- no_rules: per case with an expected verdict, positive = "no_rules" (no rule in force: issue 12 §6).
  A verdict list scores each of these two checks only when the list decides it.
- findings:<kind> (`findings_kinds`: kinds that must be reported; `absent_kinds`: kinds that
  must not be) — see tests/cases/README.md.
- decay (session `expected`): `strength_non_increasing` and `first_missing_sequence` hold.

Per kind: every expectation of the kind's cases, over all the checks above, pooled into one
confusion count (a rule expectation counts once for `retention` and once for `weakened`/`missing`
when those score it), with its precision, recall and accuracy (share of expectations met), and
how many of the kind's cases meet every expectation. `--kind-threshold KIND=P[,R[,A]]` holds a kind
to a precision, recall and accuracy floor (one value sets P and R; an empty field holds nothing, so
`faithful_control=,,0.9` floors only the accuracy of a kind that has no positives); `*=...` applies
to every kind not named.

Exit status: 0 when every check and kind meets its thresholds (a precision or recall that is
undefined, for want of positives, is not held to them), 1 otherwise, 2 on unreadable input.
`--exact` also fails on any disagreement.
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

from ctxaudit.engine import embeddings
from ctxaudit.engine.formats import ContextFormatError, parse_context
from ctxaudit.engine.language.clauses import keys
from ctxaudit.engine.language.normalize import normalize
from ctxaudit.engine.runner import run_checks
from ctxaudit.engine.tokens import CharCounter
from ctxaudit.engine.types import AuditReport, ContextPair, Rule, Severity

# A finding of these kind prefixes can meet an expected `claims_promoted` phrase (issue 12 §1).
CLAIM_KIND_PREFIXES = ("claim_", "injection_")
VERDICTS = ("pass", "fail", "no_rules")
UNLABELLED = "unlabelled"


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
    kind: str = UNLABELLED


@dataclass(frozen=True, slots=True)
class Session:
    """Session-level expectations of a session file, over its cases (in sequence order)."""

    id: str
    origin: str
    expected: dict[str, Any]
    case_ids: tuple[str, ...]
    kind: str = UNLABELLED


@dataclass(slots=True)
class Score:
    """Confusion counts of one check, and the disagreements as readable lines."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    disagreements: list[str] = field(default_factory=list)

    def merge(self, other: Score) -> None:
        """Add `other`'s counts and disagreements to this score."""
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn
        self.tn += other.tn
        self.disagreements += other.disagreements

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
    def accuracy(self) -> float | None:
        """Share of expectations met, (tp + tn) / n; None when nothing was scored."""
        return (self.tp + self.tn) / self.n if self.n else None

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn


@dataclass(slots=True)
class KindScore:
    """One kind's cases: every expectation pooled (`total`), per check (`checks`), and the ids of
    the cases with at least one disagreement."""

    cases: int = 0
    total: Score = field(default_factory=Score)
    checks: dict[str, Score] = field(default_factory=lambda: defaultdict(Score))
    failing_cases: list[str] = field(default_factory=list)

    @property
    def cases_right(self) -> int:
        return self.cases - len(self.failing_cases)


@dataclass(slots=True)
class Evaluation:
    """Scores per check (`checks`, check name → Score) and per kind (`kinds`, kind → KindScore)."""

    checks: dict[str, Score]
    kinds: dict[str, KindScore]


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
    return Case(
        cid,
        origin,
        _pair(raw, _rules(raw.get("rules"), origin), origin),
        expected,
        kind=_kind(raw.get("kind"), UNLABELLED, origin),
    )


def _kind(raw: Any, default: str, where: str) -> str:
    if raw is None:
        return default
    if not isinstance(raw, str) or not raw.strip():
        raise CaseError(f"{where}: kind must be a non-empty string")
    return raw.strip()


def session_events(raw: dict[str, Any], origin: str) -> list[tuple[str, int, str, dict[str, Any]]]:
    """The events of a session file (`{"session", "rules", "events": [...]}`) in sequence order,
    each as (case id "<session>#<sequence>", sequence, where, event), the event carrying the
    session's rules when it has none of its own. Raises CaseError when events is no list of objects."""
    sid = str(raw.get("session") or raw.get("id") or origin)
    events = raw.get("events")
    if not isinstance(events, list):
        raise CaseError(f"{origin}: events must be a list")
    out = []
    for n, ev in enumerate(sorted(events, key=lambda e: e.get("sequence", 0) if isinstance(e, dict) else 0)):
        where = f"{origin} events[{n}]"
        if not isinstance(ev, dict):
            raise CaseError(f"{where}: an event must be an object")
        seq = ev.get("sequence", n + 1)
        out.append((f"{sid}#{seq}", seq, where, ev if "rules" in ev else {**ev, "rules": raw.get("rules")}))
    return out


def _session(raw: dict[str, Any], origin: str) -> tuple[list[Case], Session]:
    sid = str(raw.get("session") or raw.get("id") or origin)
    _rules(raw.get("rules"), origin)  # the session's own rules are checked even when every event has its own
    session_kind = _kind(raw.get("kind"), UNLABELLED, origin)
    cases = [
        Case(
            cid,
            where,
            _pair(ev, _rules(ev["rules"], where), where),
            ev.get("expected") or {},
            sid,
            seq,
            _kind(ev.get("kind"), session_kind, where),
        )
        for cid, seq, where, ev in session_events(raw, origin)
    ]
    return cases, Session(sid, origin, raw.get("expected") or {}, tuple(c.id for c in cases), session_kind)


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


def is_claim_kind(kind: str) -> bool:
    """True for the finding kinds that can meet an expected `claims_promoted` phrase (issue 12 §1)."""
    return kind.startswith(CLAIM_KIND_PREFIXES)


def claim_quotes(report: AuditReport) -> list[tuple[str, str]]:
    """(finding kind, quote) for each claim_*/injection_* finding: its after-side evidence quotes
    joined (a finding may also quote the closest before span, which does not count), or its last
    quote when no span says its side."""
    out = []
    for f in report.findings:
        if not is_claim_kind(f.kind):
            continue
        after = [s.quote for s in f.evidence if s.side == "after"]
        out.append((f.kind, " ".join(after) if after else (f.evidence[-1].quote if f.evidence else "")))
    return out


def phrase_met(phrase: str, report: AuditReport) -> bool:
    """True when a claim_*/injection_* finding of `report` quotes `phrase` (see _phrase_found)."""
    return any(_phrase_found(phrase, q) for _, q in claim_quotes(report))


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
                f"{case.id} {rid}: demoted expected {rid in want_demoted}, got {demoted}",
            )
    if "summary_elevated" in exp:
        want = bool(exp["summary_elevated"])
        scores["summary_elevated"].add(
            want, report.summary_elevated, f"{case.id}: expected {want}, got {report.summary_elevated}"
        )
    if isinstance(exp.get("claims_promoted"), list):
        quotes = claim_quotes(report)
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
    allowed_verdicts = _allowed(exp.get("verdict")) & set(VERDICTS)
    if allowed_verdicts:
        got_verdict: str = report.verdict
        detail = ", ".join(
            sorted({k for f in report.findings if f.severity.rank >= Severity.MEDIUM.rank for k in [f.kind]})
        )
        where = (
            f"{case.id}: expected {'/'.join(sorted(allowed_verdicts))}, got {got_verdict}"
            f" ({detail or 'no failing findings'})"
        )
        # A list allows any of its verdicts: a check is scored only when the list decides it.
        for check, value in (("verdict", "fail"), ("no_rules", "no_rules")):
            if allowed_verdicts == {value} or value not in allowed_verdicts:
                scores[check].add(value in allowed_verdicts, got_verdict == value, where)
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


def _add(ev: Evaluation, kind: str, case_id: str, got: dict[str, Score], count_case: bool = True) -> None:
    ks = ev.kinds.setdefault(kind, KindScore())
    ks.cases += count_case
    for name, sc in got.items():
        ev.checks.setdefault(name, Score()).merge(sc)
        ks.checks[name].merge(sc)
        ks.total.merge(sc)
        if sc.disagreements and case_id not in ks.failing_cases:
            ks.failing_cases.append(case_id)


def run_evaluation(cases: Sequence[Case], sessions: Sequence[Session] = ()) -> Evaluation:
    """Run the checks on every case and score them per check and per kind. Token counts use the
    chars/4 stand-in. A session's decay expectations count under the session's kind (not as a case)."""
    ev = Evaluation({}, {})
    reports: dict[str, AuditReport] = {}
    counter = CharCounter()
    semantic = embeddings.enabled_for("offline")
    for case in cases:
        report = run_checks(case.pair, counter=counter, semantic=semantic)
        reports[case.id] = report
        got: dict[str, Score] = defaultdict(Score)
        score_case(case, report, got)
        _add(ev, case.kind, case.id, got)
    by_id = {c.id: c for c in cases}
    for s in sessions:
        got = defaultdict(Score)
        score_session(s, reports, by_id, got)
        _add(ev, s.kind, s.id, got, count_case=False)
    ev.checks = dict(sorted(ev.checks.items()))
    ev.kinds = dict(sorted(ev.kinds.items()))
    return ev


def evaluate(cases: Sequence[Case], sessions: Sequence[Session] = ()) -> dict[str, Score]:
    """Scores per check (check name → Score) of run_evaluation."""
    return run_evaluation(cases, sessions).checks


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


Floors = tuple[float | None, float | None, float | None]


def parse_kind_thresholds(items: Sequence[str]) -> dict[str, Floors]:
    """Per-kind floors (precision, recall, accuracy); an empty field holds nothing.

    ["drift=0.8,0.7"] → {"drift": (0.8, 0.7, None)}; ["claim_promotion=0.9"] → (0.9, 0.9, None);
    ["faithful_control=,,0.95"] → (None, None, 0.95). Raises ValueError naming the bad item.
    """
    out: dict[str, Floors] = {}
    for item in items:
        name, _, values = item.partition("=")
        fields = values.split(",")
        try:
            parts = [float(v) if v.strip() else None for v in fields]
        except ValueError:
            parts = []
        if not name.strip() or not parts or len(parts) > 3 or all(p is None for p in parts):
            raise ValueError(f"--kind-threshold {item!r}: expected KIND=PRECISION[,RECALL[,ACCURACY]]")
        if len(parts) == 1:
            parts.append(parts[0])
        while len(parts) < 3:
            parts.append(None)
        out[name.strip()] = (parts[0], parts[1], parts[2])
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


def kinds_below(kinds: dict[str, KindScore], floors: dict[str, Floors]) -> list[str]:
    """Kinds under their floors (`*` for kinds not named); a kind named in `floors` that no case has
    is listed too, so a floor cannot silently stop applying when its cases go away."""
    out = []
    for name, ks in kinds.items():
        p_min, r_min, a_min = floors.get(name, floors.get("*", (None, None, None)))
        t = ks.total
        for got, want in ((t.precision, p_min), (t.recall, r_min), (t.accuracy, a_min)):
            if want is not None and got is not None and got < want - 1e-9:
                out.append(name)
                break
    out += [f"{name} (no cases)" for name in floors if name != "*" and name not in kinds]
    return out


def _score_json(s: Score) -> dict[str, Any]:
    return {
        "tp": s.tp,
        "fp": s.fp,
        "fn": s.fn,
        "tn": s.tn,
        "precision": s.precision,
        "recall": s.recall,
        "accuracy": s.accuracy,
    }


def _write_json(ev: Evaluation, n_cases: int, failing: list[str], failing_kinds: list[str], out: Any) -> None:
    json.dump(
        {
            "cases": n_cases,
            "checks": {n: {**_score_json(s), "disagreements": s.disagreements} for n, s in ev.checks.items()},
            "kinds": {
                k: {
                    "cases": ks.cases,
                    "cases_right": ks.cases_right,
                    **_score_json(ks.total),
                    "failing_cases": ks.failing_cases,
                    "checks": {n: _score_json(s) for n, s in sorted(ks.checks.items())},
                }
                for k, ks in ev.kinds.items()
            },
            "below_threshold": failing,
            "kinds_below_threshold": failing_kinds,
        },
        out,
        ensure_ascii=False,
        indent=1,
    )
    out.write("\n")


def _write_text(
    ev: Evaluation, n_cases: int, n_sessions: int, failing: list[str], failing_kinds: list[str], out: Any
) -> None:
    out.write(f"{n_cases} cases, {n_sessions} sessions\n")
    head = f"{'n':>5} {'tp':>4} {'fp':>4} {'fn':>4} {'tn':>4} {'prec':>6} {'recall':>6}"
    out.write(f"{'check':34} {head}\n")
    for name, s in ev.checks.items():
        flag = "  << below threshold" if name in failing else ""
        out.write(
            f"{name:34} {s.n:5d} {s.tp:4d} {s.fp:4d} {s.fn:4d} {s.tn:4d} {_fmt(s.precision):>6} {_fmt(s.recall):>6}{flag}\n"
        )
    out.write(f"\n{'kind':34} {'cases':>5} {'right':>5} {head} {'acc':>6}\n")
    for name, ks in ev.kinds.items():
        t = ks.total
        flag = "  << below threshold" if name in failing_kinds else ""
        out.write(
            f"{name:34} {ks.cases:5d} {ks.cases_right:5d} {t.n:5d} {t.tp:4d} {t.fp:4d} {t.fn:4d} {t.tn:4d} "
            f"{_fmt(t.precision):>6} {_fmt(t.recall):>6} {_fmt(t.accuracy):>6}{flag}\n"
        )
    for name, s in ev.checks.items():
        if s.disagreements:
            out.write(f"\n{name} — cases that disagree:\n")
            for line in s.disagreements:
                out.write(f"  {line}\n")
    wrong = {k: ks.failing_cases for k, ks in ev.kinds.items() if ks.failing_cases}
    if wrong:
        out.write("\ncases that disagree, by kind:\n")
        for k, ids in wrong.items():
            out.write(f"  {k} ({len(ids)}): {', '.join(ids)}\n")


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
    ap.add_argument(
        "--kind-threshold",
        action="append",
        default=[],
        metavar="KIND=P[,R[,A]]",
        help="per-kind floors on precision, recall and accuracy of the kind's pooled expectations; "
        "an empty field holds nothing (faithful_control=,,0.9); *=... applies to every kind not named",
    )
    ap.add_argument("--exact", action="store_true", help="fail on any disagreement")
    ap.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = ap.parse_args(argv)
    try:
        per_check = parse_thresholds(args.threshold)
        per_kind = parse_kind_thresholds(args.kind_threshold)
        cases, sessions = load(args.paths)
    except (CaseError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ev = run_evaluation(cases, sessions)
    failing = below(ev.checks, args.min_precision, args.min_recall, per_check)
    failing_kinds = kinds_below(ev.kinds, per_kind)
    disagreeing = [n for n, s in ev.checks.items() if s.disagreements]
    if args.json:
        _write_json(ev, len(cases), failing, failing_kinds, out)
    else:
        _write_text(ev, len(cases), len(sessions), failing, failing_kinds, out)
    if failing or failing_kinds:
        names = failing + [f"kind {k}" for k in failing_kinds]
        print(f"below threshold: {', '.join(names)}", file=sys.stderr)
        return 1
    if args.exact and disagreeing:
        print(f"disagreements in: {', '.join(disagreeing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
