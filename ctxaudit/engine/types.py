"""Plain data shared by every check: frozen dataclasses, text stays text (never HTML).

Offsets in `Span` are Python string indices (code points) into `Message.content`, so the UI
can highlight exactly the quoted text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

Side = Literal["before", "after"]

# Roles after normalisation: every input format maps onto these five.
ROLES = ("system", "developer", "user", "assistant", "tool")


class Severity(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return {"low": 1, "medium": 2, "high": 3, "critical": 4}[self.value]


class RuleState(StrEnum):
    RETAINED = "retained"
    WEAKENED = "weakened"
    MISSING = "missing"


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a context. `name` is the tool/function name for tool output."""

    role: str
    content: str
    name: str | None = None
    # Where the message came from when the role alone does not say it (e.g. "summary",
    # "compact_summary", "preserved"); free text, shown in the UI.
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class Context:
    """An ordered list of messages: what the model saw at one point in time."""

    messages: tuple[Message, ...]

    def text(self) -> str:
        return "\n".join(m.content for m in self.messages)


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule in force. `source` says where it came from: "event", "project", "system", "user"."""

    id: str
    text: str
    severity: Severity = Severity.HIGH
    source: str = "event"


@dataclass(frozen=True, slots=True)
class Span:
    """A quoted stretch of one message: content[start:end] == quote."""

    side: Side
    message_index: int
    start: int
    end: int
    quote: str

    def to_dict(self) -> dict[str, Any]:
        # What dataclasses.asdict gives, without its deep copy of every field (a 50-rule report
        # holds hundreds of spans; issue 13).
        return {
            "side": self.side,
            "message_index": self.message_index,
            "start": self.start,
            "end": self.end,
            "quote": self.quote,
        }


@dataclass(frozen=True, slots=True)
class RuleResult:
    """Retention of one rule across one compression.

    strength: 1.0 = kept with full force, 0.0 = gone (see checks/drift.py for the scale).
    lost: what weakened, in words a reviewer reads (e.g. "force: prohibition → caution").
    """

    rule_id: str
    text: str
    state: RuleState
    strength: float
    role_before: str | None
    role_after: str | None
    evidence: tuple[Span, ...] = ()
    lost: tuple[str, ...] = ()
    demoted: bool = False
    # the cosine similarity of the after sentence that states the rule in other words, when it was
    # found by meaning (checks/paraphrases.py), not by its words
    by_meaning: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.rule_id,
            "text": self.text,
            "state": self.state.value,
            "strength": round(self.strength, 3),
            "role_before": self.role_before,
            "role_after": self.role_after,
            "demoted": self.demoted,
            "lost": list(self.lost),
            "evidence": [s.to_dict() for s in self.evidence],
            "by_meaning": self.by_meaning,
        }


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem a check found. `kind` is a stable machine name (see checks/__init__.py)."""

    kind: str
    severity: Severity
    message: str
    rule_id: str | None = None
    evidence: tuple[Span, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "kind": self.kind,
            "severity": self.severity.value,
            "message": self.message,
            "evidence": [s.to_dict() for s in self.evidence],
        }
        if self.rule_id is not None:
            d["rule_id"] = self.rule_id
        if self.data:
            d["data"] = self.data
        return d


@dataclass(frozen=True, slots=True)
class TokenStats:
    """Token counts (tiktoken cl100k_base unless the counter says otherwise)."""

    before: int
    after: int
    before_by_role: dict[str, int]
    after_by_role: dict[str, int]
    rules: int  # tokens the rule texts take
    encoding: str

    @property
    def ratio(self) -> float | None:
        """after / before; None when before is empty."""
        return self.after / self.before if self.before else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "before": self.before,
            "after": self.after,
            "before_by_role": self.before_by_role,
            "after_by_role": self.after_by_role,
            "rules": self.rules,
            "ratio": round(self.ratio, 4) if self.ratio is not None else None,
            "encoding": self.encoding,
        }


@dataclass(frozen=True, slots=True)
class ContextPair:
    """The input of one audit: one compression event."""

    before: Context
    after: Context
    rules: tuple[Rule, ...] = ()
    strategy: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AuditReport:
    """Everything the checks say about one compression event."""

    verdict: Literal["pass", "fail", "no_rules"]  # no_rules: nothing to check (issue 12 §6)
    rules: tuple[RuleResult, ...]
    findings: tuple[Finding, ...]
    tokens: TokenStats | None
    engine_version: str
    summary_elevated: bool = False
    # Server-side encrypted compaction items seen (checks/failures.py): not auditable, counted.
    unauditable_compactions: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "rules": [r.to_dict() for r in self.rules],
            "findings": [f.to_dict() for f in self.findings],
            "tokens": self.tokens.to_dict() if self.tokens else None,
            "engine_version": self.engine_version,
            "summary_elevated": self.summary_elevated,
            "unauditable_compactions": self.unauditable_compactions,
        }
