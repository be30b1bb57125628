"""The compaction prompt left in the user role (harness_text_as_user): prompts phrased in ways the
first patterns did not list, and user requests that only look like one. Expected values written
before the patterns were extended."""

from __future__ import annotations

import pytest

from ctxaudit.engine.checks.harness_text import prompt_span

PROMPTS = [
    # the 把 construction, "into a summary", a text-only output spec
    "请把上面的对话压缩成一段摘要，保留关键决定和待办事项，不要调用任何工具，只输出文字。",
    "把我们之前的聊天记录浓缩为一份交接摘要，只输出摘要本身，不要使用工具。",
    "将以上全部对话整理成一份简短的总结，供下一个模型继续工作。",
    "Please compress the conversation above into a short summary. Do not call any tools.",
    "Turn everything above into a concise handoff summary for the next agent; reply with text only.",
    "Condense our entire chat so far into a recap. Output only the summary, nothing else.",
    "Boil the conversation above down to a summary that another model can resume from.",
]

NOT_PROMPTS = [
    # a user's own tasks about documents, and a one-feature request about the chat
    "把上面的报告压缩成一段摘要发给老板。",
    "请把这份会议纪要整理成一份总结，明天发给客户。",
    "Can you summarize what we did today?",
    "Please compress the log files above into a zip archive and do not call the upload tool yet.",
    "Turn the spreadsheet above into a summary table for the finance team.",
    "不要调用任何工具，先告诉我你的计划。",
]


@pytest.mark.parametrize("text", PROMPTS)
def test_compaction_prompts_are_found(text: str) -> None:
    found = prompt_span(text)
    assert found is not None, text
    assert len(found[2]) >= 2


@pytest.mark.parametrize("text", NOT_PROMPTS)
def test_user_requests_are_not_compaction_prompts(text: str) -> None:
    assert prompt_span(text) is None, text
