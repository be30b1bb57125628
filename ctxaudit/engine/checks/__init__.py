"""The check registry: stable name → check. Adding a check is one module and one line here.

A check takes the event's Analysis (analysis.py: the pair, the rules in force and what the
language layer derived from them, computed once) and returns a CheckResult. The runner, the CLI
and `evaluate` iterate CHECKS in this order; the names are stable (they appear in reports and
can be used to switch a check off), so rename none of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from ctxaudit.engine.analysis import Analysis
from ctxaudit.engine.checks import (
    claims,
    failures,
    harness_text,
    hierarchy,
    paraphrases,
    provenance,
    retention,
    stale,
)
from ctxaudit.engine.checks.rule_findings import rule_findings
from ctxaudit.engine.types import Finding, RuleResult

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckResult:
    """What one check found: findings, and (retention only) one RuleResult per rule in force."""

    findings: tuple[Finding, ...] = ()
    rule_results: tuple[RuleResult, ...] = ()


CheckFn = Callable[[Analysis], CheckResult]


def _findings(fn: Callable[[Analysis], list[Finding]]) -> CheckFn:
    def check(a: Analysis) -> CheckResult:
        return CheckResult(tuple(fn(a)))

    check.__doc__ = fn.__doc__
    check.__name__ = fn.__name__
    return check


def _retention(a: Analysis) -> CheckResult:
    """Rule retention and drift: each rule's state after compression (retention.py, drift.py)."""
    results = retention.check_retention(a)
    if a.semantic and results:
        ri = retention.analysis_index(a)
        try:
            results = paraphrases.confirm_unexplained(ri, paraphrases.rescue_missing(a, ri, results))
        except Exception:  # the model failed (a broken install): the lexicon's reading stands
            logger.warning("semantic retrieval failed; rules read by the lexicon alone", exc_info=True)
    return CheckResult(tuple(rule_findings(results, a.rules)), tuple(results))


CHECKS: dict[str, CheckFn] = {
    "rule_retention": _retention,
    "claims": _findings(claims.check_claims),
    "provenance": _findings(provenance.check_provenance),
    "stale_instructions": _findings(stale.check_stale_instructions),
    "harness_text": _findings(harness_text.check_harness_text),
    "system_block": _findings(hierarchy.check_system_block),
    "invented_directives": _findings(hierarchy.check_invented_directives),
    "summary_hygiene": _findings(hierarchy.check_summary_hygiene),
    "summary_failures": _findings(failures.check_summary_failures),
    "history_wiped": _findings(failures.check_history_wiped),
    "tool_pairs": _findings(failures.check_tool_pairs),
    "compaction_loop": _findings(failures.check_compaction_loop),
    "unauditable": _findings(failures.check_unauditable),
}

__all__ = ["CHECKS", "CheckFn", "CheckResult"]
