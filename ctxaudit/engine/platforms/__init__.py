"""Conversation platforms whose apps keep a memory window: read an app's exported
configuration and one conversation's stored messages, and find every point where the window
dropped messages, with the context the model saw then (window.py).

Readers (`PLATFORMS`): "dify" (DSL YAML + messages API pages, dify.py), "coze" (bot
configuration + message list pages, coze.py). Adding one: a module with
`read(config, messages, *, context_tokens=None) -> Conversation` and one line here.
`conversation_events` turns a Conversation into POST /api/v1/events bodies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxaudit.engine.formats import context_to_json
from ctxaudit.engine.platforms import coze, dify
from ctxaudit.engine.platforms.types import Conversation, PlatformError
from ctxaudit.engine.platforms.window import WindowDrop, window_drops
from ctxaudit.engine.tokens import CharCounter, TokenCounter, TokenizerUnavailable, default_counter
from ctxaudit.engine.types import Message

__all__ = ["PLATFORMS", "Conversation", "PlatformError", "conversation_events", "drops"]

PLATFORMS: dict[str, Callable[..., Conversation]] = {
    "dify": dify.read,
    "coze": coze.read,
}


def _counter() -> TokenCounter:
    try:
        return default_counter()
    except TokenizerUnavailable:
        return CharCounter()


def drops(conversation: Conversation, counter: TokenCounter | None = None) -> list[WindowDrop]:
    """Every window drop of the conversation, oldest first, over all its sections."""
    tokens = counter or _counter()

    def count(messages: list[Message]) -> int:
        return sum(tokens.count(m.content) for m in messages)

    budget_fn: Callable[[list[Message]], int | None] | None = None
    if conversation.token_budget is not None:
        context, reserve = conversation.token_budget

        def budget_fn(prompt: list[Message]) -> int | None:
            return context - reserve - count(prompt)

    out: list[WindowDrop] = []
    offset = 0
    for section in conversation.sections:
        for d in window_drops(
            conversation.system,
            list(section),
            max_rounds=conversation.max_rounds,
            token_budget=budget_fn,
            count=count,
        ):
            out.append(
                WindowDrop(
                    d.round_index + offset, d.round_id, d.before, d.after, d.dropped, d.kept, d.created_at
                )
            )
        offset += len(section)
    return out


def conversation_events(
    conversation: Conversation, counter: TokenCounter | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """(Idempotency-Key, body) per window drop. Key `<platform>:<conversation>:<round id>`;
    session_id the conversation id; sequence 1, 2, … per drop; strategy "truncation"."""
    events = []
    for n, d in enumerate(drops(conversation, counter), start=1):
        body: dict[str, Any] = {
            "session_id": conversation.conversation_id[:200],
            "sequence": n,
            "occurred_at": d.created_at.isoformat() if d.created_at else None,
            "strategy": "truncation",
            "format": "generic",
            "before": context_to_json(d.before),
            "after": context_to_json(d.after),
            "metadata": {
                **conversation.metadata,
                "source": f"{conversation.platform}:memory_window",
                "round": d.round_index + 1,
                "round_id": d.round_id,
                "messages_dropped": d.dropped,
                "history_messages_kept": d.kept,
                "max_rounds": conversation.max_rounds,
            },
        }
        if conversation.metadata.get("model"):
            body["model"] = str(conversation.metadata["model"])[:200]
        events.append(
            (f"{conversation.platform}:{conversation.conversation_id[:80]}:{d.round_id[:80]}", body)
        )
    return events
