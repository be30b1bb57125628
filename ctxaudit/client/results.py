"""Typed answers of the ctxaudit API (README "API"): what `Client` returns.

Each `from_json` takes the decoded JSON body and ignores fields it does not know, so a newer
server does not break an older client; a field the server leaves out gets its default.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True, slots=True)
class Span:
    """Where a rule or finding was seen: `side` "before"/"after", message index, character offsets."""

    side: str
    message_index: int
    start: int
    end: int
    quote: str

    @classmethod
    def from_json(cls, data: Any) -> Span:
        d = data if isinstance(data, dict) else {}
        return cls(
            side=_str(d.get("side")),
            message_index=_opt_int(d.get("message_index")) or 0,
            start=_opt_int(d.get("start")) or 0,
            end=_opt_int(d.get("end")) or 0,
            quote=_str(d.get("quote")),
        )


@dataclass(frozen=True, slots=True)
class RuleOutcome:
    """One rule after the check. `state`: "retained", "weakened" or "missing"; `strength` 0–1
    (None while unchecked); `demoted`: still there but no longer in the system role; `lost`: what
    weakened (gate answers only), e.g. ["禁止 → 需谨慎"]."""

    id: str
    text: str
    state: str
    strength: float | None = None
    role_before: str | None = None
    role_after: str | None = None
    demoted: bool = False
    lost: list[str] = field(default_factory=list)
    evidence: list[Span] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Any) -> RuleOutcome:
        d = data if isinstance(data, dict) else {}
        strength = d.get("strength")
        return cls(
            id=_str(d.get("id")),
            text=_str(d.get("text")),
            state=_str(d.get("state")),
            strength=float(strength)
            if isinstance(strength, int | float) and not isinstance(strength, bool)
            else None,
            role_before=_opt_str(d.get("role_before")),
            role_after=_opt_str(d.get("role_after")),
            demoted=d.get("demoted") is True,
            lost=[x for x in _list(d.get("lost")) if isinstance(x, str)],
            evidence=[Span.from_json(s) for s in _list(d.get("evidence"))],
        )


@dataclass(frozen=True, slots=True)
class Finding:
    """One finding: `kind` (e.g. "rule_missing", "claim_promoted"), `severity`, the rule it is
    about (or None), a message and its evidence."""

    kind: str
    severity: str
    message: str
    rule_id: str | None = None
    evidence: list[Span] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Any) -> Finding:
        d = data if isinstance(data, dict) else {}
        return cls(
            kind=_str(d.get("kind")),
            severity=_str(d.get("severity")),
            message=_str(d.get("message")),
            rule_id=_opt_str(d.get("rule_id")),
            evidence=[Span.from_json(s) for s in _list(d.get("evidence"))],
        )


@dataclass(frozen=True, slots=True)
class EventAccepted:
    """`POST /api/v1/events` answer. `created` is False when the Idempotency-Key was seen before
    (the server answered 200 with the same event instead of 202)."""

    id: int
    status: str
    url: str
    ui_url: str
    created: bool
    idempotency_key: str

    @classmethod
    def from_json(cls, data: Any, *, created: bool, idempotency_key: str) -> EventAccepted:
        d = data if isinstance(data, dict) else {}
        return cls(
            id=_opt_int(d.get("id")) or 0,
            status=_str(d.get("status")),
            url=_str(d.get("url")),
            ui_url=_str(d.get("ui_url")),
            created=created,
            idempotency_key=idempotency_key,
        )


@dataclass(frozen=True, slots=True)
class GateResult:
    """`POST /api/v1/gate` answer. `rules` lists only the rules that block (missing, weakened or
    demoted). The gate fails closed: any verdict but "pass" means do not go on."""

    id: int
    verdict: str
    status: str
    rules: list[RuleOutcome]
    findings: list[Finding]
    ui_url: str
    error: str | None = None
    idempotency_key: str = ""

    @property
    def passed(self) -> bool:
        """True only for verdict "pass" (seed §4.6: fail closed)."""
        return self.verdict == "pass"

    @property
    def blocks(self) -> bool:
        """Whether an agent that fails closed must stop: every verdict but "pass" and
        "no_rules" (nothing was there to check), unknown verdicts included."""
        return self.verdict not in ("pass", "no_rules")

    def rules_in_state(self, *states: str) -> list[RuleOutcome]:
        """The blocking rules whose state is one of `states`, e.g. ("missing", "weakened")."""
        return [r for r in self.rules if r.state in states]

    @classmethod
    def from_json(cls, data: Any, *, idempotency_key: str = "") -> GateResult:
        d = data if isinstance(data, dict) else {}
        return cls(
            id=_opt_int(d.get("id")) or 0,
            verdict=_str(d.get("verdict")),
            status=_str(d.get("status")),
            rules=[RuleOutcome.from_json(r) for r in _list(d.get("rules"))],
            findings=[Finding.from_json(f) for f in _list(d.get("findings"))],
            ui_url=_str(d.get("ui_url")),
            error=_opt_str(d.get("error")),
            idempotency_key=idempotency_key,
        )


@dataclass(frozen=True, slots=True)
class EventResult:
    """`GET /api/v1/events/<id>` answer. `status`: "pending", "checked" or "error"; `verdict`
    None until checked; tokens counted with tiktoken (None until checked)."""

    id: int
    status: str
    verdict: str | None
    session_id: str
    sequence: int | None
    strategy: str
    tokens_before: int | None
    tokens_after: int | None
    rules: list[RuleOutcome]
    findings: list[Finding]
    error: str | None = None

    @property
    def checked(self) -> bool:
        return self.status == "checked"

    @classmethod
    def from_json(cls, data: Any) -> EventResult:
        d = data if isinstance(data, dict) else {}
        raw_tokens = d.get("tokens")
        tokens: dict[str, Any] = raw_tokens if isinstance(raw_tokens, dict) else {}
        return cls(
            id=_opt_int(d.get("id")) or 0,
            status=_str(d.get("status")),
            verdict=_opt_str(d.get("verdict")),
            session_id=_str(d.get("session_id")),
            sequence=_opt_int(d.get("sequence")),
            strategy=_str(d.get("strategy")),
            tokens_before=_opt_int(tokens.get("before")),
            tokens_after=_opt_int(tokens.get("after")),
            rules=[RuleOutcome.from_json(r) for r in _list(d.get("rules"))],
            findings=[Finding.from_json(f) for f in _list(d.get("findings"))],
            error=_opt_str(d.get("error")),
        )
