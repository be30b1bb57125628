"""Rule retention (seed §4.4 check_rules_retained, done beyond substring matching).

Placeholder-level: normalised containment → retained, fuzzy partial match → weakened.
"""

from __future__ import annotations

from rapidfuzz import fuzz

from ctxaudit.engine.normalize import normalize
from ctxaudit.engine.types import Context, Rule, RuleResult, RuleState, Span

INSTRUCTION_ROLES = ("system", "developer", "user")


def _locate(rule: Rule, ctx: Context, side: str) -> tuple[RuleState, float, str | None, Span | None]:
    target = normalize(rule.text)
    best: tuple[float, int] = (0.0, -1)
    for i, m in enumerate(ctx.messages):
        if m.role not in INSTRUCTION_ROLES:
            continue
        if target and target in normalize(m.content):
            start = m.content.find(rule.text)
            span = Span(side, i, max(start, 0), max(start, 0) + len(rule.text) if start >= 0 else len(m.content), m.content[start : start + len(rule.text)] if start >= 0 else m.content)  # type: ignore[arg-type]
            return RuleState.RETAINED, 1.0, m.role, span
        score = fuzz.partial_ratio(target, normalize(m.content)) / 100
        if score > best[0]:
            best = (score, i)
    if best[0] >= 0.75:
        m = ctx.messages[best[1]]
        return RuleState.WEAKENED, best[0] * 0.6, m.role, Span(side, best[1], 0, len(m.content), m.content)  # type: ignore[arg-type]
    return RuleState.MISSING, 0.0, None, None


def check_rule_retention(before: Context, after: Context, rules: tuple[Rule, ...]) -> list[RuleResult]:
    """For each rule: where it is before, and whether it is retained/weakened/missing after."""
    results = []
    for rule in rules:
        _, _, role_before, span_before = _locate(rule, before, "before")
        state, strength, role_after, span_after = _locate(rule, after, "after")
        demoted = state != RuleState.MISSING and role_before in ("system", "developer") and role_after not in ("system", "developer")
        evidence = tuple(s for s in (span_before, span_after) if s is not None)
        results.append(RuleResult(rule.id, rule.text, state, strength, role_before, role_after, evidence, (), demoted))
    return results
