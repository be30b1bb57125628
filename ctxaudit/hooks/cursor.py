"""`ctxaudit hook cursor`: Cursor's `preCompact` hook → ctxaudit.

Hook input (stdin JSON), from Cursor's hooks documentation (https://cursor.com/docs/agent/hooks)
as read by two public integrations that parse it:
openlit/openlit cli/internal/coding/hook/cursor/handle.go @ 20f3f5db6b8a71006d57c8ffd137a40fc6f19bca
(preCompact fields) and entireio/cli cmd/entire/cli/agent/cursor/AGENT.md @
126f2ac177cad67107c96914975d17d66824891b (common fields, captured payloads). Common fields:
`conversation_id`, `generation_id`, `model`, `hook_event_name`, `cursor_version`,
`workspace_roots`, `transcript_path` (null in the CLI); preCompact adds `trigger`,
`context_usage_percent`, `context_tokens`, `context_window_size`, `message_count`,
`messages_to_compact`, `is_first_compaction`. The hook is observational: it cannot block.

Cursor hands hooks no summary text, before or after. So the event is recorded as an
unauditable compaction, with its figures in `metadata`: the after-context is one marker message
(`kind: "encrypted_compaction"`, which the engine counts as unauditable), and the before-context
is the conversation from `transcript_path` when Cursor gives one (its JSONL lines
`{"role", "message": {"content": [blocks]}}`), else empty. Coverage stays honest: the
compaction is counted, and nothing claims it kept the rules.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxaudit.hooks.sending import Sender
from ctxaudit.hooks.settings import HookSettings

FIGURES = (
    "trigger",
    "context_usage_percent",
    "context_tokens",
    "context_window_size",
    "message_count",
    "messages_to_compact",
    "is_first_compaction",
    "cursor_version",
    "generation_id",
)
UNAUDITABLE_AFTER = "[Cursor compaction: the summary is not available to hooks; content not auditable]"


class HookInputError(ValueError):
    """The hook's stdin is not what Cursor sends (named field)."""


# Cursor wraps what the user typed: an optional leading <timestamp>…</timestamp>, then
# <user_query>…</user_query> (entireio/cli AGENT.md above). The wrapper is Cursor's, not the user's.
_TIMESTAMP = re.compile(r"\A\s*<timestamp>.*?</timestamp>\s*", re.S)
_USER_QUERY = re.compile(r"\A\s*<user_query>\s*(.*?)\s*</user_query>\s*\Z", re.S)


def _user_text(text: str) -> str:
    text = _TIMESTAMP.sub("", text, count=1)
    m = _USER_QUERY.match(text)
    return m.group(1) if m else text


def _block_text(content: Any) -> str:
    """Text of a Cursor message's content (a string or Anthropic-style blocks: text, tool_use)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "tool_use":
            args = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
            parts.append(f"[tool call {block.get('name', '?')}({args})]")
        elif block.get("type") == "tool_result":
            parts.append(_block_text(block.get("content")))
    return "\n".join(p for p in parts if p)


def _transcript_messages(path: Any) -> list[dict[str, Any]]:
    """The conversation in Cursor's agent transcript as [{"role", "content"}]; [] when absent."""
    if not isinstance(path, str) or not path:
        return []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    out: list[dict[str, Any]] = []
    for raw in lines:
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("role") not in ("user", "assistant"):
            continue
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        text = _block_text(content)
        if entry["role"] == "user":
            text = _user_text(text)
        if text:
            out.append({"role": entry["role"], "content": text})
    return out


def _sequence(settings: HookSettings, conversation_id: str, generation_id: str) -> int:
    """1, 2, … per conversation, kept in ~/.ctxaudit/state/cursor/ (the same generation twice
    keeps its number)."""
    folder = settings.private_dir("state", "cursor")
    path = folder / (hashlib.sha256(conversation_id.encode()).hexdigest()[:32] + ".json")
    try:
        seen = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(seen, list):
            seen = []
    except (OSError, ValueError):
        seen = []
    if generation_id not in seen:
        seen.append(generation_id)
        path.write_text(json.dumps(seen), encoding="utf-8")
        path.chmod(0o600)
    return seen.index(generation_id) + 1


def event_for(settings: HookSettings, payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(Idempotency-Key, body) of one preCompact. Key: `cursor:<conversation_id>:<generation_id>`."""
    conversation_id = payload.get("conversation_id") or payload.get("session_id")
    if not isinstance(conversation_id, str) or not conversation_id:
        raise HookInputError("conversation_id: missing")
    generation_id = payload.get("generation_id")
    if not isinstance(generation_id, str) or not generation_id:
        # Without a generation id the compaction is told apart by when it happened.
        generation_id = datetime.now(UTC).isoformat()
    before = _transcript_messages(payload.get("transcript_path"))
    figures = {
        k: payload[k] for k in FIGURES if k in payload and isinstance(payload[k], str | int | float | bool)
    }
    model = payload.get("model")
    body: dict[str, Any] = {
        "session_id": conversation_id[:200],
        "sequence": _sequence(settings, conversation_id, generation_id),
        "strategy": "summary",
        "model": model[:200] if isinstance(model, str) and model else None,
        "format": "generic",
        "before": before,
        "after": [{"role": "system", "content": UNAUDITABLE_AFTER, "kind": "encrypted_compaction"}],
        "metadata": {
            **figures,
            "source": "cursor:preCompact",
            "unauditable": True,
            "unauditable_reason": "Cursor's preCompact hook carries figures, not the summary text",
        },
    }
    return f"cursor:{conversation_id[:80]}:{generation_id[:80]}", body


def handle(settings: HookSettings, payload: dict[str, Any], sender: Sender) -> dict[str, Any] | None:
    """Run one Cursor hook event. preCompact → POST /api/v1/events; other events are ignored.
    Prints `{}` (Cursor reads hook stdout as JSON)."""
    if payload.get("hook_event_name") == "preCompact":
        key, body = event_for(settings, payload)
        sender.post(key, body)
    return {}
