"""Coze: a bot's configuration and one conversation's messages → window-drop events.

Formats, from Coze's Python SDK (coze-dev/coze-py, which mirrors the open API):
- Bot configuration, `GET /v1/bots/{bot_id}` → `{"code", "msg", "data": Bot}`
  (cozepy/bots/__init__.py @ 001509faf458e1aed4484dd478b50d4ea8c4064e): `prompt_info.prompt`
  (the persona and reply logic: the bot's system prompt), `model_info` {model_id, model_name,
  temperature, top_p, `context_round` (rounds of dialogue carried as context), max_tokens},
  `bot_mode` (0 single agent, 1 multi agent, 2 single-agent workflow).
- Messages, `POST /v1/conversation/message/list?conversation_id=…` → `{"code", "msg",
  "data": [Message], "first_id", "last_id", "has_more"}` (cozepy/conversations/message/__init__.py
  @ b91c53f1dac32fc7221a6050912aaa841d30509c); a Message (cozepy/chat/__init__.py @
  00866e8ae8304c5c06df1dbe5b6ebe1484c3bea2) has `role` user|assistant, `type` question|answer|
  function_call|tool_output|tool_response|follow_up|verbose, `content`, `content_type`
  text|object_string|card|audio, `chat_id` (one chat = one round), `section_id` ("the same
  section is one context": clearing the context starts a new section), `created_at`.

A round is one chat: the question, then function calls and tool results, then the answer;
`follow_up` suggestions and `verbose` packets are not context. History = the last
`context_round` rounds of the same section. Coze exposes no summary memory through its API (its
long-term memory is not in the message list), so a drop is always rounds leaving the window; a
new section (the user cleared the context) is not a drop.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ctxaudit.engine.platforms.types import Conversation, PlatformError, as_dict, as_int, as_number, as_str
from ctxaudit.engine.platforms.window import Round
from ctxaudit.engine.types import Message

PLATFORM = "coze"
CONTEXT_TYPES = ("question", "function_call", "tool_output", "tool_response", "answer")
_TYPE_ORDER = {t: i for i, t in enumerate(CONTEXT_TYPES)}


def _json(name: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlatformError(name, f"not valid JSON ({exc.msg}, line {exc.lineno})") from exc


def _bot(name: str, text: str) -> dict[str, Any]:
    data = _json(name, text)
    if isinstance(data, dict) and isinstance(data.get("data"), dict) and "code" in data:
        data = data["data"]
    if not isinstance(data, dict) or not ("prompt_info" in data or "model_info" in data):
        raise PlatformError(name, "not a Coze bot configuration (no prompt_info / model_info)")
    return data


def _message_items(messages: list[tuple[str, str]]) -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for name, text in messages:
        data = _json(name, text)
        pages = (
            data
            if isinstance(data, list) and all(isinstance(d, dict) and "data" in d for d in data)
            else [data]
        )
        for page in pages:
            items = page.get("data") if isinstance(page, dict) else page
            if isinstance(items, dict) and isinstance(items.get("messages"), list):
                items = items["messages"]
            if not isinstance(items, list):
                raise PlatformError(name, 'expected the message list answer {"data": [...]}')
            for item in items:
                if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                    raise PlatformError(name, "each message must be an object with an id")
                found[item["id"]] = item
    return list(found.values())


def _text(item: dict[str, Any]) -> str:
    content = as_str(item.get("content"))
    if item.get("content_type") == "object_string":
        try:
            parts = json.loads(content)
        except ValueError:
            return content
        if isinstance(parts, list):
            texts = []
            for p in parts:
                if isinstance(p, dict):
                    text = as_str(p.get("text"))
                    texts.append(text if p.get("type") == "text" and text else f"[{p.get('type', 'file')}]")
            return "\n".join(texts)
    return content


def _message(item: dict[str, Any]) -> Message:
    kind = item.get("type")
    text = _text(item)
    if kind == "question":
        return Message(role="user", content=text)
    if kind == "function_call":
        return Message(role="assistant", content=f"[tool call {text}]")
    if kind in ("tool_output", "tool_response"):
        return Message(role="tool", content=text)
    return Message(role="assistant", content=text)


def read(
    config: tuple[str, str], messages: list[tuple[str, str]], *, context_tokens: int | None = None
) -> Conversation:
    """Read a Coze bot and one conversation. config: (file name, bot JSON); messages:
    [(file name, message list JSON)]. `context_tokens` is not used: Coze cuts by rounds.
    Raises PlatformError naming the file."""
    bot = _bot(*config)
    prompt = as_str(as_dict(bot.get("prompt_info")).get("prompt"))
    model = as_dict(bot.get("model_info"))
    rounds_kept = as_int(model.get("context_round"))
    items = [m for m in _message_items(messages) if m.get("type") in CONTEXT_TYPES]
    if not items:
        raise PlatformError(messages[0][0] if messages else config[0], "no question/answer messages")
    conv_ids = {m.get("conversation_id") for m in items}
    if len(conv_ids) > 1:
        raise PlatformError(
            messages[0][0], "messages of more than one conversation: give one conversation's pages"
        )

    def ts(m: dict[str, Any]) -> float:
        return as_number(m.get("created_at")) or 0.0

    chats: dict[str, list[dict[str, Any]]] = {}
    for m in sorted(items, key=lambda m: (ts(m), _TYPE_ORDER.get(str(m.get("type")), 9))):
        chats.setdefault(str(m.get("chat_id") or m["id"]), []).append(m)
    ordered = sorted(chats.items(), key=lambda kv: min(ts(m) for m in kv[1]))

    sections: list[list[Round]] = []
    last_section: object = object()
    for chat_id, msgs in ordered:
        msgs.sort(key=lambda m: (m.get("type") != "question", ts(m), _TYPE_ORDER.get(str(m.get("type")), 9)))
        section = msgs[0].get("section_id")
        if section != last_section or not sections:
            sections.append([])
            last_section = section
        first = min(ts(m) for m in msgs)
        sections[-1].append(
            Round(
                id=chat_id,
                messages=tuple(_message(m) for m in msgs),
                created_at=datetime.fromtimestamp(first, UTC) if first else None,
                in_memory=any(m.get("type") == "answer" for m in msgs),
            )
        )
    return Conversation(
        platform=PLATFORM,
        conversation_id=str(conv_ids.pop() or config[0]),
        system=Message(role="system", content=prompt) if prompt.strip() else None,
        sections=tuple(tuple(s) for s in sections),
        max_rounds=rounds_kept,
        metadata={
            k: v
            for k, v in {
                "bot_id": bot.get("bot_id"),
                "bot_name": bot.get("name"),
                "model": model.get("model_name"),
                "context_round": rounds_kept,
                "sections": [len(s) for s in sections],
            }.items()
            if v is not None
        },
    )
