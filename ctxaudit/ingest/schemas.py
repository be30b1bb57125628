"""The public ingestion contract (README "API"). Names here are users' scripts' names: keep them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from ctxaudit.ingest.nesting import MAX_DEPTH, TooDeep, check_depth

ContextFormat = Literal["auto", "openai", "openai-responses", "anthropic", "langchain", "generic"]
# A strategy name longer than this is kept cut to it: agents name strategies freely, never a 400.
STRATEGY_MAX_CHARS = 100


def _exact_identifier(value: str | None) -> str | None:
    """An identifier is kept exactly (idempotency, lookups by id): a NUL, which PostgreSQL cannot
    store and contexts get replaced, is refused here, as a lone surrogate is."""
    if value is not None and "\x00" in value:
        raise PydanticCustomError(
            "nul_in_identifier",
            "contains a NUL character (U+0000) at character {at}; identifiers are kept exactly, so send it "
            "without one",
            {"at": value.index("\x00")},
        )
    return value


class RuleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=100)
    text: str = Field(min_length=1, max_length=10_000)
    severity: Literal["low", "medium", "high", "critical"] = "high"

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        _exact_identifier(value)
        return value


class EventIn(BaseModel):
    """One compression event. `before`/`after`: a message list, an Anthropic {system, messages} object, or text."""

    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(min_length=1, max_length=200)
    sequence: int | None = Field(default=None, ge=0, le=2**31 - 1)
    occurred_at: datetime | None = None
    # Kept as the agent names it ("auto-compact", "condensation", …); its family
    # (engine.strategies.strategy_family) is what filters and decay pages group by.
    strategy: str = "other"
    model: str | None = Field(default=None, max_length=200)
    format: ContextFormat = "auto"
    before: list[Any] | dict[str, Any] | str
    after: list[Any] | dict[str, Any] | str
    rules: list[RuleIn] | None = Field(default=None, max_length=500)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("session_id", "model")
    @classmethod
    def _identifier(cls, value: str | None) -> str | None:
        return _exact_identifier(value)

    @field_validator("sequence", mode="before")
    @classmethod
    def _sequence(cls, value: Any) -> Any:
        if isinstance(value, bool):  # JSON true is no position in a session
            raise PydanticCustomError("int_type", "must be an integer, not true/false")
        return value

    @field_validator("strategy")
    @classmethod
    def _strategy(cls, value: str) -> str:
        value = value.strip()
        return value[:STRATEGY_MAX_CHARS] if value else "other"

    @field_validator("before", "after", "metadata")
    @classmethod
    def _not_too_deep(cls, value: Any, info: ValidationInfo) -> Any:
        """At most MAX_DEPTH levels (ingest/nesting.py): later steps walk the structure."""
        try:
            check_depth(value, str(info.field_name), limit=MAX_DEPTH)
        except TooDeep as exc:
            raise PydanticCustomError(
                "too_deep",
                "nested deeper than {limit} levels of arrays/objects at {path}",
                {"limit": exc.limit, "path": exc.field},
            ) from None
        return value


class EventAccepted(BaseModel):
    id: int
    status: str
    url: str
    ui_url: str


class SpanOut(BaseModel):
    side: Literal["before", "after"]
    message_index: int
    start: int
    end: int
    quote: str


class RuleOut(BaseModel):
    id: str
    text: str
    state: Literal["retained", "weakened", "missing"]
    strength: float | None = None
    # Apart from `state`: a rule can be retained word for word and still have left the system role.
    demoted: bool = False
    role_before: str | None
    role_after: str | None
    evidence: list[SpanOut]
    # the similarity (0-1) of the after sentence that states the rule in other words, when it was
    # found by meaning (engine/checks/paraphrases.py); null when found by its words, or not at all
    by_meaning: float | None = None


class FindingOut(BaseModel):
    kind: str
    severity: str
    rule_id: str | None = None
    message: str
    evidence: list[SpanOut]


class TokensOut(BaseModel):
    before: int | None
    after: int | None


class EventOut(BaseModel):
    id: int
    status: Literal["pending", "checked", "error"]
    # "no_rules": no rule was in force (none given, no project rule set, none extracted) and no
    # other finding failed the event; nothing was checked, so it is not a pass (issue 12 §6).
    verdict: Literal["pass", "fail", "no_rules"] | None
    session_id: str
    sequence: int | None
    strategy: str
    strategy_family: str
    tokens: TokensOut
    rules: list[RuleOut]
    findings: list[FindingOut]
    error: str | None = None


class ErrorOut(BaseModel):
    error: str
    field: str | None = None
