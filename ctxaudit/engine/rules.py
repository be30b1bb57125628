"""Find the rules in force when none are given: system-message items and standing instructions.

Placeholder-level extraction; the check-engine issue refines it.
"""

from __future__ import annotations

import hashlib
import re

from ctxaudit.engine.normalize import normalize
from ctxaudit.engine.types import Context, Rule

_ZH_FORCE = re.compile(r"禁止|不得|严禁|不允许|不能|不要|必须|务必|一律|只能|仅能|应当")
_EN_FORCE = re.compile(r"\b(never|must|shall|always|do not|don't|only|required|forbidden)\b", re.I)
_SPLIT = re.compile(r"(?<=[。！？；!?;])|\n")
_ITEM = re.compile(r"^\s*(?:\d+[.)、．]|[-*•])\s*")


def rule_id_for(text: str) -> str:
    """Stable id for an extracted rule: same normalised text → same id ("X-" + 8 hex)."""
    return "X-" + hashlib.sha1(normalize(text).encode()).hexdigest()[:8]  # noqa: S324 - an id, not a secret


def _candidates(text: str) -> list[str]:
    out = []
    for piece in _SPLIT.split(text):
        piece = _ITEM.sub("", piece).strip()
        if len(piece) >= 4 and (_ZH_FORCE.search(piece) or _EN_FORCE.search(piece)):
            out.append(piece)
    return out


def extract_rules(ctx: Context) -> list[Rule]:
    """Rules in the system/developer messages, then standing instructions in user messages."""
    seen: set[str] = set()
    rules: list[Rule] = []
    for m in ctx.messages:
        if m.role not in ("system", "developer", "user"):
            continue
        source = "user" if m.role == "user" else "system"
        for cand in _candidates(m.content):
            if m.role == "user" and not re.match(r"(?i)(always|never|don't|do not|必须|不要|禁止|永远)", cand):
                continue
            rid = rule_id_for(cand)
            if rid not in seen:
                seen.add(rid)
                rules.append(Rule(id=rid, text=cand, source=source))
    return rules
