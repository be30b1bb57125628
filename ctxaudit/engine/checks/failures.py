"""Compactions that failed outright (seen in the wild), and compactions that cannot be audited.

Findings (kind, severity):

- ``summary_is_error`` (HIGH): the text the compressor wrote is an error message ("Error: 429 Too
  Many Requests", "Traceback …", "摘要生成失败") — the model lost its history to an error string.
- ``summary_is_refusal`` (HIGH): the written summary is a refusal ("I'm sorry, but I can't …",
  "抱歉，我无法…").
- ``summary_empty`` (HIGH): the written summary is empty or a placeholder ("", "...", "TODO",
  "[summary]", "{{summary}}", a bare "【历史摘要】").
- ``history_wiped`` (HIGH): the before-context held conversation, the after-context holds none
  (no user/assistant/tool message, no summary anywhere).
- ``tool_pair_broken`` (MEDIUM): after the cut a tool result has no call before it, or a call has
  fewer results after it than it had in the before-context (providers reject such contexts, and
  the agent may redo the action).
- ``compaction_loop`` (MEDIUM): many compressions in few turns. Needs the event's metadata:
  ``recent_compactions`` (int, compressions in the session within the last ``recent_turns``
  turns, this one included) and ``recent_turns`` (int) — looping when recent_compactions ≥ 3 and
  recent_turns ≤ 2 × recent_compactions; or ``turns_since_last_compaction`` == 0 (a compression
  right after a compression, with no turn between).
- ``unauditable_compaction`` (LOW): a server-side, encrypted compaction item (OpenAI/Anthropic
  "compaction", parsed to ``Message(kind="encrypted_compaction")``): what the model sees there
  cannot be read, so no check can say what it kept. Reported and counted
  (``AuditReport.unauditable_compactions``) so coverage figures stay honest.

Known false positives: a summary that quotes an error the user was debugging as its first line
("Error: connection refused when …") reads as summary_is_error when it is short.
"""

from __future__ import annotations

import re
from typing import Any

from ctxaudit.engine.analysis import Analysis
from ctxaudit.engine.checks.wording import bilingual
from ctxaudit.engine.language.clauses import has_cjk
from ctxaudit.engine.types import ContextPair, Finding, Message, Severity, Span

_ERROR = re.compile(
    r"^\s*(?:error\b|exception\b|traceback \(most recent call last\)|failed to (?:summari[sz]e|generate|compact)|request failed"
    r"|an error (?:occurred|has occurred)|internal server error|rate limit|too many requests|context_length_exceeded"
    r"|(?:this model's )?maximum context length|api error|\{\s*\"error\"|<html|upstream (?:error|timeout)|service unavailable"
    r"|(?:http )?(?:429|500|502|503|504)\b"
    r"|错误|出错|异常|请求失败|调用失败|生成失败|摘要生成失败|压缩失败|服务(?:繁忙|不可用)|超出[^。]{0,10}(?:长度|限制))",
    re.I,
)
_REFUSAL = re.compile(
    r"^\s*(?:i'?m sorry|i am sorry|sorry,? (?:but )?i (?:can(?:no|')t|am unable)|i can(?:no|')t (?:help|assist|summari[sz]e|comply|do that|provide)"
    r"|i (?:won't|will not|am unable to) (?:summari[sz]e|help|comply)|as an ai(?: language model)?,? i"
    r"|(?:抱歉|对不起|很抱歉|非常抱歉)[，,。\s]*(?:我)?(?:无法|不能|没法|不便)|我(?:无法|不能)(?:帮助|协助|完成|提供|总结|生成))",
    re.I,
)
_MARKER_ONLY = re.compile(
    r"^\s*(?:【[^】]{0,10}】|\[[^\]]{0,24}\]|<summary>|</summary>|summary\s*[:：]?|摘要\s*[:：]?|\s)*", re.I
)
_PLACEHOLDER = re.compile(
    r"^(?:\.{2,}|…+|todo|tbd|n/?a|none|null|nil|undefined|placeholder|empty|\{\{[^}]*\}\}|\$\{[^}]*\}|<[^>]{0,20}>|暂无|无|空|略|待补充|待生成|（?无内容）?)?[\s.。]*$",
    re.I,
)
_TOOL_CALL = "[tool call "
# Real summaries are long; an error or refusal committed as "the summary" is short.
_SHORT = 600


def _span(side: str, index: int, content: str) -> Span:
    return Span(side, index, 0, len(content), content)  # type: ignore[arg-type]


def _zh(text: str) -> bool:
    return has_cjk(text[:2000])


def _context_zh(pair: ContextPair) -> bool:
    """The context's language when the text a finding is about has none (empty, encrypted, metadata)."""
    return any(_zh(m.content) for m in pair.before.messages[:8] if m.kind != "encrypted_compaction")


def _int(meta: dict[str, Any], key: str) -> int | None:
    v = meta.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def check_summary_failures(a: Analysis) -> list[Finding]:
    """summary_is_error, summary_is_refusal, summary_empty on the text the compressor wrote."""
    pair = a.pair
    findings: list[Finding] = []
    summaries = {i for i, _ in a.index.summary_messages(pair.strategy)}
    for i, m in a.index.written_messages():
        if m.kind == "encrypted_compaction":
            continue
        is_summary = i in summaries or m.role == "system"
        text = m.content
        body = text[_MARKER_ONLY.match(text).end() :] if text else ""  # type: ignore[union-attr]
        if is_summary and _PLACEHOLDER.match(body.strip()):
            findings.append(
                Finding(
                    "summary_empty",
                    Severity.HIGH,
                    bilingual(
                        f"压缩结果（消息 #{i}）是空的或只是占位符：“{text.strip()[:80]}”，原来的对话历史全部丢失。",
                        f"The compaction result (message #{i}) is empty or a placeholder: “{text.strip()[:80]}”; the "
                        "conversation history it replaced is gone.",
                        _zh(text) if text.strip() else _context_zh(pair),
                    ),
                    evidence=(_span("after", i, text),),
                )
            )
            continue
        if len(body) > _SHORT:
            continue
        if _ERROR.match(body):
            findings.append(
                Finding(
                    "summary_is_error",
                    Severity.HIGH,
                    bilingual(
                        f"压缩把一条错误信息当成了摘要（消息 #{i}）：“{body.strip()[:120]}”。原来的历史没有被总结，而是被这条错误替换了。",
                        f"The compaction committed an error message as the summary (message #{i}): “{body.strip()[:120]}”. "
                        "The history was replaced by this error, not summarised.",
                        _zh(text),
                    ),
                    evidence=(_span("after", i, text),),
                )
            )
        elif _REFUSAL.match(body):
            findings.append(
                Finding(
                    "summary_is_refusal",
                    Severity.HIGH,
                    bilingual(
                        f"压缩模型拒绝了摘要任务，它的拒绝被当成了摘要（消息 #{i}）：“{body.strip()[:120]}”。",
                        f"The summarising model refused, and its refusal was committed as the summary (message #{i}): "
                        f"“{body.strip()[:120]}”.",
                        _zh(text),
                    ),
                    evidence=(_span("after", i, text),),
                )
            )
    return findings


def _conversational(messages: tuple[Message, ...]) -> list[int]:
    return [
        i
        for i, m in enumerate(messages)
        if m.role in ("user", "assistant", "tool") and m.content.strip() and m.kind != "encrypted_compaction"
    ]


def check_history_wiped(a: Analysis) -> list[Finding]:
    """history_wiped: conversation before, none after, and no summary of it anywhere."""
    pair = a.pair
    before_conv = _conversational(pair.before.messages)
    if len(before_conv) < 2 or _conversational(pair.after.messages):
        return []
    if any(m.kind == "encrypted_compaction" for m in pair.after.messages):
        return []  # the history may be inside the encrypted item: unauditable, not wiped
    if a.index.written_messages():
        return []  # a summary was written: empty (summary_empty) or in the system role (summary_elevated)
    first = before_conv[0]
    zh = any(_zh(pair.before.messages[i].content) for i in before_conv[:3])
    return [
        Finding(
            "history_wiped",
            Severity.HIGH,
            bilingual(
                f"压缩清空了全部对话历史：压缩前有 {len(before_conv)} 条对话消息，压缩后一条也没有，也没有摘要。",
                f"The compaction wiped the whole history: {len(before_conv)} conversation messages before, none after, and no summary.",
                zh,
            ),
            evidence=(_span("before", first, pair.before.messages[first].content),),
            data={"messages_before": len(before_conv)},
        )
    ]


def _calls(m: Message) -> int:
    return m.content.count(_TOOL_CALL) if m.role == "assistant" else 0


def _results_after(messages: tuple[Message, ...], i: int) -> int:
    n = 0
    j = i + 1
    while j < len(messages) and messages[j].role == "tool":
        n += 1
        j += 1
    return n


def _call_before(messages: tuple[Message, ...], i: int) -> bool:
    j = i - 1
    while j >= 0 and messages[j].role == "tool":
        j -= 1
    return j >= 0 and _calls(messages[j]) > 0


def check_tool_pairs(a: Analysis) -> list[Finding]:
    """tool_pair_broken: the cut separated a tool call from its result. Only pairs that were whole
    in the before-context count (a pending call at the very end is not the compressor's doing)."""
    pair = a.pair
    before, after = pair.before.messages, pair.after.messages
    if not any(m.role == "tool" or _calls(m) for m in after):
        return []
    index = a.index
    findings: list[Finding] = []
    for i, m in enumerate(after):
        src = index.source_of(m) if (m.role == "tool" or _calls(m)) else None
        orphan = m.role == "tool" and (i == 0 or after[i - 1].role != "tool") and not _call_before(after, i)
        if orphan and src is not None and _call_before(before, src):
            zh = _zh(m.content)
            findings.append(
                Finding(
                    "tool_pair_broken",
                    Severity.MEDIUM,
                    bilingual(
                        f"压缩切断了工具调用：消息 #{i}是工具结果，但它对应的工具调用被删掉了。",
                        f"The cut separated a tool result from its call: message #{i} is a tool result whose call was dropped.",
                        zh,
                    ),
                    evidence=(_span("after", i, m.content), _span("before", src, before[src].content)),
                    data={"problem": "result_without_call"},
                )
            )
        n = _calls(m)
        if n and src is not None:
            had, has = _results_after(before, src), _results_after(after, i)
            if has < min(n, had):
                zh = _zh(m.content)
                findings.append(
                    Finding(
                        "tool_pair_broken",
                        Severity.MEDIUM,
                        bilingual(
                            f"压缩切断了工具调用：消息 #{i}发起了 {n} 个工具调用，压缩前有 {had} 条结果，压缩后只剩 {has} 条。",
                            f"The cut separated a tool call from its result: message #{i} makes {n} tool call(s); "
                            f"{had} result(s) followed it before compression, {has} after.",
                            zh,
                        ),
                        evidence=(_span("after", i, m.content),),
                        data={
                            "problem": "call_without_result",
                            "calls": n,
                            "results_before": had,
                            "results_after": has,
                        },
                    )
                )
    return findings


def check_compaction_loop(a: Analysis) -> list[Finding]:
    """compaction_loop from pair.metadata (keys in the module docstring); nothing without them."""
    pair = a.pair
    meta = pair.metadata if isinstance(pair.metadata, dict) else {}
    n, turns = _int(meta, "recent_compactions"), _int(meta, "recent_turns")
    since = _int(meta, "turns_since_last_compaction")
    looping = (n is not None and turns is not None and n >= 3 and turns <= 2 * n) or since == 0
    if not looping:
        return []
    detail = (
        f"{n} compressions in {turns} turns"
        if n is not None and turns is not None
        else "a compression right after the previous one"
    )
    detail_zh = (
        f"{turns} 轮对话内压缩了 {n} 次"
        if n is not None and turns is not None
        else "上一次压缩之后紧接着又压缩"
    )
    return [
        Finding(
            "compaction_loop",
            Severity.MEDIUM,
            bilingual(
                f"压缩在循环（{detail_zh}）：上下文填满的速度比压缩还快，每一轮都在总结上一轮的摘要，规则会很快衰减。",
                f"Compaction is looping ({detail}): the context refills faster than it is compressed, so each pass "
                "summarises a summary and rules decay quickly.",
                _context_zh(pair),
            ),
            data={"recent_compactions": n, "recent_turns": turns, "turns_since_last_compaction": since},
        )
    ]


def check_unauditable(a: Analysis) -> list[Finding]:
    """unauditable_compaction: one finding per encrypted compaction item, before or after."""
    pair = a.pair
    findings = []
    zh = _context_zh(pair)
    for side, ctx in (("before", pair.before), ("after", pair.after)):
        for i, m in enumerate(ctx.messages):
            if m.kind == "encrypted_compaction":
                findings.append(
                    Finding(
                        "unauditable_compaction",
                        Severity.LOW,
                        bilingual(
                            f"消息 #{i}（{'压缩前' if side == 'before' else '压缩后'}）是服务端加密的压缩结果，内容不可见，"
                            "无法判断它保留了哪些规则或声明，按未审计处理。",
                            f"Message #{i} ({side}) is a server-side encrypted compaction: its content cannot be read, so no "
                            "check can say which rules or claims it kept. Counted as not audited.",
                            zh,
                        ),
                        evidence=(_span(side, i, m.content),),
                        data={"side": side},
                    )
                )
    return findings


def check_failures(a: Analysis) -> list[Finding]:
    """Every compaction failure mode above, for one event."""
    return [
        *check_summary_failures(a),
        *check_history_wiped(a),
        *check_tool_pairs(a),
        *check_compaction_loop(a),
        *check_unauditable(a),
    ]
