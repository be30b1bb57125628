"""run_checks: one compression event in, one AuditReport out."""

from __future__ import annotations

from ctxaudit.engine.checks.claims import check_claims
from ctxaudit.engine.checks.failures import check_failures
from ctxaudit.engine.checks.hierarchy import check_hierarchy
from ctxaudit.engine.checks.retention import check_rule_retention
from ctxaudit.engine.rules import extract_rules
from ctxaudit.engine.tokens import TokenCounter, default_counter, token_stats
from ctxaudit.engine.types import AuditReport, ContextPair, Finding, RuleState, Severity

ENGINE_VERSION = "0.1.0"


def run_checks(pair: ContextPair, *, counter: TokenCounter | None = None) -> AuditReport:
    """Run every check on `pair`. Rules: pair.rules, else extracted from pair.before.

    counter: token counter (default: tiktoken cl100k_base, offline). Raises TokenizerUnavailable
    when the encoding cannot be loaded.
    """
    rules = pair.rules or tuple(extract_rules(pair.before))
    results = check_rule_retention(pair.before, pair.after, rules)
    findings: list[Finding] = []
    for r in results:
        if r.state == RuleState.MISSING:
            findings.append(Finding("rule_missing", Severity.HIGH, f"Rule {r.rule_id} is missing after compression.", r.rule_id, r.evidence))
        elif r.state == RuleState.WEAKENED:
            findings.append(Finding("rule_weakened", Severity.MEDIUM, f"Rule {r.rule_id} was reworded and may be weaker.", r.rule_id, r.evidence))
        if r.demoted:
            findings.append(Finding("rule_demoted", Severity.HIGH, f"Rule {r.rule_id} left the system role (now {r.role_after}).", r.rule_id, r.evidence))
    # Claims, hierarchy and compaction failures (eng-claims): severities decide the verdict.
    provenance = [*check_claims(pair), *check_hierarchy(pair), *check_failures(pair)]
    findings += provenance
    summary_elevated = any(f.kind == "summary_elevated" for f in provenance)
    unauditable = sum(1 for f in provenance if f.kind == "unauditable_compaction")
    tokens = token_stats(pair.before, pair.after, rules, counter or default_counter())
    verdict = "fail" if any(f.severity.rank >= Severity.MEDIUM.rank for f in findings) else "pass"
    return AuditReport(
        verdict, tuple(results), tuple(findings), tokens, ENGINE_VERSION,
        summary_elevated=summary_elevated, unauditable_compactions=unauditable,
    )
