"""Stale instructions: done or closed before, live or pending after (issue 12 §5).

OpenHands stopped re-inserting the first user message next to its condensation summaries
(github.com/OpenHands/OpenHands issue 11910) because the agent re-ran a task it had finished:
a user message in the after-context reads as an open request.

An instruction (a user message of the before-context, sentence by sentence) is *closed* when
- the assistant reported it done later: a later assistant sentence covers at least ``DONE``
  (0.6) of the instruction sentence's content terms (terms.py) and reads as a report — a
  completion word ("done", "finished", "已完成", "搞定") or a past participle / "了" — not a
  plan or a question ("I'll…", "ready to…", "准备…", "?"); or
- it is a phase instruction ("don't code yet", "until I approve", "先别写代码", "在…之前不要")
  and a later user message opened the next phase ("start implementation", "go ahead",
  "开始实现", "可以开始").

``stale_instruction``:
- HIGH when the after-context holds the closed instruction as a live user message (a verbatim
  copy, or a short user message covering ``LIVE`` (0.8) of it) with no assistant message after it
  that reports it done;
- MEDIUM when text the compressor wrote lists it as pending: a sentence under "Pending:",
  "Next:", "TODO", "Remaining:", "待办", "下一步", "未完成" — at a line's start, after a summary
  marker or label ("【历史摘要】待办：…", "Summary: pending - …") or after another sentence of the
  line — or an item of a JSON summary's pending list ("pending_items", "next_steps"), that covers
  ``DONE`` of it; for a phase instruction also under "Constraints:"/"约束", or restated as still
  waiting ("… - waiting for approval", "等待批准").

An instruction is what the sentence asks to be done: a consent or acknowledgement in the same
sentence ("…, I agree", "you have my OK", "名单我看过了，发吧") is not part of it, and a sentence
that is only one ("go ahead.") is no instruction.

Only the user messages the after-context echoes are examined, so the cost is bounded by the
after-context, not by the session's length. Known misses: completion reported only by a tool
("exit code 0"); known false positives: a task the user asked to repeat in the same words.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache

from ctxaudit.engine.analysis import Analysis
from ctxaudit.engine.checks.grounding import SUMMARY_KINDS, is_harness_text
from ctxaudit.engine.checks.statements import data_line
from ctxaudit.engine.checks.terms import coverage, terms
from ctxaudit.engine.language.clauses import has_cjk, literal_trigger, lowered, sentences
from ctxaudit.engine.types import Finding, Message, Severity, Span

DONE = 0.6
LIVE = 0.8
# How many messages after an instruction are searched for its completion report.
_LOOKAHEAD = 40
_MAX_REPORT_CHARS = 20_000

_COMPLETION = re.compile(
    r"\b(?:done|finished|completed?|complete|all set|in place|succeeded|successful(?:ly)?|now (?:live|passing|works?))\b|✅"
    r"|已完成|完成了|做完|搞定|做好了|已经?(?:修复|添加|创建|部署|删除|重置|提交|合并|更新|实现|处理|发送|上线|改好|写好|配置)",
    re.I,
)
_PARTICIPLE = re.compile(
    r"\b[a-z]{3,}ed\b|\b(?:reset|set|built|run|ran|made|written|sent|put|shipped|rebuilt|rerun)\b|了|已", re.I
)
_PLAN = re.compile(
    r"\b(?:i'?ll|i will|will|shall|going to|ready to|let me|next|plan|planning|about to|should i|can i|would you|do you want)\b"
    r"|准备|将要|我会|我将|接下来|下一步|打算|计划|是否|要不要|吗",
    re.I,
)
_QUESTION = re.compile(r"[?？]\s*$")
_PHASE = re.compile(
    r"\b(?:don'?t|do not|no)\b[^.\n]{0,40}\b(?:yet|for now|until|before)\b|\bnot yet\b|\bwait (?:until|for)\b|\bhold off\b"
    r"|先(?:别|不要|不用)|暂(?:时)?(?:不要|别|不)|在[^。\n]{1,20}之前(?:不要|别|不)|等[^。\n]{1,12}(?:之后|以后)再",
    re.I,
)
_OPENS_PHASE = re.compile(
    r"\b(?:start|begin|proceed|go ahead|go for it|let'?s (?:start|begin|implement|code|build|do it)|implement (?:it|this|the)|start (?:coding|implementation|implementing)|approved?|lgtm|do immediate)\b"
    r"|开始(?:实现|编码|写|做|动手|开发)|可以(?:开始|写|动手|实现)|动手吧|批准|就按(?:这个|这样)|同意(?:这个)?方案",
    re.I,
)
_PENDING_HEAD = re.compile(
    r"^\s*(?:[#*>\-\d.\s]*)(?:\*\*)?(?:pending(?: tasks?)?|next(?: steps?)?|remaining|todo|to do|to-do|open (?:tasks|items)|in progress|still to do|outstanding"
    r"|待办|下一步|未完成|待处理|进行中|接下来|剩余|后续)(?:\*\*)?\s*[:：]?",
    re.I,
)
_CONSTRAINT_HEAD = re.compile(
    r"^\s*(?:[#*>\-\d.\s]*)(?:\*\*)?(?:constraints?|rules?|约束|规则|注意)(?:\*\*)?\s*[:：]?", re.I
)
_HEADING_LINE = re.compile(r"^\s*(?:#{1,6}\s|\*\*[^*]+\*\*\s*[:：]?\s*$|[^\n]{1,40}[:：]\s*$)")


@dataclass(frozen=True, slots=True)
class Closed:
    """A closed instruction sentence: before user message index, its span, how it was closed
    ("done" | "phase_opened") and where (the before message that closed it)."""

    index: int
    start: int
    end: int
    text: str
    how: str
    closed_by: int
    closer_start: int
    closer_end: int


def _is_live_user(m: Message) -> bool:
    return m.role == "user" and m.kind not in SUMMARY_KINDS and not is_harness_text(m.content)


# Instruction sentences are read from the first this many characters of a user message (a pasted
# log is not an instruction); completion reports from the first _MAX_REPORT_CHARS of a reply.
_MAX_INSTRUCTION_CHARS = 4_000
_MIN_WEIGHT = 2.0
# A term in more instructions than this does not pick candidates (it is filler, not a topic).
_COMMON = 200


# Contexts repeat sentences (templates, re-sent boilerplate): what a sentence reads as is
# decided once per process.
@lru_cache(maxsize=16_384)
def _reads_as_report(sentence: str) -> bool:
    """A report that something was done: a completion word or a participle, not a plan or a question."""
    if _QUESTION.search(sentence) or _PLAN.search(sentence):
        return False
    return bool(_COMPLETION.search(sentence) or _PARTICIPLE.search(sentence))


@lru_cache(maxsize=16_384)
def _asks_or_answers(sentence: str) -> bool:
    """A question, or an answer to a questionnaire: not an instruction."""
    return bool(_QUESTION.search(sentence) or _ANSWER.search(sentence))


# A consent or an acknowledgement inside an instruction ("…, I agree", "you have my OK",
# "名单我看过了，发吧") says the user allows the task; it is not part of what is to be done, and
# the report that the task is done never repeats it.
_ACK_CLAUSE = re.compile(
    r"(?:yes|ok(?:ay)?|sure|fine|approved?|agreed|i agree|i approve|confirmed|go ahead|go for it|do it|proceed"
    r"|sounds good|looks good|lgtm|you have my (?:ok|okay|approval|permission|go-ahead|consent|blessing)"
    r"|with my (?:ok|okay|approval|permission)|(?:that'?s |it'?s )?(?:fine|ok(?:ay)?) (?:with|by) me"
    r"|i(?:'ve| have) (?:seen|checked|reviewed|looked at) (?:it|them|this|that|the \w+)"
    r"|(?:我|我们)?(?:已经?|都)?(?:同意|批准|确认|授权)(?:了)?|可以(?:的)?|好(?:的)?|行|没问题|就这样|照做"
    r"|(?:那就?)?(?:发|做|去|开始|执行|搞|弄)吧"
    r"|\S{0,8}(?:已经?|都)?(?:看过|检查过|确认过|核对过|审核过|审过)(?:了)?)",
    re.I,
)
_CLAUSE_SPLIT = re.compile(r"[，,；;]\s*")


@lru_cache(maxsize=16_384)
def _task_clauses(sentence: str) -> str | None:
    """The sentence without its consent/acknowledgement clauses; None when nothing was removed,
    "" when the whole sentence is one (an answer, not a task)."""
    parts = _CLAUSE_SPLIT.split(sentence.strip().rstrip("。.!！"))
    kept = [p for p in parts if p.strip() and not _ACK_CLAUSE.fullmatch(p.strip(" \t.。!！"))]
    # a status clause beside the task ("五月考勤已锁定，把工资表重算一下", "the freeze is lifted,
    # deploy the build") says what holds; the report that the task is done never repeats it
    tasks = [p for p in kept if not _reads_as_report(p.strip())]
    if tasks and len(tasks) < len(kept):
        kept = tasks
    if len(kept) == len([p for p in parts if p.strip()]):
        return None
    return "，".join(kept)


def _task_terms(sentence: str, found: dict[str, float]) -> dict[str, float]:
    """The terms of what an instruction sentence asks to be done (see _ACK_CLAUSE)."""
    task = _task_clauses(sentence)
    if task is None:
        return found
    return terms(task) if task else {}


class _Sentences:
    """Sentences of one context's messages, split once per message; their terms are computed only
    where a caller needs them (most sentences are neither a new instruction nor a report).

    records=False leaves out a JSON object or array alone on its line (a log or a record the user
    pasted: no task anyone asked for), as statements.py does."""

    def __init__(self, messages: tuple[Message, ...], limit: int, records: bool = True) -> None:
        self.messages = messages
        self.limit = limit
        self.records = records
        self._spans: dict[int, list[tuple[int, int]]] = {}
        self._reports: dict[int, tuple[list[tuple[int, int, dict[str, float]]], set[str]]] = {}

    def spans(self, i: int) -> list[tuple[int, int]]:
        """(start, end) of each sentence in the first `limit` characters of message i."""
        got = self._spans.get(i)
        if got is None:
            text = self.messages[i].content[: self.limit]
            got = self._spans[i] = [
                (s, e)
                for s, e in sentences(text)
                # a record starts with a bracket (or space before one): most sentences are told apart
                # by their first character, without a copy
                if self.records or (text[s] not in "{[" and not text[s].isspace()) or not data_line(text[s:e])
            ]
        return got

    def terms_of(self, i: int) -> set[str]:
        """The union of the terms of message i's sentences (each distinct sentence read once)."""
        text = self.messages[i].content
        return set().union(*(terms(sent).keys() for sent in {text[s:e] for s, e in self.spans(i)}))

    def _report_sentences(self, i: int) -> tuple[list[tuple[int, int, dict[str, float]]], set[str]]:
        """The sentences of message i that read as a report (not a plan or a question; a
        completion word or a participle), and the union of their terms; read once per message."""
        got = self._reports.get(i)
        if got is None:
            text = self.messages[i].content
            reports = [(s, e, terms(text[s:e])) for s, e in self.spans(i) if _reads_as_report(text[s:e])]
            got = self._reports[i] = (reports, {t for _, _, st in reports for t in st})
        return got

    def report(self, i: int, wanted: dict[str, float]) -> tuple[int, int] | None:
        """The span of the first sentence of message i that reports `wanted` done (covers DONE
        of its terms and reads as a report), if any."""
        reports, union = self._report_sentences(i)
        if not reports:
            return None
        # coverage() inlined: this runs for every candidate reply of every instruction, and the
        # wanted weights are the same for all of its sentences.
        items = tuple(wanted.items())
        total = sum(w for _, w in items)
        if not total or sum(w for t, w in items if t in union) / total < DONE:
            return None  # no report sentence can cover more than all of them together
        keys = wanted.keys()
        for s, e, st in reports:
            # most sentences share no term at all: a C-level set test skips them
            if keys.isdisjoint(st) or sum(w for t, w in items if t in st) / total < DONE:
                continue
            return s, e
        return None

    def closing_report(self, i: int, wanted: dict[str, float], direct: bool) -> tuple[int, int] | None:
        """The span in reply i that reports `wanted` done: a report, or, from the reply right after
        the instruction (`direct`), a direct_report."""
        return self.report(i, wanted) or (self.direct_report(i, wanted) if direct else None)

    def direct_report(self, i: int, wanted: dict[str, float]) -> tuple[int, int] | None:
        """The first sentence of message i, the reply right after an instruction, that reports
        it done in words of its own ("Finished rebuilding the indices" for "Reindex the cluster",
        "banner 已更新为春节主题" for "把首页的横幅图片换成新年版本"): a completion word, or a report
        sharing DIRECT of the instruction's terms — never a partial or pending one ("the first three",
        "已提交复核，等待复核")."""
        reports, _ = self._report_sentences(i)
        total = sum(wanted.values())
        if not total:
            return None
        text = self.messages[i].content
        for s, e, st in reports[:3]:
            sent = text[s:e]
            if _PARTIAL.search(sent):
                return None
            if _COMPLETION.search(sent) or sum(w for t, w in wanted.items() if t in st) / total >= DIRECT:
                return s, e
        return None


# The reply right after an instruction reports it done with fewer of its words (direct_report).
DIRECT = 0.25
_PARTIAL = re.compile(
    r"\b(?:first (?:few|two|three|four|five|\d+)|some of|part of|partly|partially|so far|remaining|the rest|halfway|in progress"
    r"|waiting|awaiting|pending|queued|submitted for)\b"
    r"|部分|其中|前[一二三四五六七八九十两\d]+|目前为止|剩下|剩余|一半|进行中|等待|待审|待复核|待确认",
    re.I,
)


_IDENTIFIER = re.compile(r"[\d/_@]")


def _is_identifier(term: str) -> bool:
    """A term that names one thing (an order number, a version, a path, an address)."""
    return _IDENTIFIER.search(term) is not None


class _Instructions:
    """The before-context's user instruction sentences, indexed by term (candidates share one)."""

    def __init__(self, before: tuple[Message, ...]) -> None:
        self.before = before
        self.user = _Sentences(before, _MAX_INSTRUCTION_CHARS, records=False)
        self.replies = _Sentences(before, _MAX_REPORT_CHARS)
        self.items: list[tuple[int, int, int, dict[str, float]]] = []
        self.by_term: dict[str, list[int]] = defaultdict(list)
        # postings of the instructions that name no identifier (looked up when `wanted` names one)
        self.by_term_plain: dict[str, list[int]] = defaultdict(list)
        self.ids: list[frozenset[str]] = []
        self.totals: list[float] = []
        self.of_message: dict[int, list[int]] = defaultdict(list)
        seen: dict[frozenset[str], int] = {}
        # a sentence's text decides what it is: a repeated one is read once (None: no instruction)
        by_text: dict[str, int | None] = {}
        for i, m in enumerate(before):
            if not _is_live_user(m):
                continue
            for s, e in self.user.spans(i):
                sent = m.content[s:e]
                if sent in by_text:
                    known = by_text[sent]
                    if known is not None:
                        self.of_message[i].append(known)
                    continue
                by_text[sent] = None
                if _asks_or_answers(sent):
                    continue
                t = _task_terms(sent, terms(sent))
                if sum(t.values()) < _MIN_WEIGHT:
                    continue
                key = frozenset(t)
                if key in seen:  # the same instruction again: one item (its first occurrence)
                    by_text[sent] = seen[key]
                    self.of_message[i].append(seen[key])
                    continue
                by_text[sent] = seen[key] = len(self.items)
                ids = frozenset(term for term in t if _is_identifier(term))
                for term in t:
                    self.by_term[term].append(len(self.items))
                    if not ids:
                        self.by_term_plain[term].append(len(self.items))
                self.ids.append(ids)
                self.of_message[i].append(len(self.items))
                self.items.append((i, s, e, t))
                self.totals.append(sum(t.values()))
        self._closed: dict[int, Closed | None] = {}
        # terms in hundreds of instructions (filler, not a topic) and terms that name one thing
        self._common = {t for t, ns in self.by_term.items() if len(ns) > _COMMON}
        self._id_terms = {t for t in self.by_term if _is_identifier(t)}

    def candidates(self, wanted: Collection[str], covered: float = 0.0) -> list[int]:
        """Instructions at least `covered` of whose terms `wanted` (terms, or a terms dict) holds
        (0: sharing one term), in before-context order; computed over the term postings, never
        over every instruction.

        An instruction that names identifiers (numbers, paths, ids) none of which `wanted` names,
        while `wanted` names others, is another instruction: "refund order 10422" is not "refund
        order 10957" however many other words they share (issue 12 §3: rules that differ only in
        their object or number are different rules)."""
        names_ids = _IDENTIFIER.search("\n".join(wanted)) is not None
        # only the terms some instruction has can pick or count for one
        found = self.by_term.keys() & wanted
        common = found & self._common
        rare = found - common
        wanted_ids = found & self._id_terms
        pool: set[int] = set()
        # terms in hundreds of instructions do not pick candidates (counted below, for these only)
        if len(self.items) < len(rare):
            # fewer instructions than terms (a whole message's): the same pool, read off each
            # instruction's own terms
            for n, item in enumerate(self.items):
                have = item[3]
                if (
                    (not names_ids or not self.ids[n]) and not rare.isdisjoint(have)
                ) or not wanted_ids.isdisjoint(have):
                    pool.add(n)
        else:
            postings = self.by_term_plain if names_ids else self.by_term
            for t in rare:
                pool.update(postings.get(t, ()))
            for t in wanted_ids:
                pool.update(self.by_term[t])
        out = []
        for n in pool:
            if names_ids and self.ids[n] and wanted_ids.isdisjoint(self.ids[n]):
                continue
            # over the instruction's own terms (a few) rather than the wanted ones (a whole message's);
            # weights are 1 or 2, so the sum is the same in any order
            share = 0.0
            shared = False
            for t, w in self.items[n][3].items():
                if t in rare:
                    share += w
                    shared = True
                elif t in common:
                    share += w
            if shared and share / self.totals[n] >= covered:
                out.append(n)
        return sorted(out)

    def closed(self, n: int) -> Closed | None:
        """Whether instruction n was closed later in the before-context (see the module docstring)."""
        if n in self._closed:
            return self._closed[n]
        i, s, e, wanted = self.items[n]
        text = self.before[i].content[s:e]
        phase = bool(_PHASE.search(text))
        found: Closed | None = None
        direct = True  # the next assistant message answers this instruction
        for j in range(i + 1, min(len(self.before), i + 1 + _LOOKAHEAD)):
            m = self.before[j]
            if phase and _is_live_user(m) and _OPENS_PHASE.search(m.content[:2_000]):
                found = Closed(i, s, e, text, "phase_opened", j, 0, min(len(m.content), 200))
                break
            if _is_live_user(m):
                direct = False
            if not phase and m.role == "assistant":
                hit = self.replies.closing_report(j, wanted, direct)
                direct = False
                if hit:
                    found = Closed(i, s, e, text, "done", j, hit[0], hit[1])
                    break
        self._closed[n] = found
        return found


# Answers to a questionnaire ("Name: sanitize-chats.py - OK", "Default level: fine") accept a
# proposal; they are not tasks that get done.
_ANSWER = re.compile(r"^[^:：\n]{1,30}[:：]\s*\S|[-–—]\s*(?:ok|okay|fine|yes|good|可以|好的?)\s*$", re.I)


def _reported_next(after: tuple[Message, ...], replies: _Sentences, k: int, wanted: dict[str, float]) -> bool:
    """Whether an assistant message after user message k, before the next user message (at most
    _LOOKAHEAD messages on), reports `wanted` done: the kept message is then answered, not live."""
    direct = True  # the first reply answers it in its own words too, as in _Instructions.closed
    for j in range(k + 1, min(len(after), k + 1 + _LOOKAHEAD)):
        if after[j].role == "user" and _is_live_user(after[j]):
            return False
        if after[j].role == "assistant":
            if replies.closing_report(j, wanted, direct):
                return True
            direct = False
    return False


def check_stale_instructions(a: Analysis) -> list[Finding]:
    """Findings ``stale_instruction`` for one event (see the module docstring). Evidence: the
    after span, the instruction in the before-context and the message that closed it. Each
    message is split and its terms computed once; instructions are looked up by shared term."""
    before = a.before.messages
    after = a.after.messages
    summaries = {i for i, _ in a.index.summary_messages(a.pair.strategy)}
    out: list[Finding] = []
    idx: _Instructions | None = None
    after_replies = _Sentences(after, _MAX_REPORT_CHARS)
    after_user = _Sentences(after, _MAX_INSTRUCTION_CHARS, records=False)
    answered: dict[tuple[int, int], bool] = {}
    # 1. Live user messages in the after-context that repeat a closed instruction.
    for k, m in enumerate(after):
        if not _is_live_user(m) or k in summaries or not m.content:
            continue
        idx = idx or _Instructions(before)
        src = a.index.source_of(m)
        if src is not None:
            ids = idx.of_message.get(src, [])
        else:
            mt = after_user.terms_of(k)
            ids = idx.candidates(mt, LIVE)
        for n in ids:
            c = idx.closed(n)
            if c is None:
                continue
            wanted = idx.items[n][3]
            if (k, n) not in answered:
                answered[(k, n)] = _reported_next(after, after_replies, k, wanted)
            if answered[(k, n)]:
                continue
            out.append(_finding(a, c, k, 0, len(m.content), m.content, live=True))
            break
    # 2. Pending items in the text the compressor wrote.
    for k, m in a.index.new_messages():
        if m.role in ("assistant", "tool") or not m.content:
            continue
        for s, e, constraint in _pending_sentences(m.content):
            st = terms(m.content[s:e])
            if sum(st.values()) < _MIN_WEIGHT:
                continue
            idx = idx or _Instructions(before)
            for n in idx.candidates(st, DONE):
                bt = idx.items[n][3]
                if coverage(st, bt) < 0.5:
                    continue
                c = idx.closed(n)
                if c is not None and (not constraint or c.how == "phase_opened"):
                    out.append(_finding(a, c, k, s, e, m.content, live=False))
                    break
    return out


# A summary marker or label before what a line lists: "【历史摘要】待办：…", "Summary: pending - …".
_LEAD = re.compile(
    r"^\s*(?:(?:【[^】\n]{0,20}】|\[[^\]\n]{0,30}\])\s*"
    r"|(?:\*\*)?(?:summary|recap|history summary|context summary|摘要|总结|历史摘要|小结)(?:\*\*)?\s*(?:[:：]|\s[-–—]\s)\s*)+",
    re.I,
)
# Another label inside a line ("In progress:", "Plan:", "已完成：") ends what a pending label began.
_LABEL = re.compile(
    r"^\s*(?:\*\*)?(?:[^\s:：,，。.]{1,12}|[A-Za-z][A-Za-z ]{1,24})(?:\*\*)?\s*(?:[:：]|\s[-–—]\s)"
)
_ENUMERATOR = re.compile(r"^\s*(?:\d{1,2}[).、]|[（(]\d{1,2}[)）])\s*")
# A phase restated as still waiting ("…until the user approves the plan - waiting for approval").
_WAITING = re.compile(
    r"\b(?:waiting (?:for|on)|awaiting|pending (?:approval|sign-?off|review|confirmation)|"
    r"still needs? (?:approval|sign-?off|confirmation))\b|等待(?:批准|审批|确认|同意|通过)|待(?:批准|审批|确认)|尚未(?:批准|同意|确认)",
    re.I,
)
_PENDING_KEY = re.compile(
    r"pending|todo|to_do|next|remaining|open_(?:tasks|items)|outstanding|in_progress|待办|下一步|未完成|待处理|进行中|后续",
    re.I,
)


# Every word one of the labels and cues above needs (lowercase): a message with none lists nothing.
_LIST_WORDS = literal_trigger(
    [
        *(
            "pending",
            "next",
            "remaining",
            "todo",
            "to do",
            "to-do",
            "to_do",
            "open",
            "in progress",
            "in_progress",
        ),
        *("still", "outstanding", "constraint", "rule", "waiting", "awaiting", "need"),
        *(
            "待办",
            "下一步",
            "未完成",
            "待",
            "进行中",
            "接下来",
            "剩余",
            "后续",
            "约束",
            "规则",
            "注意",
            "等待",
            "尚未",
        ),
    ]
)


def _pending_sentences(content: str) -> list[tuple[int, int, bool]]:
    """(start, end, constraint) of what the text lists as pending (under "Pending:", "Next:",
    "TODO", "待办：" …, at a line's start, after a summary marker or label, or after another
    sentence of the line; the items of a JSON summary's pending lists), and, with constraint
    True, what it lists as constraints or restates as still waiting for an approval."""
    low = lowered(content)
    hits = [a for a, _ in _LIST_WORDS.spans(low)]
    if not hits:
        return []  # no label or cue below can match: most messages of a long context
    listed = _json_pending(content)
    if listed is not None:
        return listed
    out: list[tuple[int, int, bool]] = []
    section: str | None = None
    pos = 0
    for line in content.split("\n"):
        ls, le = pos, pos + len(line)
        pos = le + 1
        if not line.strip():
            continue
        lead = _LEAD.match(line)
        start = ls + (lead.end() if lead else 0)
        body = content[start:le]
        if not (_PENDING_HEAD.match(body) or _CONSTRAINT_HEAD.match(body)) and _HEADING_LINE.match(body):
            section = None
            continue
        if section is None and not _any_in(hits, start, le):
            continue  # nothing here can open a list
        for n, (s, e) in enumerate(sentences(body)):
            seg_s, seg_e = start + s, start + e
            if section is None and not _any_in(hits, seg_s, seg_e):
                continue
            seg = content[seg_s:seg_e]
            head = _PENDING_HEAD.match(seg) or _CONSTRAINT_HEAD.match(seg)
            # at the start of a line a label may stand alone ("Next steps"); inside a line or after
            # a summary label it needs its colon or dash ("… Next: tag 2.9.0"), or "Next we looked
            # at the parser" would open a list
            if head and (n or lead) and not _SEPARATED.match(content, seg_s + head.end() - 1):
                head = None
            if head:
                section = "pending" if _PENDING_HEAD.match(seg) else "constraint"
                seg_s += head.end()
            elif _LABEL.match(seg) and not _ENUMERATOR.match(seg):
                section = None
            if section is None:
                if _WAITING.search(seg):
                    out.append((seg_s, seg_e, True))
                continue
            enum = _ENUMERATOR.match(content, seg_s, seg_e)
            if enum:
                seg_s = enum.end()
            if content[seg_s:seg_e].strip(" \t-–—*•·:："):
                out.append((seg_s, seg_e, section == "constraint"))
    return out


# A label's own separator: its colon (the last character the head matched) or a dash after it.
_SEPARATED = re.compile(r"[:：]|.\s*[-–—]\s")


def _any_in(starts: list[int], a: int, b: int) -> bool:
    """Whether a sorted position list holds one in [a, b)."""
    k = bisect_left(starts, a)
    return k < len(starts) and starts[k] < b


def _json_pending(content: str) -> list[tuple[int, int, bool]] | None:
    """The items of a JSON summary's pending lists ("pending_items": […], "next_steps": […]) with
    their spans in `content`; None when the text is not a JSON object."""
    text = content.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    out: list[tuple[int, int, bool]] = []
    for key, items in value.items():
        if not isinstance(key, str) or not _PENDING_KEY.search(key):
            continue
        for item in items if isinstance(items, list) else [items]:
            if not isinstance(item, str) or not item.strip():
                continue
            quoted = json.dumps(item, ensure_ascii=False)[1:-1]
            at = content.find(quoted)
            if at < 0:
                quoted = json.dumps(item)[1:-1]
                at = content.find(quoted)
            if at >= 0:
                out.append((at, at + len(quoted), False))
    return out


def _finding(a: Analysis, c: Closed, k: int, s: int, e: int, content: str, *, live: bool) -> Finding:
    before = a.before.messages
    closer = before[c.closed_by].content[c.closer_start : c.closer_end]
    how_en = (
        f"the assistant reported it done in message #{c.closed_by} (“{_cut(closer)}”)"
        if c.how == "done"
        else f"the user opened the next phase in message #{c.closed_by} (“{_cut(closer)}”)"
    )
    how_zh = (
        f"助手已在消息 #{c.closed_by} 报告完成（“{_cut(closer)}”）"
        if c.how == "done"
        else f"用户已在消息 #{c.closed_by} 开启了下一阶段（“{_cut(closer)}”）"
    )
    where_en = (
        f"re-inserts it as a live user message (#{k})" if live else f"lists it as pending (message #{k})"
    )
    where_zh = f"把它重新放成了一条有效的用户消息（#{k}）" if live else f"把它列为待办（消息 #{k}）"
    en = (
        f"Stale instruction: “{_cut(c.text)}” (before, user message #{c.index}) was closed — {how_en} — but the "
        f"after-context {where_en}; the next turn may do it again."
    )
    msg = en
    if has_cjk(c.text) or has_cjk(content[s:e]):
        msg = f"过期指令：“{_cut(c.text)}”（压缩前用户消息 #{c.index}）已经结束——{how_zh}——但压缩后{where_zh}，下一轮可能会重做。 / {en}"
    quote = content[s:e]
    return Finding(
        "stale_instruction",
        Severity.HIGH if live else Severity.MEDIUM,
        msg,
        evidence=(
            Span("after", k, s, e, quote),
            Span("before", c.index, c.start, c.end, c.text),
            Span("before", c.closed_by, c.closer_start, c.closer_end, closer),
        ),
        data={"closed": c.how, "live": live},
    )


def _cut(text: str, n: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
