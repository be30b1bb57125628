"""The finding kinds alerts depend on, in one place.

Kinds are produced by the engine (ctxaudit/engine/checks/*, runner.py) and, for `rule_decay`,
by the session timelines. A kind not listed here can still raise an alert when a project's
policy names it; the list only drives defaults and the policy form.
"""

from __future__ import annotations

from typing import Any

from ctxaudit.engine.types import Severity

RULE_MISSING = "rule_missing"  # retention: rule absent after compression (seed §3.1)
RULE_WEAKENED = "rule_weakened"  # retention/drift: rule present but weaker (§3.4)
RULE_DEMOTED = "rule_demoted"  # hierarchy: rule left the system role (§3.2)
SUMMARY_ELEVATED = "summary_elevated"  # hierarchy: summary/history placed in the system role (§3.2)
CLAIM_PROMOTED = "claim_promoted"  # claims: a user's claim restated as fact (§3.3)
INJECTION_PROMOTED = "injection_promoted"  # tool/external imperative promoted to instruction (S2 §5)
RULE_DECAY = "rule_decay"  # timelines: strength fell across several compressions (§3.5)

KNOWN_KINDS: tuple[str, ...] = (
    RULE_MISSING,
    RULE_WEAKENED,
    RULE_DEMOTED,
    SUMMARY_ELEVATED,
    CLAIM_PROMOTED,
    INJECTION_PROMOTED,
    RULE_DECAY,
)

# Kinds about one rule, for which the rule's own severity counts as well as the finding's:
# a missing critical rule is a critical alert even when the check rated the finding "high".
RULE_SEVERITY_KINDS = frozenset({RULE_MISSING})

SEVERITIES: tuple[str, ...] = tuple(s.value for s in Severity)  # low < medium < high < critical


def severity_rank(value: str | None) -> int:
    """1 (low) .. 4 (critical); 0 for an unknown or empty value."""
    try:
        return Severity(value).rank
    except ValueError:
        return 0


def max_severity(*values: str | None) -> str:
    known = [v for v in values if severity_rank(v)]
    return max(known, key=severity_rank) if known else Severity.LOW.value


# The policy a new project gets (created lazily on first evaluation). Why "high" for missing
# rules and not only "critical": rules default to severity "high" (ingest, rule extraction), so a
# critical-only default would stay silent for every rule set that does not mark severities.
DEFAULT_CONDITIONS: tuple[dict[str, Any], ...] = (
    {"kind": RULE_MISSING, "min_severity": "high", "min_per_event": 1},
    {"kind": RULE_WEAKENED, "min_severity": "low", "min_per_event": 2},
    {"kind": RULE_DEMOTED, "min_severity": "high", "min_per_event": 1},
    {"kind": SUMMARY_ELEVATED, "min_severity": "low", "min_per_event": 1},
    {"kind": CLAIM_PROMOTED, "min_severity": "low", "min_per_event": 1},
    {"kind": INJECTION_PROMOTED, "min_severity": "low", "min_per_event": 1},
    {"kind": RULE_DECAY, "min_severity": "low", "min_per_event": 1, "min_compressions": None},  # None: project.decay_compressions
)
