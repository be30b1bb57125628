"""OpenAI Responses API input items: `message` (input_text/output_text parts), `function_call`,
`function_call_output`, `reasoning`, `compaction`, built-in tool calls; optionally wrapped as
`{"instructions", "input"}` like a request body.

Sources: openai/openai-python src/openai/types/responses/response_input_item_param.py at
04448952820aa3029e61907c1785a7293c3ddbc2 (the item union: Message, FunctionCallOutput, …) and
response_compaction_item_param_param.py at 1039d5637779e035263019a687b562d3ab5d2c1a
(`{"type": "compaction", "encrypted_content", "id"?}`: opaque, so the compacted history cannot be
read: such an event is counted as an unauditable compaction, never as a pass).
"""

from __future__ import annotations

from typing import Any

from ctxaudit.engine.formats.common import ENCRYPTED, ContextFormatError, json_text, parts_text, role_of
from ctxaudit.engine.types import Message

NAME = "openai-responses"

# Items that only a Responses API history holds.
_ITEM_TYPES = frozenset(
    {
        "function_call",
        "function_call_output",
        "reasoning",
        "compaction",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "computer_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "mcp_call",
        "item_reference",
    }
)
_CALL_OUTPUTS = frozenset(
    {"function_call_output", "custom_tool_call_output", "computer_call_output", "local_shell_call_output"}
)
_PART_TYPES = frozenset({"input_text", "output_text", "input_image", "input_file", "refusal"})


def detect(raw: Any) -> bool:
    """A `{"input": [...]}` body, or a list holding a Responses-only item or content part."""
    if isinstance(raw, dict):
        return isinstance(raw.get("input"), list | str) and "messages" not in raw
    if not isinstance(raw, list):
        return False
    for item in raw:
        if not isinstance(item, dict):
            continue
        if item.get("type") in _ITEM_TYPES:
            return True
        content = item.get("content")
        if isinstance(content, list) and any(
            isinstance(p, dict) and p.get("type") in _PART_TYPES for p in content
        ):
            return True
    return False


def read(raw: Any, field: str) -> list[Message]:
    """Normalise a Responses history. Raises ContextFormatError naming the item."""
    out: list[Message] = []
    items: Any = raw
    if isinstance(raw, dict):
        instructions = raw.get("instructions")
        if instructions is not None:
            if not isinstance(instructions, str):
                raise ContextFormatError(f"{field}.instructions", "must be a string")
            out.append(Message(role="system", content=instructions))
        items = raw.get("input", [])
        field = f"{field}.input"
    if isinstance(items, str):
        return [*out, Message(role="user", content=items)]
    if not isinstance(items, list):
        raise ContextFormatError(field, "must be a list of input items")
    call_names: dict[str, str] = {}
    for i, item in enumerate(items):
        f = f"{field}[{i}]"
        if not isinstance(item, dict):
            raise ContextFormatError(f, "must be an input item object")
        kind = item.get("type")
        if kind in (None, "message"):
            role = role_of(item.get("role"), f"{f}.role")
            out.append(Message(role=role, content=_content(item.get("content"), f"{f}.content")))
        elif kind in ("function_call", "custom_tool_call"):
            raw_name = item.get("name")
            name = raw_name if isinstance(raw_name, str) else "?"
            if isinstance(item.get("call_id"), str):
                call_names[item["call_id"]] = name
            args = item.get("arguments", item.get("input", ""))
            out.append(Message(role="assistant", content=f"[tool call {name}({json_text(args)})]"))
        elif kind in _CALL_OUTPUTS:
            call_id = item.get("call_id")
            output = item.get("output", "")
            text = output if isinstance(output, str) else _content(output, f"{f}.output")
            out.append(
                Message(
                    role="tool",
                    content=text,
                    name=call_names.get(call_id) if isinstance(call_id, str) else None,
                )
            )
        elif kind == "reasoning":
            continue  # the model's own scratch work, not an instruction later turns obey
        elif kind == "compaction":
            out.append(Message(role="system", content=ENCRYPTED, kind="encrypted_compaction"))
        elif kind == "item_reference":
            out.append(
                Message(role="system", content=f"[reference to stored item {json_text(item.get('id'))}]")
            )
        else:
            # built-in tool calls (web_search_call, mcp_call, …): what was called, as text
            out.append(
                Message(
                    role="assistant",
                    content=f"[{kind} {json_text({k: v for k, v in item.items() if k != 'type'})}]",
                )
            )
    return out


def _content(content: Any, field: str) -> str:
    if isinstance(content, list):
        return parts_text(
            [p for p in content if not (isinstance(p, dict) and p.get("type") == "refusal")], field
        ) + "".join(
            f"\n[refusal] {p.get('refusal', '')}"
            for p in content
            if isinstance(p, dict) and p.get("type") == "refusal"
        )
    return parts_text(content, field)
