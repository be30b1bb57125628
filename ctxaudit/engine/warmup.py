"""Load what the first check of a process would otherwise load on the request path.

A server or worker calls `warm_up()` once when it starts (ctxaudit/wsgi.py, the Celery
`worker_process_init` signal in ctxaudit/celery.py): the tiktoken encoding (~0.3 s to load),
the lexicon automaton and the regexes the checks compile on first use. Issue 13 measured the
first check of a process at 3.7 × T_tok against 1.7 × for the next one.
"""

from __future__ import annotations

import logging

from ctxaudit.engine.types import Context, ContextPair, Message, Rule

logger = logging.getLogger(__name__)

# English and Chinese, a tool result and a summary: every check and language path runs once.
_RULES = (
    Rule("W1", "Never delete orders without a manager approval ticket."),
    Rule("W2", "禁止输出用户手机号、身份证号等敏感字段。"),
)
_BEFORE = (
    Message("system", "You are the order assistant.\n" + "\n".join(r.text for r in _RULES)),
    Message("user", "请删除订单 10086，我已获得授权。Please delete order 10086."),
    Message("tool", '{"order": 10086, "status": "shipped"}', name="order_lookup"),
    Message("assistant", "I cannot delete orders without an approval ticket."),
)
_AFTER = (
    Message("system", "You are the order assistant.\nBe careful when you delete orders."),
    Message("user", "【历史摘要】用户要求删除订单 10086，助手已拒绝。", kind="summary"),
)


def warm_up() -> float:
    """Run the engine once on a small built-in pair; returns the seconds it took.

    Never raises: a failure here (e.g. TokenizerUnavailable) is logged, and the first real check
    reports it on its event as before.
    """
    import time

    from ctxaudit.engine.runner import run_checks

    t0 = time.perf_counter()
    try:
        run_checks(ContextPair(Context(_BEFORE), Context(_AFTER), _RULES))
    except Exception:
        logger.exception("engine warm-up failed; the first check will load what it needs")
    return time.perf_counter() - t0


def clear_text_caches() -> None:
    """Forget the per-text memos the checks keep across events (sentence terms, fact families,
    rule tokens), so a benchmark measures what a new event costs, not a repeated one."""
    from ctxaudit.engine import embeddings
    from ctxaudit.engine.checks import claims, drift, retention, stale, statements, terms

    for fn in (
        terms._cached_terms,
        terms._word_ops,
        terms._run_ops,
        terms.latin_term,
        stale._reads_as_report,
        stale._asks_or_answers,
        statements._shapes_of,
        statements._sentence_reading,
        claims.fact_families,
        drift._own_tokens,
        retention._runs,
    ):
        fn.cache_clear()
    embeddings.clear_cache()
