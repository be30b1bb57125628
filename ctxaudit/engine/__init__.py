"""The check engine: pure Python, no Django. Shared by the worker, the CLI and the tests.

Public API: run_checks, parse_context, extract_rules, ENGINE_VERSION and the types.
"""

from __future__ import annotations

from ctxaudit.engine.formats import ContextFormatError, parse_context
from ctxaudit.engine.rules import extract_rules
from ctxaudit.engine.runner import ENGINE_VERSION, run_checks
from ctxaudit.engine.types import (
    AuditReport,
    Context,
    ContextPair,
    Finding,
    Message,
    Rule,
    RuleResult,
    RuleState,
    Severity,
    Span,
    TokenStats,
)

__all__ = [
    "ENGINE_VERSION",
    "AuditReport",
    "Context",
    "ContextFormatError",
    "ContextPair",
    "Finding",
    "Message",
    "Rule",
    "RuleResult",
    "RuleState",
    "Severity",
    "Span",
    "TokenStats",
    "extract_rules",
    "parse_context",
    "run_checks",
]
