"""Text normalisation used to compare rule wordings (seed §4.4: "not just substring matching")."""

from __future__ import annotations

import re
import unicodedata

# Punctuation in either width; NFKC already folds full-width ASCII to half width.
_PUNCT = re.compile(r"[\s\u3000-\u303f\uff00-\uff0f\uff1a-\uff20\u2010-\u206f!-/:-@\[-`{-~]+")


def normalize(text: str) -> str:
    """Fold width (NFKC), case, whitespace and punctuation: "禁止 删除，订单。" → "禁止删除订单"."""
    return _PUNCT.sub("", unicodedata.normalize("NFKC", text).casefold())
