"""Harness text as the user: the compaction prompt left in the after-context in the user role (issue 12 §5).

Agent tools compact by sending the model a prompt — "Your task is to create a detailed summary of
the conversation so far… do not call any tools" (Claude Code), "You are performing a CONTEXT
CHECKPOINT COMPACTION. Create a handoff summary for another LLM…" (Codex CLI,
codex-rs/core/templates/compact/prompt.md) — usually as a user message. When that prompt stays in
the after-context in the user role, the next turn reads it as the user's standing instruction
(summarise again, never call tools).

``harness_text_as_user`` (HIGH): a user-role after message holding, within one passage of
``SPAN`` characters, an address to the summariser or an imperative to summarise the conversation
and at least one more compaction-prompt feature:

1. address: "you are summarizing…", "your task is to create a summary…", "you are performing a
   … compaction", "你是一个对话摘要助手", "你的任务是总结…";
2. imperative: "summarize the conversation", "create a detailed summary", "condense the
   history", "compress the conversation above into a summary", "请总结以上对话", "生成一份交接摘要",
   "把上面的对话压缩成一段摘要" (the conversation, never a report or a file, turned into a summary);
3. tool constraint: "do not call any tools", "respond with text only", "不要调用任何工具";
4. output spec: "<summary>", "your summary should include", "Output ONLY the summary",
   "摘要应包括", "只输出文字";
5. purpose: "context window", "another LLM that will resume", "being compacted", "上下文窗口".

A user who asks "can you summarise what we did?" has one feature and is not flagged; the
summary a tool writes ("This session is being continued… summarized below") states none of them.
Known miss: a compaction prompt written as one plain sentence with no other feature.
"""

from __future__ import annotations

import re

from ctxaudit.engine.analysis import Analysis
from ctxaudit.engine.language.clauses import has_cjk
from ctxaudit.engine.types import Finding, Severity, Span

# Features must fall within one passage of this many characters (a long summary that mentions a
# "context window" in one section and "create a summary" in another is not a prompt).
SPAN = 1_500

_ADDRESS = re.compile(
    r"\byou are (?:now )?(?:a |an |the )?(?:\w+ ){0,2}?summari[sz](?:er|ing)\b|\byour (?:task|job|goal) is to (?:\w+ ){0,3}?(?:summar\w*|condens\w*|compact\w*)"
    r"|\byou are (?:performing|doing|running) an? (?:\w+ ){0,3}?compaction\b|\byou are tasked with (?:creating|writing|producing) an? (?:\w+ ){0,3}?summary"
    r"|你(?:是|现在是|将作为)(?:一个|一名)?(?:对话|会话)?(?:摘要|总结|压缩)(?:助手|员|器|专家)|你的任务是(?:对|为|生成|总结|撰写|压缩)",
    re.I,
)
_IMPERATIVE = re.compile(
    r"(?:^|[.!\n:]\s*|\bplease\s+|\bnow\s+)(?:summari[sz]e|condense|compact|recap)\s+(?:the|this|our|all|everything|entire|your)\b"
    r"|\b(?:create|write|produce|generate|provide|prepare)\s+(?:a|an|the)\s+(?:\w+\s+){0,3}?(?:summary|handoff|recap)\b"
    r"|(?:请|需要)?(?:总结|概括|压缩|归纳)(?:一下)?(?:以上|上面|上述|之前|前面|整个|全部|目前为止)的?(?:对话|会话|聊天|上下文|历史|内容)"
    r"|(?:生成|撰写|输出|写)(?:一份|一个|一段)[^。\n]{0,10}?(?:摘要|总结|交接)"
    # "请对上述对话进行压缩总结", "对以上内容做一个总结": 对 + the conversation + (进行/做) + summarise
    r"|对(?:以上|上面|上述|之前|前面|整个|全部|目前为止)的?(?:对话|会话|聊天|上下文|历史|内容)(?:记录)?(?:进行|做)?(?:一下|一个|一次)?(?:压缩|总结|概括|归纳|摘要)"
    # "compress the conversation above into a summary", "turn everything above into a handoff"
    r"|\b(?:compress|condense|distill?|shorten|turn|convert|reduce|boil)\s+(?:the|this|our|all|everything|entire)\s*"
    r"(?:\w+\s+){0,2}?(?:conversation|chat|history|context|discussion|messages|thread|session|everything|above)\b"
    r"[^.\n]{0,40}?\b(?:into|to|down to)\s+(?:a|an|one)\s+(?:\w+\s+){0,3}?(?:summary|recap|handoff)\b"
    # "把上面的对话压缩成一段摘要", "将以上全部对话整理成一份总结": the conversation turned into a summary
    r"|(?:把|将)[^。\n，,]{0,8}?(?:对话|会话|聊天|上下文|历史)(?:记录|内容)?[^。\n，,]{0,4}?(?:压缩|总结|概括|归纳|整理|浓缩|提炼)(?:成|为)",
    re.I,
)
_TOOLS = re.compile(
    r"\bdo not (?:call|use|invoke|make) (?:any )?(?:tools?|tool calls|functions)\b|\b(?:respond|reply|answer) with (?:plain )?text only\b|\btool calls will be (?:rejected|ignored)\b"
    r"|\bwithout (?:calling|using) (?:any )?tools\b|\bno tool (?:calls|use)\b|不要(?:调用|使用)(?:任何)?工具|不得调用工具|(?:只|仅)(?:用|以)(?:纯)?文本(?:回复|回答)",
    re.I,
)
_FORMAT = re.compile(
    r"<summary>|<analysis>|\byour summary should (?:include|contain|cover)\b|\boutput only the summary\b|\bthe summary should\b"
    r"|\b(?:reply|respond|answer) with (?:the )?summary only\b|只输出(?:文字|文本)|仅输出(?:文字|文本|摘要|总结)|只返回(?:摘要|总结|文字)"
    r"|\b(?:required sections|output format)\s*:|\bdo not include\s*:|\bpreserve\s*:|\binclude\s*:|\bfocus on\s*:"
    r"|摘要(?:应|需要|必须)(?:包括|包含|涵盖)|输出格式|只输出摘要|包括以下(?:内容|部分)",
    re.I,
)
_PURPOSE = re.compile(
    r"\bcontext window\b|\bfree (?:up )?(?:the )?context\b|\b(?:the )?next (?:llm|agent|model|assistant)\b|\banother (?:llm|language model|agent|model)\b"
    r"|\bresume the (?:task|work)\b|\bbeing compacted\b|\bcontext (?:checkpoint|compaction)\b"
    r"|上下文窗口|下一个(?:模型|智能体|助手)|(?:压缩|腾出)上下文|接手(?:这项)?(?:任务|工作)",
    re.I,
)
_FEATURES = (
    ("address", _ADDRESS),
    ("imperative", _IMPERATIVE),
    ("tools", _TOOLS),
    ("format", _FORMAT),
    ("purpose", _PURPOSE),
)


# Every "address" and "imperative" alternative above holds one of these (lower-cased), and a
# prompt needs one of those two features: a message without any of them is skipped unscanned
# (five regexes over a 3 MB tool dump took most of this check's time).
_NEEDED = (
    "summar",
    "condens",
    "compact",
    "recap",
    "handoff",
    "总结",
    "概括",
    "压缩",
    "归纳",
    "摘要",
    "交接",
    "你的任务是",
)


def prompt_span(content: str) -> tuple[int, int, list[str]] | None:
    """(start, end, feature names) of the passage of `content` that reads as a compaction prompt,
    or None (see the module docstring for the features and the rule)."""
    low = content.lower()
    if not any(k in low for k in _NEEDED):
        return None
    hits: list[tuple[int, int, str]] = []
    for name, pattern in _FEATURES:
        for m in pattern.finditer(content):
            hits.append((m.start(), m.end(), name))
    if not hits:
        return None
    hits.sort()
    best: tuple[int, int, list[str]] | None = None
    j = 0
    for i in range(len(hits)):
        while hits[i][0] - hits[j][0] > SPAN:
            j += 1
        window = hits[j : i + 1]
        names = sorted({h[2] for h in window})
        prompt_like = len(names) >= 2 and ("address" in names or "imperative" in names)
        if prompt_like and (best is None or len(names) > len(best[2])):
            best = (window[0][0], max(h[1] for h in window), names)
    return best


def check_harness_text(a: Analysis) -> list[Finding]:
    """Findings ``harness_text_as_user`` (HIGH) for one event: evidence is the prompt passage in
    the after-context (side "after"), `data` the features found."""
    out: list[Finding] = []
    for index, m in enumerate(a.after.messages):
        if m.role != "user" or not m.content:
            continue
        found = prompt_span(m.content)
        if found is None:
            continue
        start, end, names = found
        # Quote from the start of the line the passage begins on.
        line_start = m.content.rfind("\n", 0, start) + 1
        start = line_start if start - line_start < 200 else start
        quote = m.content[start:end]
        short = " ".join(quote.split())
        short = short if len(short) <= 160 else short[:159] + "…"
        en = (
            f"Harness text in the user role: after compression user message #{index} still holds the compaction prompt "
            f"(“{short}”; {', '.join(names)}). The next turn reads it as the user's standing instruction; the tool "
            "should drop the prompt once the summary is written."
        )
        if has_cjk(quote):
            msg = (
                f"压缩提示词留在了用户角色中：压缩后的用户消息 #{index} 仍包含压缩用的提示词（“{short}”），"
                f"下一轮会把它当成用户的长期指令（总结、不调用工具等）；摘要写好后应删除该提示词。 / {en}"
            )
        else:
            msg = en
        out.append(
            Finding(
                "harness_text_as_user",
                Severity.HIGH,
                msg,
                evidence=(Span("after", index, start, end, quote),),
                data={"features": names, "copied": a.index.source_of(m) is not None},
            )
        )
    return out
