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
CLAIM_FABRICATED = "claim_fabricated"  # provenance: a statement about someone nothing before supports
CLAIM_CONTRADICTED = "claim_contradicted"  # provenance: a before message says otherwise ("declined", "no")
CLAIM_MISATTRIBUTED = "claim_misattributed"  # provenance: another party's words now the user's/system's
STALE_INSTRUCTION = "stale_instruction"  # a done/closed instruction live or pending again (issue 12 §5)
HARNESS_TEXT_AS_USER = "harness_text_as_user"  # the compaction prompt left in the user role (issue 12 §5)

# Other kinds the engine writes (ctxaudit/engine/checks/hierarchy.py, failures.py): alerts need no
# special handling for them, the policy lists them so a project can switch them on or off.
SYSTEM_DROPPED = "system_dropped"
SYSTEM_REWRITTEN = "system_rewritten"
SYSTEM_TRUNCATED = "system_truncated"
INVENTED_DIRECTIVE = "invented_directive"
HISTORY_WIPED = "history_wiped"
SUMMARY_EMPTY = "summary_empty"
SUMMARY_IS_ERROR = "summary_is_error"
SUMMARY_IS_REFUSAL = "summary_is_refusal"
SUMMARY_UNMARKED = "summary_unmarked"
SUMMARY_NO_DISCLAIMER = "summary_no_disclaimer"
STRUCTURED_SUMMARY_INVALID = "structured_summary_invalid"
STRUCTURED_OPERATION_FIELD = "structured_operation_field"
STRUCTURED_FACT_UNLABELED = "structured_fact_unlabeled"
TOOL_PAIR_BROKEN = "tool_pair_broken"
COMPACTION_LOOP = "compaction_loop"
UNAUDITABLE_COMPACTION = "unauditable_compaction"

# Kinds about one rule, for which the rule's own severity counts as well as the finding's:
# a missing critical rule is a critical alert even when the check rated the finding "high".
RULE_SEVERITY_KINDS = frozenset({RULE_MISSING})

SEVERITIES: tuple[str, ...] = tuple(s.value for s in Severity)  # low < medium < high < critical


def severity_rank(value: str | None) -> int:
    """1 (low) .. 4 (critical); 0 for an unknown or empty value."""
    if not value:
        return 0
    try:
        return Severity(value).rank
    except ValueError:
        return 0


def max_severity(*values: str | None) -> str:
    known = [v for v in values if v and severity_rank(v)]
    return max(known, key=severity_rank) if known else Severity.LOW.value


# The policy a new project gets (created lazily on first evaluation). Why "high" for missing
# rules and not only "critical": rules default to severity "high" (ingest, rule extraction), so a
# critical-only default would stay silent for every rule set that does not mark severities.
DEFAULT_CONDITIONS: tuple[dict[str, Any], ...] = (
    # The thresholds.
    {"kind": RULE_MISSING, "min_severity": "high", "min_per_event": 1},
    {"kind": RULE_WEAKENED, "min_severity": "low", "min_per_event": 2},
    {"kind": CLAIM_PROMOTED, "min_severity": "low", "min_per_event": 1},
    {"kind": INJECTION_PROMOTED, "min_severity": "low", "min_per_event": 1},
    {"kind": CLAIM_FABRICATED, "min_severity": "low", "min_per_event": 1},
    {"kind": CLAIM_CONTRADICTED, "min_severity": "low", "min_per_event": 1},
    {"kind": CLAIM_MISATTRIBUTED, "min_severity": "low", "min_per_event": 1},
    {"kind": STALE_INSTRUCTION, "min_severity": "medium", "min_per_event": 1},
    {"kind": HARNESS_TEXT_AS_USER, "min_severity": "low", "min_per_event": 1},
    {
        "kind": RULE_DECAY,
        "min_severity": "low",
        "min_per_event": 1,
        "min_compressions": None,
    },  # None: project.decay_compressions
    # Hierarchy flattening and broken compactions: rare and serious.
    {
        "kind": RULE_DEMOTED,
        "min_severity": "medium",
        "min_per_event": 1,
    },  # the engine rates a demotion one level below the rule
    {"kind": SUMMARY_ELEVATED, "min_severity": "low", "min_per_event": 1},
    {"kind": SYSTEM_DROPPED, "min_severity": "low", "min_per_event": 1},
    {"kind": SYSTEM_REWRITTEN, "min_severity": "low", "min_per_event": 1},
    {"kind": INVENTED_DIRECTIVE, "min_severity": "low", "min_per_event": 1},
    {"kind": HISTORY_WIPED, "min_severity": "low", "min_per_event": 1},
    {"kind": SUMMARY_EMPTY, "min_severity": "low", "min_per_event": 1},
    {"kind": SUMMARY_IS_ERROR, "min_severity": "low", "min_per_event": 1},
    {"kind": SUMMARY_IS_REFUSAL, "min_severity": "low", "min_per_event": 1},
    # Hygiene findings: listed so a project can turn them on, off by default (they would be noise).
    {"kind": SYSTEM_TRUNCATED, "min_severity": "low", "min_per_event": 1, "enabled": False},
    {"kind": SUMMARY_UNMARKED, "min_severity": "low", "min_per_event": 1, "enabled": False},
    {"kind": SUMMARY_NO_DISCLAIMER, "min_severity": "low", "min_per_event": 1, "enabled": False},
    {"kind": STRUCTURED_SUMMARY_INVALID, "min_severity": "low", "min_per_event": 1, "enabled": False},
    {"kind": STRUCTURED_OPERATION_FIELD, "min_severity": "low", "min_per_event": 1, "enabled": False},
    {"kind": STRUCTURED_FACT_UNLABELED, "min_severity": "low", "min_per_event": 1, "enabled": False},
    {"kind": TOOL_PAIR_BROKEN, "min_severity": "low", "min_per_event": 1, "enabled": False},
    {"kind": COMPACTION_LOOP, "min_severity": "low", "min_per_event": 1, "enabled": False},
    {"kind": UNAUDITABLE_COMPACTION, "min_severity": "low", "min_per_event": 1, "enabled": False},
)

KNOWN_KINDS: tuple[str, ...] = tuple(c["kind"] for c in DEFAULT_CONDITIONS)

# Windowed policies (alerts.services.windows): alerts about a share of compressions, not a finding.
WINDOW_FAILING_SHARE = "window_failing_share"
WINDOW_RULE_LOSSES = "window_rule_losses"
WINDOW_KINDS = frozenset({WINDOW_FAILING_SHARE, WINDOW_RULE_LOSSES})
