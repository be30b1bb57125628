"""Checklist step 6: the same input, uncompressed. Builds the replay bundle (the final user request
sent once with the before-context and once with the after-context) as ready-to-send OpenAI Chat
Completions and Anthropic Messages request bodies, and calls an OpenAI-compatible endpoint.

`chat_completion` is the one seam that talks to the network; tests point it at a local fake
server on 127.0.0.1 (with CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS on). Nothing calls it unless a project
admin configured an endpoint; every connection re-checks the address (ctxaudit.core.netguard).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from ctxaudit.core import netguard

PLACEHOLDER_MODEL = "MODEL"
MAX_TOKENS = 1024
TIMEOUT_SECONDS = 60
MAX_ANSWER_BYTES = 1_000_000


def final_user_request(before: list[dict[str, Any]], metadata: dict[str, Any] | None = None) -> str:
    """The request to replay: metadata "next_user_message" (the agent's next turn, when the event
    carried it), else the last user message of the before-context, else ""."""
    meta = metadata or {}
    for key in ("next_user_message", "next_turn", "final_user_request"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if (
            isinstance(value, dict)
            and isinstance(value.get("content"), str)
            and value.get("role", "user") == "user"
        ):
            return str(value["content"])
    for m in reversed(before):
        if m.get("role") == "user" and (m.get("content") or "").strip():
            return str(m["content"])
    return ""


def _with_request(messages: list[dict[str, Any]], prompt: str) -> list[dict[str, Any]]:
    msgs = [
        {
            "role": m["role"],
            "content": m.get("content") or "",
            **({"name": m["name"]} if m.get("name") else {}),
        }
        for m in messages
    ]
    # The before-context often already ends with the request; don't send it twice.
    if prompt and not (msgs and msgs[-1]["role"] == "user" and msgs[-1]["content"] == prompt):
        msgs.append({"role": "user", "content": prompt})
    return msgs


def openai_messages(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Our normalised messages → Chat Completions messages. Tool output has no tool_call_id left
    to pair with, so it goes in as a labelled user message (it is untrusted content either way)."""
    out = []
    for m in messages:
        role = m["role"]
        content = m["content"]
        if role == "tool":
            role, content = "user", f"[tool output{' ' + m['name'] if m.get('name') else ''}]\n{content}"
        out.append({"role": role, "content": content})
    return out


def anthropic_body(messages: list[dict[str, Any]], model: str) -> dict[str, Any]:
    """Our normalised messages → a Messages API body: leading system/developer messages become
    `system`; later ones, and tool output, become labelled user turns; same-role turns are joined."""
    system_parts: list[str] = []
    turns: list[dict[str, str]] = []
    for m in messages:
        role, content = m["role"], m["content"] or "(empty)"
        if role in ("system", "developer") and not turns:
            system_parts.append(content)
            continue
        if role in ("system", "developer", "tool"):
            label = f"[{role}{' ' + m['name'] if m.get('name') else ''}]"
            role, content = "user", f"{label}\n{content}"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + content
        else:
            turns.append({"role": role, "content": content})
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": "(conversation start)"})
    body: dict[str, Any] = {"model": model, "max_tokens": MAX_TOKENS}
    if system_parts:
        body["system"] = "\n\n".join(system_parts)
    body["messages"] = turns
    return body


def replay_bundle(
    *, before: list[dict[str, Any]], after: list[dict[str, Any]], prompt: str, model: str | None = None
) -> dict[str, Any]:
    """{"prompt", "openai": {"before", "after"}, "anthropic": {"before", "after"}}: four request bodies."""
    name = model or PLACEHOLDER_MODEL
    b, a = _with_request(before, prompt), _with_request(after, prompt)
    return {
        "prompt": prompt,
        "openai": {
            "endpoint": "POST /v1/chat/completions",
            "before": {"model": name, "temperature": 0, "messages": openai_messages(b)},
            "after": {"model": name, "temperature": 0, "messages": openai_messages(a)},
        },
        "anthropic": {
            "endpoint": "POST /v1/messages",
            "before": anthropic_body(b, name),
            "after": anthropic_body(a, name),
        },
    }


class ReplayError(RuntimeError):
    """The endpoint could not be reached or answered something unreadable; the message says which."""


def chat_completion(
    *, base_url: str, api_key: str, body: dict[str, Any], timeout: float = TIMEOUT_SECONDS
) -> str:
    """POST `body` to {base_url}/chat/completions; return choices[0].message.content. Raises ReplayError."""
    url = base_url.rstrip("/") + "/chat/completions"
    if not url.startswith(("http://", "https://")):
        raise ReplayError("the endpoint URL must start with http:// or https://")
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")  # noqa: S310 - scheme checked above
    try:
        netguard.check_url(url)
        with netguard.opener().open(req, timeout=timeout) as resp:
            raw = resp.read(MAX_ANSWER_BYTES + 1)
    except netguard.Unresolvable as exc:
        raise ReplayError(f"could not reach the endpoint: {exc}") from None
    except netguard.UnsafeURL as exc:
        raise ReplayError(f"the endpoint is refused: {exc}") from None
    except urllib.error.HTTPError as exc:
        raise ReplayError(f"the endpoint answered HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise ReplayError(f"could not reach the endpoint: {getattr(exc, 'reason', exc)}") from None
    if len(raw) > MAX_ANSWER_BYTES:
        raise ReplayError("the endpoint's answer is larger than 1 MB")
    try:
        data = json.loads(raw)
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ReplayError("the endpoint's answer is not a Chat Completions response") from None
    if isinstance(content, list):  # content parts
        content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")
