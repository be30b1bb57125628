"""Tool results are named by their tool, in both OpenAI and Anthropic contexts."""

from __future__ import annotations

from ctxaudit.engine.formats import parse_context


def test_it_names_anthropic_tool_results_by_their_tool() -> None:
    ctx = parse_context(
        {
            "system": "Be careful.",
            "messages": [
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "tu_1", "name": "fetch_page", "input": {"url": "x"}}
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "page text"}],
                },
            ],
        },
        format="anthropic",
    )
    assert [(m.role, m.name) for m in ctx.messages] == [
        ("system", None),
        ("assistant", None),
        ("tool", "fetch_page"),
    ]
