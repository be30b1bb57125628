"""Replaying a platform's memory window over a stored conversation, to find where it dropped
messages and what the model saw then.

A *round* is one user turn: the user's message, then what the platform stored for the reply
(tool calls, tool results, the answer). At round k the model sees the system prompt, the
history the platform's memory gives it, then the round's user message. The history is the
last `max_rounds` rounds the platform keeps in memory, then — when a token budget is known —
messages taken off its front, one at a time, until it fits (Dify's TokenBufferMemory prunes
this way; see dify.py). Round k *dropped messages* when its history is shorter than the
previous round's history plus the previous round: that is one event, with

- before: system + previous history + previous round + this round's user message
  (what the model would have seen had nothing been dropped), and
- after: system + this history + this round's user message (what it saw).

Tokens are counted with the engine's counter (tiktoken cl100k), not the platform's model
tokenizer: near a token budget the replay can be off by a message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ctxaudit.engine.types import Context, Message


@dataclass(frozen=True, slots=True)
class Round:
    """One user turn. id: the platform's id for it; in_memory: whether the platform's memory
    keeps it for later turns (Dify skips rounds with an empty answer)."""

    id: str
    messages: tuple[Message, ...]
    created_at: datetime | None = None
    in_memory: bool = True


@dataclass(frozen=True, slots=True)
class WindowDrop:
    """One point where the memory window dropped messages. round_index: 0-based round;
    dropped: how many messages left the context; kept: history messages still in it."""

    round_index: int
    round_id: str
    before: Context
    after: Context
    dropped: int
    kept: int
    created_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def _prune(
    history: list[Message], budget: int | None, count: Callable[[list[Message]], int]
) -> list[Message]:
    if budget is None:
        return history
    while len(history) > 1 and count(history) > budget:
        history = history[1:]
    return history


def window_drops(
    system: Message | None,
    rounds: list[Round],
    *,
    max_rounds: int | None,
    token_budget: Callable[[list[Message]], int | None] | None = None,
    count: Callable[[list[Message]], int] | None = None,
) -> list[WindowDrop]:
    """Every round at which the window dropped messages, oldest first.

    system: the system prompt message (None: none); max_rounds: rounds of history kept (None:
    no round limit; 0: no history at all); token_budget(prompt messages) → the history's token
    budget for that round, or None (no token limit); count(messages) → tokens.
    """
    head = [system] if system is not None else []
    previous: list[Message] | None = None
    previous_round: Round | None = None
    drops: list[WindowDrop] = []
    for k, rnd in enumerate(rounds):
        current = list(rnd.messages[:1])
        kept_rounds = [r for r in rounds[:k] if r.in_memory]
        if max_rounds is not None:
            kept_rounds = kept_rounds[-max_rounds:] if max_rounds > 0 else []
        history = [m for r in kept_rounds for m in r.messages]
        budget = token_budget(head + current) if token_budget is not None else None
        if budget is not None and count is not None:
            history = _prune(history, max(budget, 0), count)
        if previous is not None and previous_round is not None:
            full = previous + (list(previous_round.messages) if previous_round.in_memory else [])
            if len(history) < len(full):
                drops.append(
                    WindowDrop(
                        round_index=k,
                        round_id=rnd.id,
                        before=Context(messages=tuple(head + full + current)),
                        after=Context(messages=tuple(head + history + current)),
                        dropped=len(full) - len(history),
                        kept=len(history),
                        created_at=rnd.created_at,
                    )
                )
        previous, previous_round = history, rnd
    return drops
