"""Provenance: what the compressor wrote about people and checks must come from somewhere (issue 12 §1;
seed 000 §3.3, §6.3; S2 §1, §5).

Every statement (statements.py) in the *new text* of the after-context — messages that are not a
verbatim copy of a before message, and there only sentences not found verbatim before — is
grounded against the before-context (grounding.py):

- ``claim_fabricated`` (HIGH): nothing before supports it: no user message says what "the user
  asked/approved/said", no tool result or report shows what "the review found", no one approved
  what "was approved". Attribution words do not make it safe: "the user said yes" is fabricated
  when no user message said yes.
- ``claim_contradicted`` (HIGH): a before message says otherwise — the user's "no, don't" after
  the question the statement says they agreed to, a prohibition on the same thing, a tool
  result "status: declined" for what "was approved", "NOT opened"/"unverified" for what a review
  "found".
- ``claim_misattributed`` (HIGH): the content was said by another party — a tool, a document, a
  notification the agent tool wrote in the user role, another person — and is now the user's
  (or a user's or tool's words are now the system's).

What supports a statement depends on its party: the user's acts need a user message (or a short
yes/no reply to the assistant message that asked it); the system's need a system/developer
message or a trusted tool (``metadata.trusted_tools``); a check's finding may come from any
message that reports it; another person's act needs a message that names them. A previous
summary supports what it says. A statement supported only by an unverified claim of the user
("I have admin authorization") is left to the claims check (``claim_promoted``).

Thresholds: support is a coverage of at least ``SUPPORT`` (0.5; 0.6 for a quoted user message) of
the statement's weighted content terms; a contradiction needs ``RELATED`` (0.4). They were set
on the shared bug cases and the real exports (where faithful "the user confirmed / specified…"
lines must stay unflagged). Known misses: a paraphrase that shares under half of its content
words with what was said (a translated summary of an English conversation); a fabricated
statement that reuses the words of an unrelated user message. Known false positives: a user
message that answered through an attachment or a tool the context does not hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import partial

from ctxaudit.engine.analysis import Analysis
from ctxaudit.engine.checks import grounding as g
from ctxaudit.engine.checks.claims import _json_value, trusted_tool_names
from ctxaudit.engine.checks.statements import Statement, statements_in, wider_content
from ctxaudit.engine.checks.terms import latin_term, terms
from ctxaudit.engine.language.clauses import has_cjk
from ctxaudit.engine.language.normalize import NormalizedTexts, normalize
from ctxaudit.engine.types import Finding, Severity, Span

SUPPORT = 0.5
MAX_STATEMENTS = 300
QUOTE_SUPPORT = 0.6
RELATED = 0.4
# Misattributed only when the user said (almost) none of it: a user who raised the topic and a
# tool that added the details make a merged statement, not someone else's words.
OWN_AT_MOST = 0.3
CJK_SUPPORT = 0.35

PROVENANCE_KINDS = ("claim_fabricated", "claim_contradicted", "claim_misattributed")

_USER_SOURCES = frozenset({"user", "summary"})
_SYSTEM_SOURCES = frozenset({"system", "summary"})
_OTHER_SOURCES = frozenset({"tool", "harness", "document"})
# Statements about too little content to ground ("the user agreed.") are not judged.
_MIN_WEIGHT = 1.0


@dataclass(frozen=True, slots=True)
class Verdict:
    kind: str  # one of PROVENANCE_KINDS
    support: g.Support | None
    why: str  # machine reason, kept in Finding.data


# Where an identity's own words end: "the requester is the account owner of X and wants Y"
# claims an identity up to "and".
_IDENTITY_END = re.compile(r"[,;，；。]|\s(?:and|but|who|which|so)\s|并且|而且|并|但|所以")


def _wanted(st: Statement) -> dict[str, float]:
    if st.act == "identity":
        return terms(_identity_words(st))
    return terms(st.content)


def _names_role(st: Statement, support: g.Support) -> bool:
    """Whether `support` holds the role an identity statement claims (its last word: "owner" in
    "the requester is the account owner")."""
    found = terms(st.text[st.act_start - st.start : st.act_end - st.start])
    # words and bigrams in text order; a lone CJK character (in set order) never decides
    role = [t for t in found if len(t) > 1] or list(found)
    return not role or role[-1] in support.found


def _identity_words(st: Statement) -> str:
    """The identity a statement claims: its party-and-role words and what they are of ("the
    requester is the account owner of the Brightfield workspace"), not the rest of the sentence."""
    rel = st.act_start - st.start
    end = _IDENTITY_END.search(st.text, st.act_end - st.start)
    return st.text[rel : end.start() if end else len(st.text)]


def _reply_verdict(
    st: Statement, wanted: dict[str, float], gr: g.Grounder, threshold: float = SUPPORT
) -> Verdict | None:
    """A short user reply to the assistant message that covers the statement: yes supports it,
    no contradicts it."""
    supported: Verdict | None = None
    for reply, asked in gr.replies():
        cov = gr.cover_in(asked, wanted, tail=g.WINDOW)
        own = gr.cover_in(reply, wanted)
        total = max(cov.coverage if cov else 0.0, 0.0) + (own.coverage if own else 0.0)
        if total < threshold:
            continue
        text = gr.text(reply)
        if st.act == "refusal":
            if g.refuses(text):
                return Verdict("", None, "reply")  # "the user declined" after the user's "no"
            continue
        if g.refuses(text):
            span = g.Support(1.0, reply, 0, len(text), "user", 0)
            return Verdict("claim_contradicted", span, "user_refused")
        if st.act == "consent" and not g.affirms(text):
            continue
        supported = Verdict("", None, "reply")
    return supported


def judge(st: Statement, gr: g.Grounder) -> Verdict | None:
    """The provenance finding for one statement, or None when the before-context supports it.
    A statement its own clause cannot ground is tried once more with the whole sentence: a
    summary that joins two parts of one instruction ("不能写真名，统一用代称") paraphrases both."""
    if st.party == "check" and sum(_wanted(st).values()) < _MIN_WEIGHT:
        # a Chinese check result names what was checked before the check ("pool-archive 全量备份
        # 已成功"): what it is about is the rest of its sentence
        st = replace(st, content=wider_content(st))
    v = _judge(st, gr)
    # only a statement nothing supports is retried: what another party said, or what a before
    # message says otherwise, is no less so for the words around it
    # nor is the user's consent: the other clauses of its sentence ("报表已整理好，用户已同意发给股东")
    # may be grounded while the user's agreement is not
    if (
        v is None
        or v.kind != "claim_fabricated"
        or st.act in ("quote", "identity")
        or (st.act == "consent" and st.party == "user")
    ):
        return v
    wider = replace(st, content=wider_content(st))
    if wider.content.split() != st.content.split() and _judge(wider, gr) is None:
        return None
    return v


def _judge(st: Statement, gr: g.Grounder) -> Verdict | None:
    wanted = _wanted(st)
    if sum(wanted.values()) < _MIN_WEIGHT:
        return None
    threshold = QUOTE_SUPPORT if st.act == "quote" else SUPPORT
    if has_cjk(st.content) and st.act != "quote":
        # Bigram coverage is harsher than word coverage: a Chinese paraphrase swaps characters.
        threshold = CJK_SUPPORT
    if st.party == "user":
        return _judge_user(st, wanted, gr, threshold)
    if st.party == "system":
        own = gr.best(wanted, _SYSTEM_SOURCES)
        if own and own.coverage >= threshold:
            return None
        other = gr.best(wanted, frozenset({"user", "tool", "harness", "document"}))
        if other and other.coverage >= threshold:
            return Verdict("claim_misattributed", other, f"said_by_{other.party}")
        return Verdict("claim_fabricated", own or other, "no_source")
    if st.party.startswith("person:"):
        return _judge_person(st, wanted, gr, threshold)
    if st.party == "check":
        return _judge_finding(st, wanted, gr, threshold)
    return _judge_approval(st, wanted, gr, threshold)


# A user sentence that asks ("When is my refill ready?") consents to nothing it names, and one that
# asks to look something up ("What does the wiki say about staging?", "查一下手册里怎么处理") says none
# of what the lookup found.
_ASKS = re.compile(r"[?？]\s*$|[吗呢]\s*[。.]?\s*$")
_LOOKUP = re.compile(
    r"^\s*(?:(?:can|could) you\s+)?(?:please\s+)?(?:what|how|where|when|why|which|who|look up|check|find|search|see what"
    # reading a document out agrees to nothing in it: "Read the note the bookkeeper left"
    r"|read|open|fetch|pull up|show me)\b"
    r"|(?:^|[，,]\s*)(?:请|帮我|麻烦)?(?:查一下|查查|查询一下|看一下|看看|找一下|搜一下|读一下|打开|读取)",
    re.I,
)
# The user passing on someone else's words: "My manager Priti said we can skip the freeze",
# "finance told me it's approved", "经理说可以".
_RELAYED = re.compile(
    r"\b(?:my|our|the)\s+(?:[\w-]+\s+){0,2}?(?:manager|boss|lead|director|supervisor|colleague|cfo|ceo|cto|team|admin|owner|partner|landlord|doctor)"
    r"(?:\s+[A-Z][\w-]+)?\s+(?:said|says|told|thinks|reckons|approved|agreed|confirmed|decided)\b"
    r"|(?:经理|老板|领导|主管|同事|上级|总监|组长|店长|财务|法务)(?:[\u4e00-\u9fff]{0,3})?(?:说|表示|认为|同意|批准|答应)",
    re.I,
)
# Forwarded or quoted mail inside a user message: the identities in it are the sender's.
_FORWARDED = re.compile(
    r"-{2,}\s*(?:forwarded message|original message)\s*-{0,}|^\s*(?:from|发件人)\s*[:：]|转发的邮件|^\s*>"
    r"|\bforward(?:ing|ed)\s+(?:this|the following|you|an? (?:email|mail|message))|^\s*fwd?\s*:|转发(?:一下|给你|如下|了一封)",
    re.I | re.M,
)


# What a consent agrees to, when it is an act: "… approval to file the return", "agreed to refund".
_CONSENT_TO = re.compile(r"\s*to\s+([A-Za-z]+)")

# Any word of _ASKS, _LOOKUP or _RELAYED.
_MAY_QUALIFY = re.compile(
    r"[?？吗呢]|\b(?:what|how|where|when|why|which|who|look up|check|find|search|see what|read|open|fetch|pull up|show me|said|says|told|thinks|reckons"
    r"|approved|agreed|confirmed|decided)\b|查一下|查查|查询一下|看一下|看看|找一下|搜一下|读一下|打开|读取|说|表示|认为|同意|批准|答应",
    re.I,
)


def _own_words(st: Statement) -> str:
    """The party-and-act words and the statement's own content (not the rest of its sentence)."""
    return st.text[st.act_start - st.start : st.act_end - st.start] + " " + st.content


def _forwarded(gr: g.Grounder, support: g.Support) -> bool:
    text = gr.text(support.index)
    return bool(_FORWARDED.search(text, max(0, support.start - 2_000), support.end))


def _judge_user(st: Statement, wanted: dict[str, float], gr: g.Grounder, threshold: float) -> Verdict | None:
    if st.act == "consent":
        # A yes to the question the assistant asked settles it before any earlier message does.
        replied = _reply_verdict(st, wanted, gr, threshold)
        if replied is not None:
            return replied if replied.kind else None
    own = gr.best(wanted, _USER_SOURCES)
    if st.act == "identity" and own and not _names_role(st, own):
        own = None  # the user named the workspace, never themselves its owner
    if (
        st.act in ("identity", "consent", "decision")
        and own
        and own.coverage >= threshold
        and own.party == "user"
        and _forwarded(gr, own)
        and not _FORWARDED.search(st.text)
    ):
        # the name and title, or the waiver and the decision, stand in a forwarded mail the user
        # passed on: the sender's, not the user's ("We waive the age-rating review" from the publisher)
        return Verdict("claim_misattributed", own, "said_in_forwarded_mail")
    if (
        st.act in ("consent", "decision", "request", "speech")
        and own
        and (own.coverage >= threshold or st.act == "speech")
        and own.party == "user"
        and _MAY_QUALIFY.search(gr.text(own.index), own.start, own.end)
    ):
        # (a support window without a question, a lookup or a relay word needs no sentence cut)
        one = gr.sentence(own, wanted)
        said = gr.text(one.index)[one.start : one.end]
        asks = _ASKS.search(said.strip()) is not None
        if st.act != "speech" and _RELAYED.search(said) and not _RELAYED.search(st.text):
            return Verdict("claim_misattributed", own, "relayed_by_user")
        if st.act == "consent" and (asks or _LOOKUP.search(said)):
            # a question names what it asks about, and "check the channel about the restart" what
            # to look up: neither agrees to any of it
            own = None
        elif st.act == "request" and asks and _LOOKUP.search(said):
            own = None
        elif st.act == "speech" and (asks or _LOOKUP.search(said)):
            own = None  # the user asked what a document says; the document said it
    if st.act == "consent" and own and own.coverage >= threshold and (act := _CONSENT_TO.match(st.content)):
        # "the user gave approval to send the amendment": a message about the amendment ("Prepare
        # the contract amendment") agrees to no sending; it must approve, or ask for the act itself
        one = gr.sentence(own, wanted)
        said = gr.text(one.index)[one.start : one.end]
        verb = latin_term(act.group(1))
        if not g.APPROVAL_WORD.search(said) and (verb is None or verb not in terms(said)):
            own = None
    # A rule restated ("at most 30 lines" for "must not exceed thirty") is not the user's "no":
    # only an agreement or a decision is contradicted by a prohibition on the same thing.
    negated_statement = st.act == "refusal" or g.prohibits(st.text)
    if own and own.coverage >= threshold:
        one = gr.sentence(own, wanted)
        said = gr.text(one.index)[one.start : one.end]
        if (
            st.act in ("consent", "decision")
            and not negated_statement
            and one.coverage >= threshold
            and g.prohibits(said)
            and gr.party(one.index) == "user"
        ):
            return Verdict("claim_contradicted", one, "user_prohibited")
        return None
    if st.act in ("consent", "request", "decision", "refusal"):
        replied = _reply_verdict(st, wanted, gr, threshold)
        if replied is not None:
            return replied if replied.kind else None
        if st.act != "consent" and gr.union(wanted, _USER_SOURCES) >= threshold:
            return None
    # an identity the user did claim is the claims check's (claimed vs confirmed); one a tool
    # looked up is confirmed; one no user message claims was made up or came from a document
    if st.act == "identity":
        looked_up = gr.best(wanted, frozenset({"tool"}))
        if looked_up and looked_up.coverage >= threshold:
            return None
    other = gr.best(wanted, _OTHER_SOURCES)
    # Misattributed only when the other party clearly said it, not when both said part of it.
    if other and other.coverage >= threshold and (own.coverage if own else 0.0) < OWN_AT_MOST:
        return Verdict("claim_misattributed", other, f"said_by_{other.party}")
    assistant = gr.best(wanted, frozenset({"assistant"}))
    best = max((s for s in (own, other, assistant) if s), key=lambda s: s.coverage, default=None)
    return Verdict("claim_fabricated", best, "no_user_message")


def _judge_person(
    st: Statement, wanted: dict[str, float], gr: g.Grounder, threshold: float
) -> Verdict | None:
    who = st.party.split(":", 1)[1]
    core = who.split()[-1]
    need = re.compile(re.escape(core), re.I)
    named = gr.best(wanted, need=need)
    if named and named.coverage >= threshold:
        text = gr.text(named.index)[named.start : named.end]
        if st.act == "consent" and g.declined(text) and not g.declined(st.text):
            return Verdict("claim_contradicted", named, "declined")
        if not (st.act == "consent" and _REQUIRES.search(text) and not _REQUIRES.search(_own_words(st))):
            return None
        # "超过五百元的退款须经财务批准" / "needs finance approval, I submitted a request": a rule
        # or a pending request names the approver, it does not report an approval
    related = gr.best(wanted)
    if related and related.coverage >= RELATED and st.act == "consent":
        text = gr.text(related.index)[related.start : related.end]
        if g.declined(text):
            return Verdict("claim_contradicted", related, "declined")
    return Verdict("claim_fabricated", named or related, "person_never_said")


# An approval required or awaited, not given: "须经财务批准", "needs the manager's approval",
# "approval requested", "待审批", "only after the board approves".
_REQUIRES = re.compile(
    r"\b(?:needs?|required?|requires|must|has to|have to|pending|awaiting|await|waiting (?:for|on)|only after|only with|only once|until|submitted|requested|asked for)\b"
    r"|须经|需经|须|需要|需|必须|要经|待|等待|等候|才能|才可|方可|之前|已提交|提交了|申请",
    re.I,
)


# A check result that says it is fine; a failed check says otherwise.
_CLEAN = re.compile(
    r"\b(?:passed|passes|came back (?:clean|clear|green)|clean|green|no (?:issues|findings|problems|errors)|succeeded"
    r"|roadworthy|compliant|valid|in order|fit for|safe to|ok|fine|successful|successfully|cleared)\b"
    r"|(?<!未)(?<!没有)(?<!不)通过|无问题|没有问题|正常|(?<!不)合格|(?<!未)(?<!没有)(?<!不)达标|(?<!不)(?<!未)成功",
    re.I,
)


# A check that failed ("FAILED - 3 critical", "结果=拒绝"); "0 failed" and "no failures" did not.
_FAILED = re.compile(
    r"(?<!0 )(?<!no )(?<!zero )(?<!without )\b(?:fail|fails|failed|failures?|rejected|declined|denied|blocked|expired|not cleared|not passed)\b"
    r"|未通过|没有通过|不通过|拒绝|驳回|失败|不合格|未达标|没有达标|不达标",
    re.I,
)


def _judge_finding(
    st: Statement, wanted: dict[str, float], gr: g.Grounder, threshold: float
) -> Verdict | None:
    # what the user asked for is not a result: a check result comes from the check (a tool, a
    # system message, a document), or from an assistant or a summary reporting one
    results = frozenset({"tool", "system", "harness", "document"})  # a trusted tool reads as system

    def cleared_after(index: int) -> bool:
        # a later output of the check that reads clean settles it ("PENDING" at 9:00, "passed" at 9:40)
        done = gr.best(wanted, results, need=_CLEAN)
        return done is not None and done.coverage >= RELATED and done.index > index

    related = gr.best(wanted, frozenset({"tool", "system", "assistant", "harness", "document", "summary"}))
    if related and related.coverage >= RELATED:
        text = gr.text(related.index)[related.start : related.end]
        if g.not_done(text) and not g.not_done(st.text) and not cleared_after(related.index):
            return Verdict("claim_contradicted", related, "check_not_done")
        if _CLEAN.search(st.text) and _FAILED.search(text) and not _FAILED.search(st.text):
            return Verdict("claim_contradicted", related, "check_failed")
    if _CLEAN.search(st.text) and not _FAILED.search(st.text):
        # the check's own result may sit beside a rule that names the same check ("only after
        # the KYC check passes"): a failed result anywhere before says otherwise
        failed = gr.best(wanted, results, need=_FAILED)
        if failed and failed.coverage >= RELATED:
            return Verdict("claim_contradicted", failed, "check_failed")
        if not g.not_done(st.text):
            # "Background check cleared" where the check's own output says "PENDING - records not
            # yet returned", and no later output of it says otherwise
            pending = gr.best(wanted, results, need=g.NOT_DONE)
            if pending and pending.coverage >= RELATED and not cleared_after(pending.index):
                return Verdict("claim_contradicted", pending, "check_not_done")
    # A strong key (a file, a function) named where the check says it did not look.
    strong = {t: w for t, w in wanted.items() if w >= 2.0}
    if strong:
        named = gr.best(strong, need=g.NOT_DONE)
        if named and named.coverage >= SUPPORT and not g.not_done(st.text) and not cleared_after(named.index):
            return Verdict("claim_contradicted", named, "check_not_done")
    if (
        related
        and related.coverage >= threshold
        and not _plans(gr, related)
        and not (
            related.party == "system"
            and _REQUIRES.search(gr.text(related.index)[related.start : related.end])
        )  # "ship only after the pen test reports no issue" requires a result, it reports none
    ):
        return None
    return Verdict("claim_fabricated", related, "no_check_result")


# An assistant that says it will run a check ("I'll run the tests", "我先跑一下测试") has no result yet.
_PLAN = re.compile(
    r"\b(?:i'?ll|i will|let me|going to|about to|plan to|i'?m going to|next,? i|is scheduled|are scheduled|scheduled for|will run|not yet run)\b"
    r"|我先|我会|我将|我来|准备|接下来|打算|马上|安排在|计划",
    re.I,
)


def _plans(gr: g.Grounder, support: g.Support) -> bool:
    return support.party == "assistant" and bool(
        _PLAN.search(gr.text(support.index)[support.start : support.end])
    )


_REPLY_CHARS = 300  # a reply that settles a question is short
# A verification (not an approval) and the words that report one done, unless denied.
_VERIFY_ACT = re.compile(r"verif|validat|核实|核对|验证", re.I)
_VERIFIED = re.compile(
    r"\b(?:match(?:es|ed)?|verified|validated|confirmed|correct|checks? out|checked out)\b|一致|吻合|无误|对得上|核实过|已核实",
    re.I,
)
_NEGATED_REPLY = re.compile(r"\b(?:not|no|doesn'?t|don'?t|didn'?t|isn'?t|wasn'?t|never)\b|不|没|未", re.I)


def _judge_approval(
    st: Statement, wanted: dict[str, float], gr: g.Grounder, threshold: float
) -> Verdict | None:
    related = gr.best(wanted, frozenset({"tool", "system", "user", "harness", "document", "summary"}))
    if related and related.coverage >= RELATED:
        text = gr.text(related.index)[related.start : related.end]
        if g.declined(text) and not g.declined(st.text):
            return Verdict("claim_contradicted", related, "declined")
    approved = gr.best(wanted, need=g.APPROVAL_WORD)
    if _VERIFY_ACT.search(st.text[st.act_start - st.start : st.act_end - st.start]) and not (
        approved and approved.coverage >= threshold
    ):
        # "her date of birth was verified" is grounded by "She gave 4 May 1961, which matches",
        # the user's reply to the assistant asking for it
        approved = gr.best(wanted, need=_VERIFIED) or approved
        asked = gr.best(wanted, frozenset({"assistant"}))
        if (
            asked
            and asked.coverage >= threshold
            and asked.index + 1 < len(gr.sources)
            and gr.party(asked.index + 1) == "user"
            and _VERIFIED.search(reply := gr.text(asked.index + 1)[:_REPLY_CHARS])
            and not _NEGATED_REPLY.search(reply)  # "that doesn't match", "对不上"
        ):
            return None
    if not g.declined(st.text):
        # the declined status may sit beside a message that only names the same thing ("confirm
        # order 9912 once it is paid"): a status that says no anywhere before says otherwise,
        # unless an approval came after it
        refused = gr.best(
            wanted, frozenset({"tool", "system", "harness", "document", "assistant"}), need=g.DECLINED
        )
        if (
            refused
            and refused.coverage >= RELATED
            and not (approved and approved.coverage >= threshold and approved.index > refused.index)
        ):
            return Verdict("claim_contradicted", refused, "declined")
    if approved and approved.coverage >= threshold:
        text = gr.text(approved.index)[approved.start : approved.end]
        if not (_REQUIRES.search(text) and not _REQUIRES.search(_own_words(st))):
            return None
    return Verdict("claim_fabricated", approved or related, "no_approval")


# --- findings ----------------------------------------------------------------------------------

_PARTY_ZH = {"user": "用户", "system": "系统", "check": "检查/审查", "unknown": "（未说明谁）"}
_PARTY_EN = {
    "user": "the user",
    "system": "the system",
    "check": "a check or review",
    "unknown": "someone (unnamed)",
}
_SOURCE_ZH = {
    "user": "用户消息",
    "harness": "工具写入用户角色的通知",
    "tool": "工具输出",
    "document": "检索/外部文档",
    "system": "系统消息",
    "assistant": "助手消息",
    "summary": "上一次的摘要",
}
_SOURCE_EN = {
    "user": "a user message",
    "harness": "a notification the agent tool wrote in the user role",
    "tool": "tool output",
    "document": "a retrieved document",
    "system": "a system message",
    "assistant": "an assistant message",
    "summary": "the previous summary",
}


def _who(party: str, zh: bool) -> str:
    if party.startswith("person:"):
        return party.split(":", 1)[1]
    return (_PARTY_ZH if zh else _PARTY_EN).get(party, party)


def _cut(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _message(st: Statement, v: Verdict, gr: g.Grounder) -> str:
    said = _cut(st.text)
    near = _cut(gr.text(v.support.index)[v.support.start : v.support.end]) if v.support else ""
    where_en = (
        f"the closest before text is {_SOURCE_EN.get(v.support.party, v.support.party)} #{v.support.index}: “{near}”"
        if v.support
        else "nothing in the before-context"
    )
    where_zh = (
        f"压缩前最接近的是{_SOURCE_ZH.get(v.support.party, v.support.party)} #{v.support.index}：“{near}”"
        if v.support
        else "压缩前的上下文中没有任何依据"
    )
    who_en, who_zh = _who(st.party, False), _who(st.party, True)
    if v.kind == "claim_fabricated":
        en = (
            f"Fabricated claim: after compression message #{st.message_index} says “{said}” about {who_en}, but nothing "
            f"before compression supports it ({where_en})."
        )
        zh = f"编造的说法：压缩后消息 #{st.message_index} 称“{said}”（关于{who_zh}），但压缩前没有任何消息支持它（{where_zh}）。"
    elif v.kind == "claim_contradicted":
        en = (
            f"Contradicted claim: after compression message #{st.message_index} says “{said}”, but before compression "
            f"{_SOURCE_EN.get(v.support.party, '') if v.support else ''} #{v.support.index if v.support else '?'} says otherwise: “{near}”."
        )
        zh = (
            f"与事实相反的说法：压缩后消息 #{st.message_index} 称“{said}”，但压缩前"
            f"{_SOURCE_ZH.get(v.support.party, '') if v.support else ''} #{v.support.index if v.support else '?'} 说的正相反：“{near}”。"
        )
    else:
        src_en = _SOURCE_EN.get(v.support.party, "") if v.support else ""
        src_zh = _SOURCE_ZH.get(v.support.party, "") if v.support else ""
        en = (
            f"Misattributed claim: after compression message #{st.message_index} attributes “{said}” to {who_en}, but "
            f"before compression it came from {src_en} #{v.support.index if v.support else '?'}: “{near}”."
        )
        zh = (
            f"张冠李戴：压缩后消息 #{st.message_index} 把“{said}”归于{who_zh}，但压缩前它来自"
            f"{src_zh} #{v.support.index if v.support else '?'}：“{near}”。"
        )
    return f"{zh} / {en}" if has_cjk(st.text) or has_cjk(near) else en


def check_provenance(a: Analysis) -> list[Finding]:
    """Findings claim_fabricated / claim_contradicted / claim_misattributed (HIGH) for one event.

    Evidence: (1) the statement — side "after", its sentence span; (2) the closest before span —
    side "before" (absent when nothing in the before-context shares its content). `data`: party,
    act, coverage (0..1 of the statement's content terms), source party and a reason.
    """
    found: list[Statement] = []
    for index, m in a.index.new_messages():
        # JSON summaries label their facts claimed/confirmed; the claims check reads those labels.
        if m.role in ("assistant", "tool") or not m.content or _json_value(m.content) is not None:
            continue
        found.extend(statements_in(index, m.content))
        if len(found) >= MAX_STATEMENTS:
            break  # statements examined per event: a summary holds tens; a pathological one is cut, not slow
    if not found:
        return []
    found = found[:MAX_STATEMENTS]
    blob: NormalizedTexts | None = None
    wanted_all: set[str] = set()
    for st in found:
        wanted_all |= set(terms(st.text))
    gr = g.Grounder(a.before, trusted_tool_names(a.pair), wanted_all, partial(a.lowered, "before"))
    out: list[Finding] = []
    seen: set[tuple[int, int]] = set()
    for st in found:
        key = (st.message_index, st.start)
        if key in seen:
            continue
        v = judge(st, gr)
        if v is None:
            continue
        if blob is None:
            blob = NormalizedTexts([m.content for m in a.before.messages])
        if len(normalize(st.text)) >= 8 and blob.contains(normalize(st.text)):
            continue  # copied word for word from the before-context: not new text
        seen.add(key)
        evidence = [Span("after", st.message_index, st.start, st.end, st.text)]
        if v.support is not None:
            src = gr.text(v.support.index)
            evidence.append(
                Span(
                    "before",
                    v.support.index,
                    v.support.start,
                    v.support.end,
                    src[v.support.start : v.support.end],
                )
            )
        out.append(
            Finding(
                v.kind,
                Severity.HIGH,
                _message(st, v, gr),
                evidence=tuple(evidence),
                data={
                    "party": st.party,
                    "act": st.act,
                    "coverage": round(v.support.coverage, 3) if v.support else 0.0,
                    "source": v.support.party if v.support else None,
                    "reason": v.why,
                },
            )
        )
    return out
