"""Content terms for grounding: what a statement is *about*, compared with what the before-context says.

A term is a light stem of a Latin word (inflection stripped, then its first six letters:
"continuing" and "continue" → "contin", "sanitization" and "sanitize" → "saniti") or a CJK
character bigram. Identifiers are split into their parts as well as kept whole
("contract-B" → "contract-b", "contra", "b"; "middleware/ratelimit.py" → the path and its parts)
and weigh double when they hold a digit, a path, an email or an underscore: a file name or an
order number says more about what a sentence is about than a common word does.

Words that say *who* or *which act* ("user", "approved", "用户", "同意") are not content: they are
what the statement asserts, and grounding looks for the content elsewhere. Single capital
letters ("contracts B and C") are kept: they name things.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ctxaudit.engine.language.clauses import STOPWORDS
from ctxaudit.engine.language.normalize import nfkc

_LATIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-./@']*[A-Za-z0-9]|[A-Za-z0-9]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_PARTS = re.compile(r"[-_./@']+")
_STRONG = re.compile(r"\d|[_/@]|\.[a-z]{1,4}$|\(\)")
_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ies", "ied", "ed", "es", "s", "ly", "e")
# Words that name the speaker, the act or the summary itself, not what was said (English stems
# are computed from these below).
_NOT_CONTENT_EN = (
    "user users customer customers client requester human caller operator assistant agent model "
    "system developer reviewer review reviews reviewed scan scanner audit check checks test tests ci "
    "ask asked asks request requested requests instruct instructed told tell want wanted wants "
    "specify specified insist insisted demand demanded direct directed "
    "approve approved approval agree agreed agreement consent consented confirm confirmed confirmation "
    "accept accepted okayed allow allowed permit permitted permission authorize authorized authorise "
    "authorised authorization sign signed go-ahead yes said say says stated state mention mentioned "
    "note noted explain explained indicate indicated clarify clarified point pointed "
    "reply replied answer answered respond responded decide decided decision choose chose chosen "
    "select selected pick picked settle settled decline declined reject rejected refuse refused "
    "deny denied veto vetoed found find finding findings detect detected identify identified reveal "
    "revealed show showed shown flag flagged pass passed fail failed discover discovered uncover "
    "uncovered explicitly clearly previously already summary conversation message messages session "
    "earlier later then now next also gave give given fine ok okay sure "
    "after before during while without via per which what who whom whose let lets us"
)
_NOT_CONTENT_ZH = (
    "用户 客户 对方 助手 系统 要求 请求 希望 想要 指示 吩咐 提出 同意 批准 确认 答应 认可 允许 授权 "
    "准许 接受 拒绝 否决 驳回 决定 选择 选定 表示 提到 提及 指出 说明 强调 回复 回答 告诉 说过 发现 "
    "显示 表明 检测 审查 评审 扫描 检查 测试 审计 结果 结论 已经 之前 此前 曾经 明确 摘要 会话 消息 对话 "
    "诉求 需求 意见 事情 一下 这个 那个 已完成 完成 已经"
)


# Weight of a single CJK character next to a bigram (1.0): Chinese paraphrases keep the
# characters of a word more often than its bigrams ("真名" / "真实姓名", "删除" / "删掉").
CJK_CHAR_WEIGHT = 1.0


def _stem(word: str) -> str:
    for suf in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            word = word[: -len(suf)]
            break
    return word[:6]


_STOP_STEMS = frozenset(_stem(w) for w in (*STOPWORDS, *_NOT_CONTENT_EN.split()))


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


_STOP_BIGRAMS = frozenset(b for w in _NOT_CONTENT_ZH.split() for b in _bigrams(w))
# Function characters that end a word: a bigram across one ("单的", "的诉") is no word.
_ZH_SEP = frozenset("的了和与及或把被给对向从为吗呢吧啊之其这那个我你他她们也都就还又并而且是在")
_STOP_CHARS = frozenset("用户客要求请说表示确认同意已经之前摘")
_ZH_WEAK = frozenset("的了是在和与及或也都就还又把被给对向从为而且并吗呢吧啊之其这那个我你他她们")


@lru_cache(maxsize=65_536)  # words recur: the grounding scan asks for one per hit
def latin_term(word: str) -> str | None:
    """The term of one Latin word (lowercase stem), None for a stopword or act/party word."""
    s = _stem(word.casefold())
    return None if s in _STOP_STEMS else s


def terms(text: str) -> dict[str, float]:
    """Content terms of `text` with their weights: {term: 1.0 or 2.0 (identifiers)}.

    Latin words → light stems; identifiers → the whole (lowercase) and its parts; CJK runs →
    bigrams (pairs of function characters dropped). Act, party and stop words are left out.
    The dict is shared between calls with the same text: read it, never change it.
    """
    if len(text) <= _CACHED_CHARS:
        return _cached_terms(text)
    return _terms(text)


# Contexts repeat their sentences (boilerplate, re-sent tool output, a template with a number in
# it): a sentence's terms are computed once per process.
_CACHED_CHARS = 2_000


@lru_cache(maxsize=16_384)
def _cached_terms(text: str) -> dict[str, float]:
    return _terms(text)


# What one word or CJK run adds to a text's terms: (term, weight, keep) sets the weight, or with
# keep adds it only when the term is not there yet. Words recur across a context far more than
# sentences do ("order", "delete", a field name in every log line), so each is read once.
_Ops = tuple[tuple[str, float, bool], ...]


@lru_cache(maxsize=65_536)
def _word_ops(word: str) -> _Ops:
    raw = word.strip(".'")
    if not raw:
        return ()
    if len(raw) == 1:
        # A lone capital names a thing ("contracts B and C"); "A" and "I" are words.
        return ((raw.casefold(), 1.0, False),) if raw.isupper() and raw not in "AI" or raw.isdigit() else ()
    low = raw.casefold()
    if low.endswith("'s") and len(low) > 3:
        low = low[:-2]  # a possessive ("Tower's", "r.kowalski's") names the word, not a thing "s"
    parts = [p for p in _PARTS.split(low) if p]
    ops: list[tuple[str, float, bool]] = []
    if len(parts) > 1:
        if _STRONG.search(low):
            ops.append((low, 2.0, False))
        for p in parts:
            if p.isdigit():
                continue  # "2.3", "v1.4.2": the number counts whole, not digit by digit
            if len(p) == 1:
                ops.append((p, 1.0, True))
                continue
            term = latin_term(p)
            if term:
                ops.append((term, 1.0, True))
        return tuple(ops)
    term = latin_term(low)
    if not term:
        return ()
    return ((term, 2.0, False) if any(ch.isdigit() for ch in low) else (term, 1.0, True),)


@lru_cache(maxsize=65_536)
def _run_ops(run: str) -> _Ops:
    ops: list[tuple[str, float, bool]] = []
    kept = ""
    for b in _bigrams(run):
        if b in _STOP_BIGRAMS or (len(b) == 2 and (b[0] in _ZH_SEP or b[1] in _ZH_SEP)):
            continue
        if len(b) == 1 and b in _ZH_WEAK:
            continue
        ops.append((b, 1.0, False))
        kept += b
    # Single characters as well: Chinese paraphrases swap one character of a word
    # ("删除" / "删掉") more often than they keep whole bigrams.
    for ch in set(kept):
        if ch not in _ZH_WEAK and ch not in _STOP_CHARS:
            ops.append((ch, CJK_CHAR_WEIGHT, True))
    return tuple(ops)


def _terms(text: str) -> dict[str, float]:
    t = nfkc(text)
    out: dict[str, float] = {}
    for ops in (*map(_word_ops, _LATIN.findall(t)), *map(_run_ops, _CJK_RUN.findall(t))):
        for term, weight, keep in ops:
            if keep:
                out.setdefault(term, weight)
            else:
                out[term] = weight
    return out


def coverage(wanted: dict[str, float], found: set[str] | dict[str, float]) -> float:
    """Weighted share of `wanted` terms present in `found` (0..1; 0 when nothing is wanted)."""
    total = sum(wanted.values())
    if not total:
        return 0.0
    return sum(w for t, w in wanted.items() if t in found) / total
