"""Shapes shared by the platform readers (Dify, Coze)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxaudit.engine.platforms.window import Round
from ctxaudit.engine.types import Message


class PlatformError(ValueError):
    """An export or API answer that cannot be read; `name` is the file."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.name = name
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Conversation:
    """One conversation as its platform stored it, with the memory settings its model ran under.

    sections: the rounds, oldest first, split where the platform starts a fresh context (a
    user clearing it); history never crosses a section. max_rounds: rounds of history the
    memory keeps (None: no limit); token_budget:
    (model context tokens, tokens reserved for the answer) when the history is also cut to fit
    the context, else None.
    """

    platform: str
    conversation_id: str
    system: Message | None
    sections: tuple[tuple[Round, ...], ...]
    max_rounds: int | None
    token_budget: tuple[int, int] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is a mapping, else {} (exports leave sections out or null)."""
    return value if isinstance(value, dict) else {}


def as_str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
