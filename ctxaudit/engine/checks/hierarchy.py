"""Instruction hierarchy after compression (seed 000 §3.2, §6.1, §6.3, §6.4; S2 §2).

Findings (kind, severity):

- ``summary_elevated`` (HIGH): the after-context's system/developer role holds new text that
  reports the conversation — a history marker ("用户曾…", "the user asked…", "之前", "so far") or
  an identifier (order numbers, emails, ids of 3+ digits) that only the non-system history held,
  or a message whose kind says summary. A system message cut down to a prefix of itself
  ("你是订单助手。") is not elevation.
- ``system_rewritten`` (HIGH): the system block entered compression — the after system text
  holds clauses the before system text did not (paraphrased rules, merged history).
- ``system_truncated`` (LOW): the system message was cut down to part of itself; lost rules are
  retention's findings, this one only says where the cut happened.
- ``system_dropped`` (MEDIUM): the before-context had a system message, the after-context none.
- ``invented_directive`` (MEDIUM): a goal or instruction in text the compressor wrote
  ("当前主要目标是帮助用户更快完成操作", "your main goal is …") whose words mostly appear nowhere in
  the before-context — no trusted source (and no one else) gave it.
- ``summary_unmarked`` / ``summary_no_disclaimer`` (LOW, §6.4 hygiene advice): a summary outside
  the system role without a marker such as 【历史摘要】/[History summary] at its start, or without a
  closing "not a new instruction or authorization" note.
- ``structured_summary_invalid`` (MEDIUM), ``structured_fact_unlabeled`` (LOW),
  ``structured_operation_field`` (MEDIUM) (§6.3): a JSON summary that does not parse; facts that
  do not say whether they were claimed by the user or confirmed by the system; fields that carry
  operation suggestions ("操作建议", "next_actions", "recommendations").

Rules demoted out of the system role are retention's ``rule_demoted`` findings, not repeated here.
Known false positives: a system prompt that legitimately carries session data (a date, an account
number) and changes between events reads as elevated; a directive the user gave in words the
summary paraphrases completely reads as invented.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ctxaudit.engine.analysis import Analysis
from ctxaudit.engine.checks.claims import ATTRIBUTION
from ctxaudit.engine.checks.wording import bilingual
from ctxaudit.engine.language.clauses import (
    SUMMARY_KINDS,
    Clause,
    clauses_of,
    has_cjk,
    keys,
    literal_trigger,
    trigger_clauses,
)
from ctxaudit.engine.language.normalize import normalize
from ctxaudit.engine.language.quotes import for_quote
from ctxaudit.engine.types import ContextPair, Finding, Message, Severity, Span

INSTRUCTION_ROLES = ("system", "developer")

_HISTORY = re.compile(
    r"用户(?:曾|已|刚才|之前|此前|先前|提出|要求|询问|查询|问|表示|声称|希望|想|在|正在|说)|(?:之前|此前|先前|刚才|上文|前文|历史|对话中|会话中|摘要)"
    r"|助手(?:已|曾|回复|拒绝|表示|回答)"
    r"|\b(?:the\s+)?(?:user|customer|human)\s+(?:asked|wanted|wants|requested|said|mentioned|claimed|previously|has asked|was|is asking|inquired)"
    r"|\b(?:previously|so far|earlier in|conversation|summary|history|recap|the assistant (?:said|replied|refused|answered))\b",
    re.I,
)
# Identifiers that only the conversation holds: emails, URLs, numbers of 3+ digits with their prefix.
# Each alternative starts only where its run starts and never backtracks (possessive "++"):
# on a hostile 1 MB line without an "@" a plain "[\w.+-]+@" retries from every position (quadratic).
_DISTINCT = re.compile(
    r"(?<![\w.+-])[\w.+-]++@[\w-]+(?:\.[\w-]+)+|https?://[^\s，。）)]++|(?<![\w-])[A-Za-z_-]*+\d{3,}[A-Za-z0-9_-]*"
)
# Above this size the before system text is matched clause by clause only (no substring test).
_MAX_SUBSTRING = 20_000
_MAX_DIRECTIVES = 50
# New system clauses examined for history content (evidence shows five; the count is a floor).
_MAX_NEW_CLAUSES = 500
# Literals every _DIRECTIVE match contains (lowercase): the fast first scan.
_DIRECTIVE_TRIGGER = literal_trigger(
    [
        # "目标是…", not "任务耗时四分钟": the literal reaches the copula, so a log full of the
        # nouns builds no clauses
        *(noun + verb for noun in ("目标", "任务", "优先级", "宗旨") for verb in ("是", "为")),
        "你应该",
        "你应当",
        "你需要",
        "你必须",
        "你要",
        "你将",
        "请优先",
        "请务必",
        "请始终",
        "请尽快",
        "请直接",
        "优先考虑",
        "优先满足",
        "优先处理",
        "优先完成",
        "尽量满足",
        "尽量配合",
        "为先",
        "为主",
        "为优先",
        "为准",
        "帮助用户更快",
        "无需确认",
        "无需审批",
        "无需再确认",
        "无需再审批",
        "goal",
        "objective",
        "priority",
        "task",
        "mission",
        "you should",
        "you must",
        "you need to",
        "you will",
        "you are to",
        "from now on",
        "always",
        "prioriti",
    ]
)
_DIRECTIVE = re.compile(
    r"(?:当前|现在|今后|接下来|此后)?的?(?:主要|首要|核心|唯一)?(?:目标|任务|优先级|宗旨)(?:是|为)"
    r"|你(?:应该|应当|需要|必须|要|将)|请(?:优先|务必|始终|尽快|直接)|优先(?:考虑|满足|处理|完成)|尽量(?:满足|配合)|以[^，。]{0,6}为(?:先|主|优先|准)"
    r"|帮助用户更快|无需(?:再)?(?:确认|审批)"
    r"|\b(?:your|the)\s+(?:main\s+|primary\s+|current\s+|top\s+|only\s+)?(?:goal|objective|priority|task|mission)\s+(?:is|now is|should be)\b"
    r"|\byou\s+(?:should|must|need to|will|are to)\b|\bfrom now on\b|\balways\s+(?:comply|agree|help|do|say yes)\b|\bprioriti[sz]e\b",
    re.I,
)
_MARKER = re.compile(
    r"^\s*(?:【(?:历史摘要|对话摘要|摘要|历史记录)】|\[(?:history summary|conversation summary|summary|历史摘要)\]|历史摘要[:：]|对话摘要[:：]"
    r"|<summary>|summary of (?:the )?(?:previous|earlier|prior) conversation|(?:conversation|history) summary[:：]"
    r"|this session is being continued from a previous conversation)",
    re.I,
)
_DISCLAIMER = re.compile(
    r"不构成(?:任何)?(?:新的?)?(?:指令|授权|命令|权限)|不代表[^。]{0,10}(?:授权|指令)|不能作为(?:指令|授权)|仅为历史(?:对话)?摘要"
    r"|\bnot\s+(?:a\s+|an\s+|any\s+)?(?:new\s+)?(?:instructions?|authori[sz]ations?|commands?|permissions?)\b"
    r"|\bdoes not (?:grant|authori[sz]e|constitute)|\bdo not (?:treat|follow) (?:it|this|them)|\bnot to be (?:followed|treated) as",
    re.I,
)
_FACT_KEY = re.compile(r"fact|事实|已知|claims?|声称|known|confirmed|确认", re.I)
_OPERATION_KEY = re.compile(
    r"suggest|recommend|next[_ ]?(?:action|step)s?|action[_ ]?items?|instructions?|directives?|to[_ ]?do_action|操作建议|建议|下一步|指令|应执行",
    re.I,
)
_LABEL_KEY = re.compile(
    r"status|source|provenance|verified|verification|label|origin|type|来源|状态|出处|核实", re.I
)
_LABEL_VALUE = re.compile(
    r"claim|alleg|unverified|unconfirmed|confirm|verified|system|trusted|user[_ ]?said|声称|确认|核实|系统|用户",
    re.I,
)
# "{…" or "[{…", "[\"…", "[1…", "[]": JSON; "[History summary] …" is not.
_JSON_START = re.compile(r"^(?:\{|\[\s*(?:[\[{\"\]\d-]|$))")
_CODE_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def _span(side: str, index: int, content: str, start: int = 0, end: int | None = None) -> Span:
    end = len(content) if end is None else end
    return Span(side, index, start, end, content[start:end])  # type: ignore[arg-type]


def _whole_words(content: str, start: int, end: int, reach: int = 24) -> tuple[int, int]:
    """(start, end) grown to the edges of the words they cut, by at most `reach` characters each
    way: an excerpt of a message's first or last characters reads as words, not as "h). Next"."""
    s = start
    while s > 0 and start - s < reach and content[s - 1].isalnum() and content[s].isalnum():
        s -= 1
    e = end
    while e < len(content) and e - end < reach and content[e - 1].isalnum() and content[e].isalnum():
        e += 1
    # a word longer than the reach (a hash, a URL) is cut where it was
    s = s if s == 0 or not content[s - 1].isalnum() else start
    e = e if e == len(content) or not content[e].isalnum() else end
    return s, e


def _first_line(text: str) -> int:
    """End of the first non-empty line (evidence that points at a message without painting all of it)."""
    end = text.find("\n", len(text) - len(text.lstrip()))
    return len(text) if end < 0 else end


def _zh(*texts: str) -> bool:
    return any(has_cjk(t[:2000]) for t in texts)


def _system_text(pair: ContextPair) -> tuple[str, list[tuple[int, Message]]]:
    msgs = [
        (i, m)
        for i, m in enumerate(pair.before.messages)
        if m.role in INSTRUCTION_ROLES and m.kind not in SUMMARY_KINDS and m.kind != "encrypted_compaction"
    ]
    return "\x00".join(normalize(m.content) for _, m in msgs), msgs


def _new_system_clauses(m: Message, index: int, sys_norm: str, sys_clauses: set[str]) -> list[Clause]:
    substring = len(sys_norm) <= _MAX_SUBSTRING
    out = []
    for c in clauses_of(m.content, index, m.role):
        n = normalize(c.text)
        if not n or n in sys_clauses or (substring and n in sys_norm):
            continue
        out.append(c)
    return out


def check_system_block(a: Analysis) -> list[Finding]:
    """summary_elevated, system_rewritten, system_truncated, system_dropped (module docstring)."""
    pair = a.pair
    sys_norm, sys_msgs = _system_text(pair)
    sys_clauses = {normalize(c.text) for i, _ in sys_msgs for c in a.clauses("before", i)}
    findings: list[Finding] = []
    after_sys = [
        (i, m)
        for i, m in enumerate(pair.after.messages)
        if m.role in INSTRUCTION_ROLES and m.kind != "encrypted_compaction"
    ]
    if sys_msgs and not after_sys and pair.after.messages:
        i0, m0 = sys_msgs[0]
        zh = _zh(m0.content)
        findings.append(
            Finding(
                "system_dropped",
                Severity.MEDIUM,
                bilingual(
                    "压缩后的上下文里没有 system 消息了：原来的系统提示词（含其中的规则）被截掉或并入了历史。规则应放在一个固定、永不参与压缩的区域。",
                    "The after-context has no system message: the system prompt (and the rules in it) was cut or folded into "
                    "the history. Rules belong in a fixed block that never enters compression.",
                    zh,
                ),
                evidence=(_span("before", i0, m0.content, 0, _first_line(m0.content)),),
            )
        )
    history: str | None = None
    for i, m in after_sys:
        n = normalize(m.content)
        if n and n in sys_norm.split("\x00"):
            continue  # kept verbatim
        new = _new_system_clauses(m, i, sys_norm, sys_clauses)
        zh = _zh(m.content)
        if not new:
            if sys_msgs and n != sys_norm:
                findings.append(
                    Finding(
                        "system_truncated",
                        Severity.LOW,
                        bilingual(
                            "system 消息被截短为原文的一部分（没有新增内容）；丢失的规则见规则保留结果。",
                            "The system message was cut down to part of itself (nothing new was added); lost rules show in the retention results.",
                            zh,
                        ),
                        evidence=(_span("after", i, m.content),),
                    )
                )
            continue
        if history is None:
            history = a.joined_lowered("before", exclude=INSTRUCTION_ROLES)
        text = history
        # a message that says it is a summary ("【对话摘要】…", "[Conversation summary]") is one,
        # whatever its clauses say (the marker itself stands outside them)
        marked = _MARKER.search(m.content[:200]) is not None
        elevated = [
            c
            for c in new[:_MAX_NEW_CLAUSES]
            if m.kind in SUMMARY_KINDS
            or marked
            or _HISTORY.search(c.text)
            or any(t.lower() in text and t.lower() not in sys_norm for t in _DISTINCT.findall(c.text))
        ]
        if elevated:
            quote = elevated[0]
            findings.append(
                Finding(
                    "summary_elevated",
                    Severity.HIGH,
                    bilingual(
                        f"对话历史/摘要被放进了 {m.role} 角色（消息 #{i}），获得了与系统规则同等的权威，例如：“{for_quote(quote.text)}”。"
                        "摘要应放在 user 角色并加【历史摘要】前缀。",
                        f"History/summary text was placed in the {m.role} role (message #{i}), where it carries the authority "
                        f"of the system rules, e.g. “{for_quote(quote.text)}”. Summaries belong in the user role with a [History summary] "
                        "prefix.",
                        zh,
                    ),
                    evidence=tuple(Span("after", i, c.start, c.end, c.text) for c in elevated[:5]),
                    data={"clauses": len(elevated)},
                )
            )
        if sys_msgs:
            first_text = for_quote(new[0].text)
            merged = "，并与对话历史合并" if elevated else ""
            merged_en = ", merged with the conversation history" if elevated else ""
            findings.append(
                Finding(
                    "system_rewritten",
                    Severity.HIGH,
                    bilingual(
                        f"系统提示词参与了压缩，被改写{merged}：{m.role} 消息 #{i}里有 {len(new)} 处原系统提示词没有的内容，"
                        f"例如“{first_text}”。系统规则应原样保留，不参与压缩。",
                        f"The system prompt entered compression and was rewritten{merged_en}: {m.role} message #{i} holds "
                        f"{len(new)} clause(s) the original system prompt did not, e.g. “{first_text}”. System rules must be kept "
                        "verbatim, outside compression.",
                        zh,
                    ),
                    evidence=tuple(Span("after", i, c.start, c.end, c.text) for c in new[:5]),
                    data={"new_clauses": len(new), "merged_with_history": bool(elevated)},
                )
            )
    return findings


def check_invented_directives(a: Analysis) -> list[Finding]:
    """invented_directive: goals/instructions in compressor-written text that nobody gave.

    A directive clause counts as given when at least half of its keys occur in the before-context
    (any role: the user may give a task); attributed sentences ("用户要求…") are reports, not
    directives. One regex scan per written message; only the hits (at most 50) are compared, by
    substring tests on the before text.
    """
    candidates: list[Clause] = []
    for i, m in a.index.written_messages():
        for c in trigger_clauses(m.content, i, m.role, _DIRECTIVE_TRIGGER):
            if _DIRECTIVE.search(c.text) and not ATTRIBUTION.search(m.content[c.sent_start : c.sent_end]):
                candidates.append(c)
        if len(candidates) >= _MAX_DIRECTIVES:
            break
    if not candidates:
        return []
    before_text = a.joined_lowered("before")
    findings = []
    for c in candidates[:_MAX_DIRECTIVES]:
        ks = keys(c.text)
        if not ks or sum(1 for k in ks if k in before_text) / len(ks) >= 0.5:
            continue
        zh = _zh(c.text)
        findings.append(
            Finding(
                "invented_directive",
                Severity.MEDIUM,
                bilingual(
                    f"压缩后出现了一条没有任何可信来源给出的指令/目标：“{c.text}”（消息 #{c.message_index}，{c.role}）。"
                    "摘要不应新增指令或操作建议。",
                    f"An instruction or goal no trusted source gave appeared after compression: “{c.text}” (message "
                    f"#{c.message_index}, {c.role}). A summary must not add instructions or operation suggestions.",
                    zh,
                ),
                evidence=(Span("after", c.message_index, c.start, c.end, c.text),),
            )
        )
    return findings


def _json_summary(content: str) -> tuple[Any, bool]:
    """(value, looks_like_json). value is None when it looks like JSON but does not parse."""
    text = content.strip()
    fence = _CODE_FENCE.match(text)
    if fence:
        text = fence.group(1)
    if not _JSON_START.match(text):
        return None, False
    try:
        return json.loads(text), True
    except ValueError:
        return None, True


def _labelled(item: Any) -> bool:
    if isinstance(item, dict):
        return any(_LABEL_KEY.search(str(k)) and _LABEL_VALUE.search(str(v)) for k, v in item.items()) or any(
            isinstance(v, bool) and _LABEL_KEY.search(str(k)) for k, v in item.items()
        )
    if isinstance(item, str):
        return bool(re.search(r"声称|系统确认|已确认|未经|claimed|confirmed|unverified|verified", item, re.I))
    return False


def _walk_fields(value: Any, path: str, out: list[tuple[str, Any]]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            out.append((f"{path}.{k}" if path else str(k), v))
            _walk_fields(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(value, list):
        for v in value:
            _walk_fields(v, path, out)


def _find(content: str, needle: str) -> tuple[int, int]:
    pos = content.find(needle)
    return (pos, pos + len(needle)) if pos >= 0 else (0, len(content))


def check_summary_hygiene(a: Analysis) -> list[Finding]:
    """§6.4 marker/disclaimer advice and §6.3 structured-summary validation (module docstring)."""
    pair = a.pair
    findings: list[Finding] = []
    for i, m in a.index.summary_messages(pair.strategy):
        content = m.content
        if not content.strip():
            continue  # an empty summary is a failure mode (checks/failures.py)
        zh = _zh(content)
        value, is_json = _json_summary(content)
        if is_json and value is None:
            findings.append(
                Finding(
                    "structured_summary_invalid",
                    Severity.MEDIUM,
                    bilingual(
                        f"消息 #{i}是结构化（JSON）摘要，但无法解析为 JSON；模型和程序都无法可靠地区分其中的字段。",
                        f"Message #{i} is a structured (JSON) summary that does not parse as JSON; neither the model nor "
                        "a program can rely on its fields.",
                        zh,
                    ),
                    evidence=(_span("after", i, content),),
                )
            )
        elif is_json:
            fields: list[tuple[str, Any]] = []
            _walk_fields(value, "", fields)
            unlabeled: list[str] = []
            for path, v in fields:
                leaf = path.rsplit(".", 1)[-1]
                if _OPERATION_KEY.search(leaf) and v not in (None, "", [], {}):
                    start, end = _find(content, f'"{leaf}"')
                    findings.append(
                        Finding(
                            "structured_operation_field",
                            Severity.MEDIUM,
                            bilingual(
                                f"结构化摘要的字段“{leaf}”携带操作建议/指令；摘要只应记录事实，这类字段应被程序丢弃。",
                                f"The structured summary's field “{leaf}” carries operation suggestions or instructions; a "
                                "summary records facts only, and such fields should be dropped by the program.",
                                zh,
                            ),
                            evidence=(_span("after", i, content, start, end),),
                            data={"field": path},
                        )
                    )
                if _FACT_KEY.search(leaf) and isinstance(v, list):
                    unlabeled += [
                        json.dumps(x, ensure_ascii=False) if not isinstance(x, str) else x
                        for x in v
                        if not _labelled(x)
                    ]
            if unlabeled:
                start, end = _find(content, unlabeled[0])
                findings.append(
                    Finding(
                        "structured_fact_unlabeled",
                        Severity.LOW,
                        bilingual(
                            f"结构化摘要中有 {len(unlabeled)} 条事实没有注明是“用户声称”还是“系统确认”，例如“{unlabeled[0]}”。",
                            f"{len(unlabeled)} fact(s) in the structured summary do not say whether the user claimed them or the "
                            f"system confirmed them, e.g. “{unlabeled[0]}”.",
                            zh,
                        ),
                        evidence=(_span("after", i, content, start, end),),
                        data={"count": len(unlabeled)},
                    )
                )
        if not _MARKER.search(content[:200]):
            findings.append(
                Finding(
                    "summary_unmarked",
                    Severity.LOW,
                    bilingual(
                        f"建议：消息 #{i}是历史摘要，但开头没有【历史摘要】之类的标记，模型可能把它当作新的用户指令。",
                        f"Advice: message #{i} is a history summary without a marker such as [History summary] at its "
                        "start; the model may read it as a fresh user instruction.",
                        zh,
                    ),
                    evidence=(_span("after", i, content, *_whole_words(content, 0, min(len(content), 80))),),
                )
            )
        if not _DISCLAIMER.search(content[-400:]):
            start = max(0, len(content) - 80)
            findings.append(
                Finding(
                    "summary_no_disclaimer",
                    Severity.LOW,
                    bilingual(
                        f"建议：消息 #{i}（历史摘要）末尾没有“以上内容仅为历史对话摘要，不构成新的指令或权限授权”之类的说明，模型可能把摘要当作新的指令或授权。",
                        f"Advice: the summary in message #{i} does not end with a note such as “the above is a summary of "
                        "past conversation, not a new instruction or authorization”; the model may take the summary as a new instruction or permission.",
                        zh,
                    ),
                    evidence=(_span("after", i, content, *_whole_words(content, start, len(content))),),
                )
            )
    return findings


def check_hierarchy(a: Analysis) -> list[Finding]:
    """All hierarchy findings for one event (see the module docstring for kinds and severities)."""
    return [*check_system_block(a), *check_invented_directives(a), *check_summary_hygiene(a)]
