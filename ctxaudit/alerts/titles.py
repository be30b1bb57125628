"""The title a person reads for an alert: what happened and to what, in a line.

"R1 missing after compression: 禁止删除任何业务数据" for a rule's alert (the rule text as written,
in its own language; the words around it in English), "User claim restated as fact: 用户已获得删除授权。"
for a finding about no single rule (the label of the kind, then the text it is about). The whole
finding message stays on each linked event (AlertEvent.message).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# What happened to the rule, for the kinds about one rule.
RULE_PHRASES = {
    "rule_missing": "missing after compression",
    "rule_weakened": "weakened after compression",
    "rule_demoted": "demoted out of the system role",
    "rule_decay": "decaying across compressions",
}

# Kinds about no single rule: a short English label. A kind not listed reads as its name in words.
KIND_LABELS = {
    "summary_elevated": "Summary placed in the system role",
    "claim_promoted": "User claim restated as fact",
    "injection_promoted": "Tool or external text promoted to an instruction",
    "claim_fabricated": "Statement nothing before compression supports",
    "claim_contradicted": "Statement the conversation contradicts",
    "claim_misattributed": "Words attributed to the wrong party",
    "stale_instruction": "Finished instruction live again",
    "harness_text_as_user": "Compaction prompt left in the user role",
    "system_dropped": "System prompt dropped",
    "system_rewritten": "System prompt rewritten by compression",
    "system_truncated": "System prompt cut short",
    "invented_directive": "Instruction nobody gave",
    "history_wiped": "Whole history wiped",
    "summary_empty": "Empty summary",
    "summary_is_error": "Error message committed as the summary",
    "summary_is_refusal": "Refusal committed as the summary",
    "summary_unmarked": "Summary without a history marker",
    "summary_no_disclaimer": "Summary without a not-an-instruction note",
    "structured_summary_invalid": "Structured summary does not parse",
    "structured_operation_field": "Structured summary carries instructions",
    "structured_fact_unlabeled": "Structured summary facts without a source",
    "tool_pair_broken": "Tool call cut from its result",
    "compaction_loop": "Compaction looping",
    "unauditable_compaction": "Encrypted compaction, not auditable",
    "window_failing_share": "Share of failing compressions over a window",
    "window_rule_losses": "Share of compressions losing a rule over a window",
}

MAX_SUBJECT = 100  # characters of rule text or quote in a title


def kind_label(kind: str) -> str:
    """The English label of a finding kind ("rule_missing" → "Rule missing after compression")."""
    if kind in KIND_LABELS:
        return KIND_LABELS[kind]
    if kind in RULE_PHRASES:
        return f"Rule {RULE_PHRASES[kind]}"
    return kind.replace("_", " ").strip().capitalize() or "Finding"


def _subject(text: str) -> str:
    """The first non-empty line, whitespace folded, cut at MAX_SUBJECT characters with an ellipsis."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    line = " ".join(line.split())
    return line if len(line) <= MAX_SUBJECT else line[: MAX_SUBJECT - 1].rstrip() + "…"


def _quote(evidence: Iterable[Any]) -> str:
    spans = [e for e in evidence or () if isinstance(e, dict) and str(e.get("quote", "")).strip()]
    after = [e for e in spans if e.get("side") == "after"]
    return str((after or spans)[0]["quote"]) if spans else ""


def alert_title(*, kind: str, rule_id: str = "", rule_text: str = "", evidence: Iterable[Any] = ()) -> str:
    """The alert's title. kind: the finding kind; rule_id/rule_text: the rule the alert is about
    ("" when none); evidence: the first finding's evidence ([{"side", "quote", …}]), whose
    after-side quote names what a rule-less finding is about. Never empty."""
    if rule_id:
        phrase = RULE_PHRASES.get(kind, f"· {kind_label(kind).lower()}")
        head = f"{rule_id} {phrase}"
        subject = _subject(rule_text)
    else:
        head = kind_label(kind)
        subject = _subject(_quote(evidence))
    return f"{head}: {subject}" if subject else head


def _percent(fraction: float) -> str:
    """0.234 → "23%", 0.125 → "12.5%" (one decimal at most, no trailing zero)."""
    return f"{round(fraction * 100, 1):g}%"


def window_title(
    *,
    metric: str,
    share: float,
    window_minutes: int,
    warning: float,
    alert: float,
    rule_id: str = "",
    min_severity: str = "low",
) -> str:
    """The title of a windowed-policy alert, English then Chinese (a project has no one language):
    "23% of compressions in the last 60 min lost a critical rule (warning ≥ 10%, alert ≥ 20%) /
    最近 60 分钟内 23% 的压缩丢失或削弱了 critical 级规则（警告 ≥ 10%，告警 ≥ 20%）".
    metric: failing_events | rule_losses; share, warning, alert: fractions 0..1."""
    pct, warn, alrt = _percent(share), _percent(warning), _percent(alert)
    if metric == "failing_events":
        en_what, zh_what = "failed the audit", "未通过审计"
    elif rule_id:
        en_what, zh_what = f"lost or weakened rule {rule_id}", f"丢失或削弱了规则 {rule_id}"
    elif min_severity and min_severity != "low":
        en_what = f"lost or weakened a {min_severity} rule"
        zh_what = f"丢失或削弱了 {min_severity} 级规则"
    else:
        en_what, zh_what = "lost or weakened a rule", "丢失或削弱了规则"
    en = (
        f"{pct} of compressions in the last {window_minutes} min {en_what} (warning ≥ {warn}, alert ≥ {alrt})"
    )
    zh = f"最近 {window_minutes} 分钟内 {pct} 的压缩{zh_what}（警告 ≥ {warn}，告警 ≥ {alrt}）"
    return f"{en} / {zh}"
