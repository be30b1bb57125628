"""Dify: an app's exported DSL (YAML) and one conversation's messages → window-drop events.

Formats, from Dify's own source and API reference:
- DSL export (`kind: app`, `app.mode`): chat/agent-chat/completion apps carry `model_config`
  with `pre_prompt` (simple prompt, `{{variable}}` placeholders filled from the conversation's
  `inputs`), `prompt_type` "simple"|"advanced" and `chat_prompt_config.prompt`
  [{role, text}], and `model.completion_params.max_tokens`; chatflow apps
  (`advanced-chat`/`workflow`) carry `workflow.graph.nodes`, whose LLM nodes (`data.type:
  llm`) hold `prompt_template` [{role, text}] and `memory` = {window: {enabled, size},
  query_prompt_template, role_prefix} — MemoryConfig in langgenius/dify
  api/core/prompt/entities/advanced_prompt_entities.py @ e084edb3937e6efadacdf736e4ea3d15589b5913.
- Memory: api/core/memory/token_buffer_memory.py @ 00d1c45518c8009543feb726d7de5f78ea02a61b —
  the conversation's last `window.size` messages (rounds; 500 at most when the window is off)
  whose answer is not empty, each a user `query` + assistant `answer`, oldest first; then,
  while over the round's token budget (the model's context size − `max_tokens` − the prompt),
  the oldest *message* is dropped, one at a time, at least one kept.
- Messages API: `GET /v1/messages?conversation_id=…&user=…&first_id=…&limit=…` →
  `{"limit", "has_more", "data": [{"id", "conversation_id", "inputs", "query", "answer",
  "message_files", "feedback", "retriever_resources", "agent_thoughts", "created_at",
  "status", "error"}]}` (https://docs.dify.ai/api-reference/会话管理/获取会话历史消息); pages
  may be given in any order, messages are put in `created_at` order.

Dify has no summary memory of its own: a drop is always messages leaving the window. The token
budget needs the model's context size, which the DSL does not hold: pass `context_tokens`.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from ctxaudit.engine.platforms.types import Conversation, PlatformError, as_dict, as_int, as_number, as_str
from ctxaudit.engine.platforms.window import Round
from ctxaudit.engine.types import Message

PLATFORM = "dify"
MESSAGE_LIMIT = 500  # TokenBufferMemory's cap on rounds read back
CHAT_MODES = ("chat", "agent-chat", "completion")
FLOW_MODES = ("advanced-chat", "workflow")
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def _load_yaml(text: str, name: str) -> dict[str, Any]:
    try:
        import yaml
    except ImportError as exc:  # PyYAML is a dependency of ctxaudit; only a broken install lacks it
        raise PlatformError(name, "reading a Dify DSL needs PyYAML") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PlatformError(name, f"not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("app"), dict):
        raise PlatformError(name, "not a Dify DSL export (no `app:` section)")
    return data


def _system_texts(prompts: Any) -> list[str]:
    if isinstance(prompts, dict):  # a completion-model template: {"text": ...}
        prompts = [prompts]
    out = []
    for p in prompts if isinstance(prompts, list) else []:
        if isinstance(p, dict) and p.get("role", "system") == "system" and isinstance(p.get("text"), str):
            out.append(p["text"])
    return out


def _settings(dsl: dict[str, Any], name: str) -> tuple[str, int | None, int | None, dict[str, Any]]:
    """(system prompt template, window rounds, max_tokens, metadata) of the app's model call."""
    mode = dsl["app"].get("mode")
    meta: dict[str, Any] = {"app_mode": mode, "app_name": dsl["app"].get("name")}
    if mode in CHAT_MODES:
        mc = dsl.get("model_config") or {}
        if not isinstance(mc, dict):
            raise PlatformError(name, "model_config must be a mapping")
        if mc.get("prompt_type") == "advanced":
            texts = _system_texts((mc.get("chat_prompt_config") or {}).get("prompt"))
        else:
            texts = [mc["pre_prompt"]] if isinstance(mc.get("pre_prompt"), str) else []
        model = as_dict(mc.get("model"))
        meta.update({"model": model.get("name"), "memory_window": None})
        max_tokens = as_int(as_dict(model.get("completion_params")).get("max_tokens"))
        return "\n\n".join(t for t in texts if t.strip()), MESSAGE_LIMIT, max_tokens, meta
    if mode in FLOW_MODES:
        nodes = as_dict(as_dict(dsl.get("workflow")).get("graph")).get("nodes")
        llm = [as_dict(n.get("data")) for n in nodes or [] if isinstance(n, dict)]
        with_memory = [d for d in llm if d.get("type") == "llm" and isinstance(d.get("memory"), dict)]
        if not with_memory:
            raise PlatformError(name, "no LLM node with memory: the model never sees earlier turns")
        node = with_memory[0]
        window = as_dict(as_dict(node.get("memory")).get("window"))
        size = as_int(window.get("size")) if window.get("enabled") else None
        model = as_dict(node.get("model"))
        meta.update({"model": model.get("name"), "llm_node": node.get("title"), "memory_window": size})
        max_tokens = as_int(as_dict(model.get("completion_params")).get("max_tokens"))
        rounds = min(size, MESSAGE_LIMIT) if size and size > 0 else MESSAGE_LIMIT
        return "\n\n".join(_system_texts(node.get("prompt_template"))), rounds, max_tokens, meta
    raise PlatformError(name, f"app.mode {mode!r} is not a conversational Dify app")


def _messages(texts: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Every message object of the given API responses (one page, a list of pages, or a list
    of messages), de-duplicated by id, in created_at order."""
    found: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for name, text in texts:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PlatformError(name, f"not valid JSON ({exc.msg}, line {exc.lineno})") from exc
        pages = (
            data
            if isinstance(data, list) and all(isinstance(d, dict) and "data" in d for d in data)
            else [data]
        )
        for page in pages:
            items = page.get("data") if isinstance(page, dict) else page
            if not isinstance(items, list):
                raise PlatformError(name, 'expected the messages API answer {"data": [...]}')
            for item in items:
                if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                    raise PlatformError(name, "each message must be an object with an id")
                if item["id"] not in found:
                    order.append(item["id"])
                found[item["id"]] = item
    msgs = [found[i] for i in order]
    return sorted(msgs, key=lambda m: as_number(m.get("created_at")) or 0.0)


def _fill(template: str, inputs: Any) -> str:
    values = inputs if isinstance(inputs, dict) else {}
    return _PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), m.group(0))), template)


def read(
    config: tuple[str, str], messages: list[tuple[str, str]], *, context_tokens: int | None = None
) -> Conversation:
    """Read a Dify app and one conversation. config: (file name, DSL YAML text); messages:
    [(file name, messages API JSON text)]; context_tokens: the model's context size, to replay
    the token budget (None: the round window only). Raises PlatformError naming the file."""
    dsl = _load_yaml(config[1], config[0])
    template, max_rounds, max_tokens, meta = _settings(dsl, config[0])
    items = _messages(messages)
    if not items:
        raise PlatformError(messages[0][0] if messages else config[0], "no messages")
    conv_ids = {m.get("conversation_id") for m in items}
    if len(conv_ids) > 1:
        raise PlatformError(
            messages[0][0], "messages of more than one conversation: give one conversation's pages"
        )
    system_text = _fill(template, items[0].get("inputs"))
    rounds = []
    for m in items:
        query, answer = as_str(m.get("query")), as_str(m.get("answer"))
        ts = as_number(m.get("created_at"))
        when = datetime.fromtimestamp(ts, UTC) if ts is not None else None
        rounds.append(
            Round(
                id=m["id"],
                messages=(Message(role="user", content=query), Message(role="assistant", content=answer)),
                created_at=when,
                in_memory=answer != "",
            )
        )
    budget = None
    if context_tokens:
        reserve = max_tokens or 0
        budget = (context_tokens, reserve)
    return Conversation(
        platform=PLATFORM,
        conversation_id=str(conv_ids.pop() or config[0]),
        system=Message(role="system", content=system_text) if system_text.strip() else None,
        sections=(tuple(rounds),),
        max_rounds=max_rounds,
        token_budget=budget,
        metadata={k: v for k, v in meta.items() if v is not None},
    )
