"""How a finding's message reads: English for an English context, "中文 / English" for a Chinese
one, so a reviewer who reads only English can triage a Chinese context (the form the rule
findings in rule_findings.py use)."""

from __future__ import annotations


def bilingual(zh: str, en: str, chinese: bool) -> str:
    """The message for one finding. zh, en: the same sentence(s) in each language; chinese: the
    context's language (the text the finding is about holds CJK). Returns en alone, or
    "zh / en" with the Chinese first (the context's own language leads)."""
    return f"{zh} / {en}" if chinese else en
