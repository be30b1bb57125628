"""Findings for the rules retention placed: missing, weakened, demoted — with messages in the
rule's language (Chinese rules get Chinese and English) and evidence on both sides."""

from __future__ import annotations

from ctxaudit.engine.checks.drift import is_chinese
from ctxaudit.engine.types import Finding, Rule, RuleResult, RuleState, Severity

# Findings that fail the verdict whatever their severity (issue 2: "fail when any rule is missing,
# weakened or demoted, or the summary is elevated").
RULE_FINDING_KINDS = ("rule_missing", "rule_weakened", "rule_demoted")

_SEVERITIES = (Severity.LOW, Severity.MEDIUM, Severity.HIGH, Severity.CRITICAL)


def _lower(sev: Severity, floor: Severity = Severity.LOW) -> Severity:
    i = max(_SEVERITIES.index(sev) - 1, _SEVERITIES.index(floor))
    return _SEVERITIES[i]


def _split(items: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Bilingual "中文 / English" items → (Chinese parts, English parts)."""
    zh, en = [], []
    for item in items:
        if " / " in item:
            a, b = item.split(" / ", 1)
            zh.append(a)
            en.append(b)
        else:
            zh.append(item)
            en.append(item)
    return zh, en


def _closest_quote(r: RuleResult) -> str | None:
    after = [s for s in r.evidence if s.side == "after"]
    if not after:
        return None
    q = after[0].quote
    return q if len(q) <= 80 else q[:77] + "…"


def rule_findings(results: list[RuleResult], rules: tuple[Rule, ...]) -> list[Finding]:
    """Findings for missing, weakened and demoted rules, with messages a reviewer reads as they are
    (Chinese and English when the rule is Chinese) and evidence on both sides.

    Severity (issue 2/3): a missing rule keeps the rule's severity (a missing critical rule is
    critical); a weakened rule keeps it when strength < 0.5 (or the rule was reversed), else one
    step lower; a demoted rule is one step lower than the rule, at least medium.
    """
    by_id = {r.id: r for r in rules}
    out: list[Finding] = []
    for r in results:
        rule = by_id.get(r.rule_id)
        sev = rule.severity if rule else Severity.HIGH
        zh = is_chinese(r.text)
        data = {
            "strength": round(r.strength, 3),
            "lost": list(r.lost),
            "role_before": r.role_before,
            "role_after": r.role_after,
        }
        if r.state is RuleState.MISSING:
            quote = _closest_quote(r)
            if zh:
                msg = f"规则 {r.rule_id} 在压缩后缺失：压缩后的指令文本中不再有这条规则"
                msg += f"（最接近的文字“{quote}”没有约束力）" if quote else ""
                msg += f"。 / Rule {r.rule_id} is missing after compression"
                msg += f" (the closest text “{quote}” carries no directive force)." if quote else "."
            else:
                msg = f"Rule {r.rule_id} is missing after compression: no instruction text after compression states it"
                msg += f" (the closest text “{quote}” carries no directive force)." if quote else "."
            out.append(Finding("rule_missing", sev, msg, r.rule_id, r.evidence, data))
        elif r.state is RuleState.WEAKENED:
            zh_parts, en_parts = _split(r.lost)
            what_en = "; ".join(en_parts) or "reworded with less force"
            if zh:
                what_zh = "；".join(zh_parts) or "改写后约束力下降"
                msg = f"规则 {r.rule_id} 在压缩后被弱化（强度 {r.strength:.2f}）：{what_zh} / Rule {r.rule_id} weakened (strength {r.strength:.2f}): {what_en}"
            else:
                msg = f"Rule {r.rule_id} weakened after compression (strength {r.strength:.2f}): {what_en}"
            fsev = sev if r.strength < 0.5 else _lower(sev)
            out.append(Finding("rule_weakened", fsev, msg, r.rule_id, r.evidence, data))
        if r.demoted:
            if zh:
                msg = (
                    f"规则 {r.rule_id} 被降级：压缩前位于 {r.role_before or 'system'} 角色，压缩后只出现在 {r.role_after} 角色，"
                    f"约束力随之下降 / Rule {r.rule_id} demoted: it was in the {r.role_before or 'system'} role before "
                    f"compression and is now only in the {r.role_after} role."
                )
            else:
                msg = (
                    f"Rule {r.rule_id} demoted: it was in the {r.role_before or 'system'} role before compression "
                    f"and is now only in the {r.role_after} role, where it reads as a user statement."
                )
            out.append(
                Finding("rule_demoted", _lower(sev, Severity.MEDIUM), msg, r.rule_id, r.evidence, data)
            )
    return out
