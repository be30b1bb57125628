"""The seed's troubleshooting checklist (§7.2) and symptom table (§7.1), in Chinese with English.

Text from seeds/000 §7.1 and §7.2; the English is ours. `SYMPTOM_FOR_KIND` maps finding kinds
(engine `Finding.kind`) to a §7.1 row; an unknown kind maps to no row (`symptom_for_kind` → None).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    number: int
    zh: str
    en: str


STEPS: tuple[Step, ...] = (
    Step(
        1,
        "找一份触发压缩的完整会话记录，包括触发压缩前的所有消息。",
        "Find the full record of the session that triggered the compression, with every message before it.",
    ),
    Step(
        2,
        "把压缩前的完整上下文和压缩后的完整上下文导出，逐行对比。",
        "Export the full context before and after the compression and compare them line by line.",
    ),
    Step(
        3,
        "在压缩后的上下文中搜索安全规则关键词，确认规则是否还在。",
        "Search the after-context for the safety rules' key terms: is each rule still there?",
    ),
    Step(
        4,
        "如果没有规则关键词，检查压缩逻辑是否把 system 消息也纳入了压缩候选。",
        "If the key terms are gone, check whether the compression took the system message in as a candidate.",
    ),
    Step(
        5,
        "如果规则关键词还在但行为异常，检查规则是否被改写、语义是否发生漂移。",
        "If the key terms are there but the agent misbehaves, check whether the rule was reworded and its meaning drifted.",
    ),
    Step(
        6,
        "用同样的输入在未压缩状态下测试，确认行为正常，以定位问题确实来自压缩。",
        "Send the same input uncompressed and confirm it behaves, to pin the problem on the compression.",
    ),
    Step(
        7,
        "修复压缩策略后，将其加入规则保留测试集，避免回归。",
        "Once the compression strategy is fixed, add the case to the rule-retention regression set so it cannot come back.",
    ),
)
STEP_COUNT = len(STEPS)


@dataclass(frozen=True)
class Symptom:
    row: int
    symptom_zh: str
    symptom_en: str
    cause_zh: str
    cause_en: str
    fix_zh: str
    fix_en: str


SYMPTOMS: tuple[Symptom, ...] = (
    Symptom(
        1,
        "对话轮次变多后，模型不再拒绝危险操作",
        "After many turns the model no longer refuses dangerous operations",
        "压缩把安全规则省略了",
        "The compression left the safety rules out",
        "检查压缩前后的完整上下文，确认 system 规则是否还在",
        "Compare the full context before and after compression: are the system rules still there?",
    ),
    Symptom(
        2,
        "模型开始按历史摘要中提到的“授权”执行业务",
        'The model acts on an "authorization" mentioned in the history summary',
        "不可信内容被摘要当成事实写入",
        "Untrusted content was written into the summary as fact",
        "使用结构化摘要，区分“用户声称”和“系统确认”",
        'Use structured summaries that tell "claimed by the user" from "confirmed by the system"',
    ),
    Symptom(
        3,
        "同一会话内规则时好时坏",
        "Within one session the rules hold sometimes and fail other times",
        "部分轮次触发了压缩，部分没有",
        "Some turns triggered a compression and others did not",
        "在压缩流程中强制加入规则隔离和校验",
        "Make rule isolation and a rule check mandatory steps of the compression",
    ),
    Symptom(
        4,
        "摘要里出现了“可以删除”“已授权”等字眼",
        'The summary contains words such as "may delete" or "authorized"',
        "摘要 prompt 没有限制操作指令输出",
        "The summary prompt does not forbid writing operational instructions",
        "在压缩指令中明确禁止生成操作建议",
        "Forbid operational suggestions explicitly in the compression prompt",
    ),
    Symptom(
        5,
        "压缩后模型语气变得随意，不再严谨",
        "After compression the model turns casual and loses its rigour",
        "规则语义被改写，从“必须”变成“建议”",
        'The rules were reworded, from "must" to "suggested"',
        "保留原始系统规则文本，不允许规则参与被改写",
        "Keep the original system rule text and never let the rules be rewritten",
    ),
    Symptom(
        6,
        "多个平台切换后规则表现不一致",
        "Rules behave differently after switching platforms",
        "不同平台的压缩策略不同",
        "Each platform compresses differently",
        "先查看平台的记忆与摘要配置，再设置显式规则",
        "Check each platform's memory and summary settings first, then set explicit rules",
    ),
)

# Finding kind → §7.1 row, with why. Kinds come from the engine's checks; new ones map here.
SYMPTOM_FOR_KIND: dict[str, tuple[int, str]] = {
    "rule_missing": (1, "the rule is gone from the after-context"),
    "rule_demoted": (1, "the rule left the system role, so it no longer binds as a system rule"),
    "system_rewritten": (5, "the system message was rewritten or merged, so its rules were reworded"),
    "rule_weakened": (5, "the rule survives but weaker (must → should, 禁止 → 需谨慎)"),
    "rule_drift": (5, "the rule's wording drifted"),
    "summary_elevated": (
        2,
        "a summary sits in the system role, so whatever it claims reads as authoritative",
    ),
    "claim_promoted": (2, "a claim by the user or a tool is stated as fact after compression"),
    "claim_fabricated": (
        2,
        "the summary says someone asked, approved or found something that nothing before says",
    ),
    "claim_contradicted": (
        2,
        "the summary says the opposite of what a user message or tool result said (no → yes, declined → approved)",
    ),
    "claim_misattributed": (
        2,
        "words of a tool, a document or another person are now the user's or the system's",
    ),
    "stale_instruction": (
        4,
        "an instruction already done or closed comes back as a live user message or a pending task",
    ),
    "harness_text_as_user": (
        4,
        "the compaction prompt stayed in the user role and reads as the user's instruction",
    ),
    "summary_hygiene": (
        2,
        'the summary lacks its prefix, attribution or "not an authorization" note',
    ),
    "injection_promoted": (4, "an imperative from tool output or external content became an instruction"),
    "invented_directive": (4, "the summary adds an instruction or goal that nobody gave"),
    "rule_decay": (3, "the rule weakens a little more at each compression of the session"),
    "unauditable_compaction": (
        6,
        "the platform's compaction is opaque (e.g. encrypted), so its rules cannot be checked",
    ),
    "system_truncated": (1, "the system message was cut down, and the rules after the cut went with it"),
    "system_dropped": (1, "the system message is gone from the after-context"),
    "history_wiped": (1, "the after-context holds no history at all, and no rule stated in it"),
    "summary_unmarked": (
        2,
        "the summary has no 【历史摘要】 marker, so it reads like a live instruction",
    ),
    "summary_no_disclaimer": (
        2,
        'the summary lacks the "not a new instruction or authorization" note',
    ),
    "structured_fact_unlabeled": (
        2,
        "facts in the structured summary do not say claimed or confirmed",
    ),
    "structured_summary_invalid": (
        2,
        "the structured summary does not parse, so no fact carries its label",
    ),
    "structured_operation_field": (4, "the structured summary carries operation suggestions"),
    "compaction_loop": (3, "compressions follow each other within few turns, so rules come and go"),
}


def symptom_for_kind(kind: str) -> Symptom | None:
    """The §7.1 row for a finding kind, or None for a kind no row covers yet."""
    entry = SYMPTOM_FOR_KIND.get(kind)
    return SYMPTOMS[entry[0] - 1] if entry else None


def kinds_for_row(row: int) -> list[str]:
    return [k for k, (r, _) in SYMPTOM_FOR_KIND.items() if r == row]
