"""`ctxaudit check`: the rule-retention gate for a team's CI (seed §6.6), no server, no database.

    ctxaudit check cases.jsonl [more.jsonl ...] [--junit-xml report.xml]
    ctxaudit check --before before.json --after after.json [--rules rules.json]
    python -m ctxaudit.engine check ...        (same thing)

Input cases use the samples format (shared/samples/README.md), one JSON object per line:
`{"id", "source"?, "strategy"?, "description"?, "rules": [{"id", "text", "severity"?}],
"before": <context>, "after": <context>, "expected"?: {...}}`; a context is any format
`engine.formats.parse_context` reads (OpenAI messages, Anthropic `{system, messages}`, LangChain,
plain text). A `.json` file may hold one case, a list of cases or a session (`{"session", "rules",
"events": [...]}`: each event is a case); a directory means every `*.jsonl`/`*.json` file in it.

Exit codes (seed §4.6: fail closed — a rule the checker cannot vouch for blocks the change):
    0  every case passed
    1  at least one violation: a rule missing, weakened or demoted, or a "fail" verdict
    2  bad input (unreadable file, invalid JSON, a context or rule the engine cannot read)
    3  with --require-rules: a case had no rule in force (verdict "no_rules", issue 12 §6) and
       none failed (1 wins over 3, 2 wins over both). Without it a no_rules case is listed as
       such and does not change the exit code.

With `--compare BASELINE.json` (a saved `ctxaudit check --json` output of the same set, issue
15) the run is compared with that baseline (engine/compare.py) and exit 1 means a regression: a
rule that moved down (retained → demoted/weakened/missing), a verdict that moved down
(pass → no_rules/fail), a baseline case not run now, or a new case that does not pass. Failures the
baseline already had do not fail the build then. 2 (bad input, a baseline included) still wins.

With `--expect`, a case instead passes when the engine's results agree with the case's own
`expected` block (rule states, demoted_rules, summary_elevated, verdict), which is how the seed
cases test the engine itself.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ctxaudit.engine import embeddings
from ctxaudit.engine.compare import (
    CaseRun,
    CompareInputError,
    case_runs,
    compare,
    format_comparison,
    read_results,
)
from ctxaudit.engine.evaluate import CaseError, session_events
from ctxaudit.engine.formats import FORMATS, ContextFormatError, parse_context
from ctxaudit.engine.language.normalize import normalize
from ctxaudit.engine.runner import run_checks
from ctxaudit.engine.tokens import CharCounter, TokenCounter, TokenizerUnavailable, default_counter
from ctxaudit.engine.types import AuditReport, ContextPair, Rule, RuleResult, RuleState, Severity

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_BAD_INPUT = 2
EXIT_NO_RULES = 3

RULE_STATES = tuple(s.value for s in RuleState)
# Findings whose after-side evidence quotes an unverified claim or injected imperative stated as fact.
PROMOTION_KINDS = ("claim_promoted", "injection_promoted")


def is_claim_kind(kind: str) -> bool:
    """A finding that can meet a case's `expected.claims_promoted` phrase (issue 12 §1): every
    claim_* (promoted, fabricated, contradicted, misattributed) and injection_* kind."""
    return kind.startswith(("claim_", "injection_"))


class BadInput(Exception):
    """Input the gate cannot read; the message names the file, line and field."""


@dataclass
class Case:
    """One compression to check: a rule set and the compressor's before/after contexts."""

    id: str
    origin: str  # "file:line", shown in messages
    pair: ContextPair
    expected: dict[str, Any] = field(default_factory=dict)
    description: str = ""


@dataclass
class CaseResult:
    case: Case
    report: AuditReport
    problems: list[str]  # empty = the case passed
    seconds: float

    @property
    def passed(self) -> bool:
        return not self.problems


# --- reading input ---------------------------------------------------------------------------


def _rules_from(raw: Any, where: str) -> tuple[Rule, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise BadInput(f'{where}: rules must be a list of {{"id", "text"}} objects')
    rules = []
    seen: set[str] = set()
    for i, r in enumerate(raw):
        if isinstance(r, str):  # a bare list of rule texts: number them
            r = {"id": f"R{i + 1}", "text": r}
        if not isinstance(r, dict) or not isinstance(r.get("text"), str) or not r["text"].strip():
            raise BadInput(f'{where}: rules[{i}] must be an object with a non-empty "text"')
        rid = r.get("id", f"R{i + 1}")
        if not isinstance(rid, str) or not rid:
            raise BadInput(f"{where}: rules[{i}].id must be a non-empty string")
        if rid in seen:
            raise BadInput(f"{where}: rules[{i}].id {rid!r} is used twice")
        seen.add(rid)
        sev = r.get("severity", "high")
        try:
            severity = Severity(sev)
        except ValueError:
            raise BadInput(
                f"{where}: rules[{i}].severity must be one of low, medium, high, critical"
            ) from None
        rules.append(Rule(id=rid, text=r["text"], severity=severity, source="event"))
    return tuple(rules)


def case_from_dict(data: Any, origin: str, *, fmt: str = "auto") -> Case:
    """Build a Case from one samples-format object. Raises BadInput naming `origin` and the field."""
    if not isinstance(data, dict):
        raise BadInput(f"{origin}: a case must be a JSON object")
    for key in ("before", "after"):
        if key not in data:
            raise BadInput(f"{origin}: {key}: is required")
    case_id = data.get("id", origin)
    if not isinstance(case_id, str) or not case_id:
        raise BadInput(f"{origin}: id must be a non-empty string")
    try:
        before = parse_context(data["before"], format=fmt, field="before")
        after = parse_context(data["after"], format=fmt, field="after")
    except ContextFormatError as exc:
        raise BadInput(f"{origin} (case {case_id}): {exc}") from None
    rules = _rules_from(data.get("rules"), f"{origin} (case {case_id})")
    expected = data.get("expected") or {}
    if not isinstance(expected, dict):
        raise BadInput(f"{origin} (case {case_id}): expected must be an object")
    strategy = data.get("strategy")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise BadInput(f"{origin} (case {case_id}): metadata must be an object")
    # metadata as the API takes it (e.g. {"trusted_tools": [...]}), so --expect judges a case
    # as evaluate_checks and the server do.
    pair = ContextPair(
        before=before,
        after=after,
        rules=rules,
        strategy=strategy if isinstance(strategy, str) else None,
        metadata=metadata,
    )
    return Case(
        id=case_id,
        origin=origin,
        pair=pair,
        expected=expected,
        description=str(data.get("description") or ""),
    )


def _load_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path}: is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def _session_cases(data: dict[str, Any], path: Path, fmt: str) -> list[Case]:
    """The events of a session file (the samples format; evaluate.session_events) as cases named
    "<session>#<sequence>". The session's own expectations (decay over its events) are
    evaluate_checks', not this command's."""
    try:
        events = session_events(data, str(path))
    except CaseError as exc:
        raise BadInput(f"{path}: {exc}") from None
    if not events:
        raise BadInput(f"{path}: a session file with no events")
    return [case_from_dict({**ev, "id": cid}, where, fmt=fmt) for cid, _, where, ev in events]


def read_cases(path: Path, *, fmt: str = "auto") -> list[Case]:
    """Cases from a .jsonl file (one per line), a .json file (a case or a list), or a directory."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".jsonl", ".json"))
        if not files:
            raise BadInput(f"{path}: no .jsonl or .json files in this directory")
        return [c for p in files for c in read_cases(p, fmt=fmt)]
    if not path.exists():
        raise BadInput(f"{path}: no such file")
    if path.suffix == ".json":
        data = _load_json(path)
        if isinstance(data, dict) and isinstance(data.get("events"), list):
            return _session_cases(data, path, fmt)
        items = data if isinstance(data, list) else [data]
        return [
            case_from_dict(item, f"{path}[{i}]" if isinstance(data, list) else str(path), fmt=fmt)
            for i, item in enumerate(items)
        ]
    cases = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BadInput(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path}: is not UTF-8 text") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadInput(f"{path} line {n}: invalid JSON at column {exc.colno}: {exc.msg}") from None
        cases.append(case_from_dict(data, f"{path} line {n}", fmt=fmt))
    if not cases:
        raise BadInput(f"{path}: contains no cases")
    return cases


def _read_context_file(path: Path) -> Any:
    """A context file: JSON (messages list or Anthropic object), else plain text (one user message)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path}: is not UTF-8 text") from None
    stripped = text.lstrip()
    if path.suffix == ".json" or stripped.startswith(("[", "{")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise BadInput(
                f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from None
    return text


def _read_rules_file(path: Path) -> Any:
    """Rules: JSON (`[{"id", "text"}]` or `[text, ...]`) or text, one rule per non-empty line (R1, R2, ...)."""
    raw = _read_context_file(path)
    if isinstance(raw, str):
        return [
            {"id": f"R{i + 1}", "text": line.strip()}
            for i, line in enumerate(x for x in raw.splitlines() if x.strip())
        ]
    if isinstance(raw, dict) and "rules" in raw:
        return raw["rules"]
    return raw


def case_from_files(before: Path, after: Path, rules: Path | None, *, fmt: str = "auto") -> Case:
    data = {
        "id": after.stem,
        "before": _read_context_file(before),
        "after": _read_context_file(after),
        "rules": _read_rules_file(rules) if rules else None,
    }
    return case_from_dict(data, f"{after}", fmt=fmt)


# --- judging ---------------------------------------------------------------------------------


def violations(report: AuditReport) -> list[str]:
    """Why `report` blocks a change (seed §4.6 fail closed): lost, weakened or demoted rules, a fail verdict."""
    out = []
    for r in report.rules:
        if r.state in (RuleState.MISSING, RuleState.WEAKENED):
            out.append(f"rule {r.rule_id} is {r.state.value}: {r.text}")
        if r.demoted:
            out.append(f"rule {r.rule_id} was demoted from the {r.role_before} role to {r.role_after}")
    if report.verdict == "fail":
        kinds = sorted({f.kind for f in report.findings})
        out.append(f"verdict is {report.verdict}" + (f" (findings: {', '.join(kinds)})" if kinds else ""))
    return out


def mismatches(report: AuditReport, expected: dict[str, Any]) -> list[str]:
    """Where `report` disagrees with a case's `expected` block (keys absent there are not asserted):
    rule states (a state or a list of acceptable ones), demoted_rules, summary_elevated,
    claims_promoted (phrases of the after-context) and verdict."""
    out = []
    states = {r.rule_id: r.state.value for r in report.rules}
    for rid, want in (expected.get("rules") or {}).items():
        allowed = want if isinstance(want, list) else [want]
        got = states.get(rid)
        if got not in allowed:
            out.append(f"rule {rid}: expected {' or '.join(allowed)}, got {got or 'no result'}")
    if "demoted_rules" in expected:
        got_demoted = sorted(r.rule_id for r in report.rules if r.demoted)
        if sorted(expected["demoted_rules"]) != got_demoted:
            out.append(f"demoted rules: expected {sorted(expected['demoted_rules'])}, got {got_demoted}")
    if "summary_elevated" in expected and bool(expected["summary_elevated"]) != report.summary_elevated:
        out.append(
            f"summary_elevated: expected {bool(expected['summary_elevated'])}, got {report.summary_elevated}"
        )
    if "claims_promoted" in expected:
        # Each expected phrase must be covered by the after-side quote of a claim_*/injection_* finding.
        quotes = [
            normalize(s.quote)
            for f in report.findings
            if is_claim_kind(f.kind)
            for s in f.evidence
            if s.side == "after"
        ]
        quotes = [q for q in quotes if q]
        for phrase in expected["claims_promoted"]:
            n = normalize(str(phrase))
            if not any(n in q or q in n for q in quotes):
                out.append(f"claims_promoted: {phrase!r} was not flagged")
        if not expected["claims_promoted"] and quotes:
            out.append(f"claims_promoted: expected none, {len(quotes)} flagged")
    if "verdict" in expected:
        # A list allows any of its verdicts (["pass", "no_rules"]), as in evaluate.
        want = expected["verdict"]
        allowed = [str(v) for v in want] if isinstance(want, list) else [str(want)]
        if report.verdict not in allowed:
            out.append(f"verdict: expected {' or '.join(allowed)}, got {report.verdict}")
    return out


def check_case(case: Case, *, counter: TokenCounter, expect: bool = False) -> CaseResult:
    """Run the engine on one case and judge it (gate mode, or `expect` mode against case.expected)."""
    t0 = time.perf_counter()
    report = run_checks(case.pair, counter=counter, semantic=embeddings.enabled_for("offline"))
    seconds = time.perf_counter() - t0
    problems = mismatches(report, case.expected) if expect else violations(report)
    return CaseResult(case, report, problems, seconds)


# --- output ----------------------------------------------------------------------------------


def _rule_state(r: RuleResult) -> str:
    return r.state.value + (" (demoted)" if r.demoted else "")


QUOTE_CHARS = 120


def _short(text: str, limit: int = QUOTE_CHARS) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def case_findings(report: AuditReport) -> list[tuple[str, str]]:
    """[(kind, quote)] of the findings about no single rule (claim_promoted, summary_elevated, ...):
    the quote is the after-side evidence (else any evidence, else the message), one line, <= 120 chars."""
    out = []
    for f in report.findings:
        if f.rule_id is not None:
            continue
        spans = [s for s in f.evidence if s.side == "after" and s.quote.strip()] or [
            s for s in f.evidence if s.quote.strip()
        ]
        out.append((f.kind, _short(f'"{spans[0].quote}"' if spans else f.message)))
    return out


def print_table(results: Sequence[CaseResult], out: TextIO) -> None:
    """One row per rule with that rule's own state (case, rule, state); after each case one summary
    line with the case's result and verdict, and the non-rule findings (kind and quote); then one
    line per failed case with the reasons."""
    rows = [("case", "rule", "state")]
    for res in results:
        rows += [(res.case.id, r.rule_id, _rule_state(r)) for r in res.report.rules] or [
            (res.case.id, "-", "no rules")
        ]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]

    def line(row: tuple[str, str, str]) -> str:
        return f"{row[0].ljust(widths[0])}  {row[1].ljust(widths[1])}  {row[2]}".rstrip() + "\n"

    out.write(line(rows[0]))
    for res in results:
        for r in res.report.rules:
            out.write(line((res.case.id, r.rule_id, _rule_state(r))))
        if not res.report.rules:
            out.write(line((res.case.id, "-", "no rules")))
        out.write(f"  => {res.case.id}: {'ok' if res.passed else 'FAIL'} (verdict {res.report.verdict})\n")
        for kind, quote in case_findings(res.report):
            out.write(f"     {kind}: {quote}\n")
    failed = [r for r in results if not r.passed]
    no_rules = [r for r in results if r.report.verdict == "no_rules"]
    out.write(
        f"\n{len(results)} case(s): {len(results) - len(failed)} ok, {len(failed)} FAIL, {len(no_rules)} no_rules\n"
    )
    for res in no_rules:
        out.write(f"no_rules {res.case.id} ({res.case.origin}): no rule in force, nothing was checked\n")
    for res in failed:
        out.write(f"FAIL {res.case.id} ({res.case.origin})\n")
        for p in res.problems:
            out.write(f"  - {p}\n")


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(s: str) -> str:
    """XML 1.0 cannot carry most control characters, even escaped: replace them."""
    return _XML_BAD.sub("\ufffd", s)


def junit_xml(results: Sequence[CaseResult], *, suite: str = "ctxaudit.check") -> bytes:
    """JUnit XML (the Surefire/pytest shape CI systems read): one <testcase> per case, a <failure> per failed one."""
    failures = sum(1 for r in results if not r.passed)
    total_time = sum(r.seconds for r in results)
    root = ET.Element(
        "testsuites",
        name="ctxaudit",
        tests=str(len(results)),
        failures=str(failures),
        errors="0",
        time=f"{total_time:.3f}",
    )
    ts = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(results)),
        failures=str(failures),
        errors="0",
        skipped="0",
        time=f"{total_time:.3f}",
    )
    for res in results:
        tc = ET.SubElement(
            ts,
            "testcase",
            classname=suite,
            name=_xml_text(res.case.id),
            time=f"{res.seconds:.3f}",
            file=_xml_text(res.case.origin),
        )
        if res.problems:
            fail = ET.SubElement(
                tc, "failure", message=_xml_text(res.problems[0]), type="RuleRetentionViolation"
            )
            fail.text = _xml_text("\n".join(res.problems))
        states = "\n".join(f"{r.rule_id}: {_rule_state(r)}" for r in res.report.rules)
        ET.SubElement(tc, "system-out").text = _xml_text(f"verdict: {res.report.verdict}\n{states}")
    ET.indent(root)
    out: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return out


# --- entry point -----------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ctxaudit",
        description="Audit what context compression did to an agent's rules.",
        epilog="Also: `ctxaudit hook claude-code|cursor` (agent hooks), `ctxaudit hook install claude-code|cursor` "
        "and `ctxaudit import dify|coze` (memory-window drops); each takes --help.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    c = sub.add_parser(
        "check",
        help="check compressor outputs against their rules; exit 1 on any lost, weakened or demoted rule",
        description="Run the ctxaudit engine on cases (samples-format JSONL) or on one before/after pair. "
        "Exit 0: all cases pass; 1: a violation (missing/weakened/demoted rule or a fail verdict); 2: bad input; "
        "3: with --require-rules, a case had no rule in force (verdict no_rules).",
    )
    c.add_argument(
        "paths", nargs="*", metavar="PATH", help="case files (.jsonl, .json) or directories of them"
    )
    c.add_argument(
        "--before", type=Path, metavar="FILE", help="context before compression (JSON messages or text)"
    )
    c.add_argument(
        "--after", type=Path, metavar="FILE", help="context after compression (JSON messages or text)"
    )
    c.add_argument(
        "--rules",
        type=Path,
        metavar="FILE",
        help="rule set: JSON [{id, text}] or text, one rule a line (default: extracted from --before)",
    )
    c.add_argument("--format", default="auto", choices=FORMATS, help="context format (default: auto-detect)")
    c.add_argument("--junit-xml", type=Path, metavar="PATH", help="also write a JUnit XML report here")
    c.add_argument(
        "--json", action="store_true", help="print the full reports as JSON lines instead of the table"
    )
    c.add_argument(
        "--require-rules",
        action="store_true",
        help="exit 3 when a case had no rule in force (verdict no_rules) and none failed",
    )
    c.add_argument(
        "--compare",
        type=Path,
        metavar="BASELINE.json",
        help="compare with a saved `ctxaudit check --json` run of the same set; exit 1 only on a regression",
    )
    c.add_argument(
        "--expect",
        action="store_true",
        help="pass a case when the results match its own `expected` block (engine tests)",
    )
    return p


def result_json(res: CaseResult) -> dict[str, Any]:
    """One `--json` line: {"id", "passed", "problems", "report": AuditReport.to_dict()} (the input of --compare)."""
    return {"id": res.case.id, "passed": res.passed, "problems": res.problems, "report": res.report.to_dict()}


def _read_baseline(path: Path) -> dict[str, CaseRun]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"--compare {path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadInput(f"--compare {path}: is not UTF-8 text") from None
    try:
        return read_results(text, f"--compare {path}")
    except CompareInputError as exc:
        raise BadInput(str(exc)) from None


def _counter(err: TextIO) -> TokenCounter:
    try:
        return default_counter()
    except TokenizerUnavailable as exc:
        # Tokens are reported, never judged: a missing encoding must not block the gate.
        err.write(f"ctxaudit: warning: {exc}; counting tokens as characters/4\n")
        return CharCounter()


def main(
    argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Console entry point (`ctxaudit`, pyproject [project.scripts]). Returns the exit code (see module doc)."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    parser = _parser()
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["hook"]:
        # Agent hooks (ctxaudit/hooks/): imported only here, so `check` never loads them.
        from ctxaudit.hooks.cli import main as hook_main

        return hook_main(args_list[1:], stdout=stdout, stderr=stderr)
    if args_list[:1] == ["import"]:
        from ctxaudit.hooks.conversations import main as import_main

        return import_main(args_list[1:], stdout=out, stderr=err)
    if args_list[:1] != ["check"] and not (args_list and args_list[0] in ("-h", "--help")):
        args_list.insert(0, "check")  # `check` is the only command; allow leaving it out
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse prints its own message; keep our exit-code contract
        return EXIT_OK if exc.code == 0 else EXIT_BAD_INPUT
    try:
        cases: list[Case] = []
        if args.before or args.after:
            if not (args.before and args.after):
                raise BadInput("--before and --after go together")
            cases.append(case_from_files(args.before, args.after, args.rules, fmt=args.format))
        elif args.rules:
            raise BadInput("--rules needs --before and --after (case files carry their own rules)")
        for p in args.paths:
            cases.extend(read_cases(Path(p), fmt=args.format))
        if not cases:
            raise BadInput("nothing to check: give case files (PATH...) or --before FILE --after FILE")
        ids = [c.id for c in cases]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise BadInput(f"case id(s) used more than once: {', '.join(dupes)}")
        baseline = _read_baseline(args.compare) if args.compare else None
    except BadInput as exc:
        err.write(f"ctxaudit: error: {exc}\n")
        return EXIT_BAD_INPUT
    counter = _counter(err)
    results = [check_case(c, counter=counter, expect=args.expect) for c in cases]
    lines = [result_json(res) for res in results]
    if args.json:
        for obj in lines:
            out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    else:
        print_table(results, out)
    comparison = compare(baseline, case_runs(lines)) if baseline is not None else None
    if comparison is not None:
        # With --json stdout stays `--json` output (the next baseline); the comparison goes to stderr.
        (err if args.json else out).write(("" if args.json else "\n") + format_comparison(comparison))
    if args.junit_xml:
        try:
            args.junit_xml.write_bytes(junit_xml(results))
        except OSError as exc:
            err.write(f"ctxaudit: error: cannot write {args.junit_xml}: {exc.strerror or exc}\n")
            return EXIT_BAD_INPUT
    if comparison is not None:
        if comparison.regressed:
            return EXIT_VIOLATION
    elif not all(r.passed for r in results):
        return EXIT_VIOLATION
    if args.require_rules and any(r.report.verdict == "no_rules" for r in results):
        return EXIT_NO_RULES
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
