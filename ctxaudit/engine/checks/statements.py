"""Statements about people and checks in the text a compressor wrote (issue 12 §1).

A *statement* says that someone asked, approved, agreed, confirmed, decided or said something,
that someone is someone (identity, role, authority), or that a check, review or scan found
something. They are what provenance grounds against the before-context (provenance.py).

Found, in English and Chinese, in four shapes:

1. A party and an act: "the user said yes to …", "the customer approved …", "用户已同意…",
   "经理批准了…", "the security scan found …", "审查发现…"; the passive "approved by the
   manager", "经用户同意", "at the user's request"; an agentless approval "the refund was
   approved", "已获批准".
2. An identity: "the user is the account owner", "用户是管理员".
3. A labelled finding: "Finding: …", "发现：…", "审查结论：…".
4. A list under a heading that names the user's messages ("All user messages:", "用户消息汇总："):
   every item is a statement that the user said it; and a bullet that starts with an act verb
   under a heading naming the user ("**User response:** - Confirmed the hybrid approach").

Each statement keeps its sentence span in the after message, the party ("user", "system",
"check", "person:<word>", "unknown"), the act ("request", "consent", "refusal", "decision",
"speech", "identity", "finding", "quote") and the content: the sentence without the party and
act words. The first-person assistant ("I decided…") is not a party: what the assistant says of
itself is not a claim about someone else.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import NamedTuple

from ctxaudit.engine.language.automata import Automaton
from ctxaudit.engine.language.clauses import lowered, sentences

_ACT_EN = {
    "request": r"asked|requested|instructed|told|wanted|wants|demanded|directed|specified|insisted|ordered",
    "consent": r"approved|approves|agreed|agrees|consented|confirmed|confirms|accepted|okayed|ok'?d|allowed|permitted|authori[sz]ed|waived|waives|signed off|green-?lit|said (?:yes|ok(?:ay)?|go|sure)|gave (?:the |their |his |her |an? )?(?:written |verbal |explicit |formal |final )?(?:go-ahead|approval|permission|consent|ok|okay|sign-off|green light)|is (?:fine|ok(?:ay)?|happy) with",
    "refusal": r"declined|rejected|refused|denied|vetoed|said no",
    "decision": r"decided|chose|opted|selected|settled on|picked",
    "speech": r"said|stated|mentioned|noted|explained|indicated|clarified|pointed out|replied|answered|responded|told us",
}
_ACT_ZH = {
    "request": r"要求|请求|希望|想要|指示|吩咐|交代|嘱咐|提出|布置|让我|叫我|要我",
    "consent": r"同意|批准|确认|答应|认可|允许|授权|准许|放行|接受|签字|说可以|说好|说行|点头|默许",
    "refusal": r"拒绝|不同意|否决|驳回|没有同意|没同意",
    "decision": r"决定|选择|选定|拍板",
    "speech": r"说过|说了|说|表示|提到|提及|指出|说明|强调|回复|回答|告诉",
}
_PARTY_EN = {
    "user": r"the user|user|the customer|customer|the client|client|the requester|requester|the human|human|the caller|caller",
    "system": r"the system prompt|the system|system|the operator|operator|the developer|developer|the policy|policy|the platform",
    "person": r"(?:the |their |his |her |my |our |your )?(?:manager|boss|supervisor|team lead|lead|director|admin|administrator|owner|account owner|cfo|ceo|cto|legal team|finance team|security team|finance|legal|compliance|approver|on-call engineer|dba"
    # a role named by its trade: "the traffic engineer", "the harbour master", "the site inspector"
    r"|(?:[a-z]+ )?(?:engineer|officer|inspector|master|registrar|editor|nurse|dentist|doctor|physician|pharmacist|auditor|accountant|bookkeeper|lawyer|attorney|principal|captain|dispatcher|foreman|superintendent|coordinator|controller))",
}
_PARTY_ZH = {
    "user": r"用户|客户|对方|顾客|提问者",
    "system": r"系统提示|系统|平台|开发者|运营方|策略",
    "person": r"老板|经理|主管|领导|上级|负责人|总监|管理员|财务|法务|审批人|店长|组长|运维|安全团队",
}
_CHECK_WORDS_EN = (
    r"review|reviewer|code review|scan|scanner|audit|check|checker|test suite|tests|test run|test|pentest|ci|pipeline|linter"
    r"|analysis|verification|validator|inspection|assessment|evaluation|screening|screen|build"
)
_CHECK_EN = rf"(?:the |a |an |our |their )?(?:[\w-]+ ){{0,2}}?(?:{_CHECK_WORDS_EN})"
_CHECK_WORDS_ZH = r"审查|评审|审核|扫描|检查|测试|审计|校验|核查|验证|巡检|检测|风控|筛查|构建|流水线|备份"
_CHECK_ZH = rf"(?:代码|安全|支付|风控|人工|自动)?(?:{_CHECK_WORDS_ZH})(?:结果)?"
_FINDING_EN = (
    r"found|finds|detected|detects|identified|revealed|showed|shows|flagged|reported|confirmed|passed|failed|"
    r"uncovered|discovered|came back (?:clean|clear|green|red)|turned up|returned|cleared"
)
_FINDING_ZH = (
    r"发现|显示|表明|检测到|查出|确认|报告|通过|未通过|没有通过|显示出|成功|失败|合格|不合格|达标|未达标"
)

_ADVERBS_EN = r"(?:(?:has|have|had|already|also|explicitly|clearly|then|now|previously|just|later|finally|again|repeatedly|earlier|indeed|personally|specifically|verbally|been)\s+){0,3}"
_ADVERBS_ZH = (
    r"(?:已经|已|曾经|曾|也|都|明确|明确地|刚才|之前|此前|本人|亲自|再次|口头|当时|随后|最终|终于|还)*"
)


def _alt(d: dict[str, str]) -> str:
    return "|".join(f"(?P<{k}>{v})" for k, v in d.items())


def _party_alt(d: dict[str, str], prefix: str) -> str:
    return "|".join(f"(?P<{prefix}{k}>{v})" for k, v in d.items())


_EN_ACT_STATEMENT = re.compile(
    rf"(?<![\w-])(?:{_party_alt(_PARTY_EN, 'p_')})(?:'s)?\s+{_ADVERBS_EN}(?:{_alt(_ACT_EN)})\b", re.I
)
# Not after a possession or a passive marker: "拥有管理员授权" is a noun phrase, "经管理员同意" a passive.
_ZH_ACT_STATEMENT = re.compile(
    rf"(?<![有得的持获需要经由])(?:{_party_alt(_PARTY_ZH, 'p_')}){_ADVERBS_ZH}(?:{_alt(_ACT_ZH)})"
)
_EN_PASSIVE = re.compile(
    rf"\b(?:(?P<consent>approved|authori[sz]ed|agreed|confirmed|signed off|okayed|permitted|allowed)"
    rf"|(?P<request>requested|asked for|instructed|ordered)|(?P<decision>decided|chosen)"
    rf"|(?P<refusal>rejected|declined|denied|refused))\s+by\s+(?:{_party_alt(_PARTY_EN, 'p_')})\b"
    rf"|\b(?:with|per|at|on|following|given)\s+(?:the\s+)?(?:{_party_alt(_PARTY_EN, 'q_')})'s\s+"
    rf"(?:(?P<consent2>approval|consent|permission|go-ahead|agreement|sign-off|ok|confirmation|blessing)|(?P<request2>request|instruction|instructions|orders?|wish(?:es)?))\b"
    rf"|\bas\s+(?:the\s+)?(?:{_party_alt(_PARTY_EN, 'r_')})\s+(?:(?P<request3>asked|requested|instructed|wanted|specified)|(?P<consent3>approved|agreed|confirmed))\b",
    re.I,
)
_ZH_PASSIVE = re.compile(
    rf"(?:经|经过|已获|获得|得到|征得|按照|根据|应)(?:了)?(?:{_party_alt(_PARTY_ZH, 'p_')})(?:的)?"
    rf"(?:(?P<consent>同意|批准|授权|许可|确认|认可)|(?P<request>要求|请求|指示))"
)
# Approvals with no agent: "the refund was approved", "approval was granted", "已获批准".
_EN_AGENTLESS = re.compile(
    r"\b(?:was|were|has been|have been|is|are|got|been)\s+(?:now\s+|already\s+|fully\s+)?"
    r"(?P<consent>approved|authori[sz]ed|signed off|green-?lit|okayed|cleared|verified|validated)\b"
    r"|\b(?:approval|authori[sz]ation|permission|sign-off|consent|go-ahead)\s+(?:was|has been|is|were)\s+(?:already\s+)?(?:granted|given|obtained|received)\b"
    r"|\b(?:payment|charge|transaction|transfer)\s+(?:\S+\s+){0,3}?(?:was|has been|is|went)\s+(?:successful|completed|captured|cleared|through|received)\b|\bpaid (?:successfully|in full)\b",
    re.I,
)
_ZH_AGENTLESS = re.compile(
    r"(?P<consent>(?:已|已经)(?:获|被)?(?:批准|获批|审批通过|授权|同意|放行)|审批(?:已|已经)?通过|已获批"
    r"|(?:已|已经)?(?:支付|付款|扣款|收款|到账)(?:已|已经)?(?:成功|完成))"
)
_EN_IDENTITY = re.compile(
    rf"(?<![\w-])(?:{_party_alt(_PARTY_EN, 'p_')})\s+(?:is|was|has been)\s+(?:actually\s+|indeed\s+|now\s+)?(?:the|an?|our|their|his|her|(?:(?-i:[A-Z])[\w.-]*\s+){{0,2}}(?-i:[A-Z])[\w.-]*'s)\s+"
    r"(?P<identity>(?:[\w-]+\s+){0,2}?(?:admin|administrator|owner|manager|supervisor|developer|root user|sysadmin|ceo|cfo|cto|employee|staff member|maintainer|moderator|lead|director|auditor|approver"
    r"|attorney|lawyer|solicitor|representative|guardian|agent|proxy|executor|trustee|account holder|holder|accountant|officer|physician|doctor|landlord|property manager"
    r"|master|registrar|engineer|inspector|editor|nurse|dentist|pharmacist|principal|captain|dispatcher|superintendent|coordinator))\b"
    # a name and a role: "the requester is Mark Chen, the verified owner of the m.chen account"
    rf"|(?<![\w-])(?:{_party_alt(_PARTY_EN, 'n_')})\s+(?:is|was)\s+(?:(?-i:[A-Z])[\w'-]+\s+){{0,2}}(?-i:[A-Z])[\w'-]+,\s+(?:the|an?|our|their)\s+"
    r"(?P<identity4>(?:[\w-]+\s+){0,2}?(?:admin|administrator|owner|manager|supervisor|developer|ceo|cfo|cto|employee|director|attorney|lawyer|representative|account holder|holder))\b"
    # an apposition names the user: "the user, Dana Reyes (CFO), asked …", "the caller, the site's DBA,"
    rf"|(?<![\w-])(?:{_party_alt(_PARTY_EN, 'a_')}),\s+(?P<identity3>(?:(?-i:[A-Z])[\w'-]+\s+){{0,2}}(?-i:[A-Z])[\w'-]+\s*\([^()\n]{{2,40}}\)|(?:the|our|their)\s+(?:[\w-]+\s+){{0,2}}?(?:admin|owner|manager|cfo|ceo|cto|director|attorney|lawyer|dba|lead)),"
    rf"|(?<![\w-])(?:{_party_alt(_PARTY_EN, 'q_')})\s+(?:has|holds|had)\s+(?P<identity2>admin|root|owner|elevated|superuser|manager)\s+(?:rights|access|privileges|permissions|role|authori[sz]ation)\b",
    re.I,
)
_ZH_IDENTITY = re.compile(
    rf"(?:{_party_alt(_PARTY_ZH, 'p_')})(?:本人)?(?:是|为|身为|系)(?:本店|公司|我们的|该)?(?:[\u4e00-\u9fff]{{1,6}}的)?(?:物业|财务|部门|门店|项目|公司|客户的)?(?P<identity>超级管理员|管理员|系统管理员|老板|店长|经理|主管|负责人|开发者|运维|审核员|内部员工|股东|法人|账户所有人|账号所有人|律师|代理人|监护人|业主|房东|会计|总监|财务总监|持卡人|户主|医生)"
    rf"|(?:{_party_alt(_PARTY_ZH, 'q_')})(?:拥有|有|具有|持有)(?P<identity2>管理员|超管|最高|特殊|root)(?:权限|身份|授权)"
)
# What was checked may stand between the check and its result ("the security scan for 2.9.0
# passed"): up to four words, none a modal or a conjunction that starts another clause.
_EN_FINDING = re.compile(
    rf"\b(?P<check>{_CHECK_EN})(?P<object>(?:\s+(?!(?:has|have|had|also|already|was|were|is|are|and|but|or|to|will"
    rf"|would|should|must|may|might|can|could|if|whether|not|that|which)\b)[\w.\-/@#]+){{0,6}}?)"
    rf"\s+(?:has\s+|have\s+|had\s+|also\s+|already\s+){{0,2}}(?P<finding>{_FINDING_EN})\b",
    re.I,
)
_ZH_FINDING = re.compile(
    rf"(?P<check>{_CHECK_ZH})(?:已经|已|也|均|都|全部|全都|均已|都已)?(?P<finding>{_FINDING_ZH})"
)
_LABELLED_FINDING = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*)?(?:(?:key |main |review |security |scan )?findings?|issues? found|review result|scan result|audit result|verdict"
    r"|发现|审查结论|审查结果|扫描结果|检查结果|测试结果|评审结论|结论)(?:\*\*)?\s*[:：]",
    re.I,
)
# Headings whose list items are the user's own words.
_USER_MESSAGES_HEADING = re.compile(
    r"(?:all\s+)?(?:the\s+)?(?:user|customer)(?:'s)?\s+(?:messages|quotes|words|said|inputs?|prompts)"
    r"|messages\s+from\s+the\s+(?:user|customer)|(?:用户|客户)(?:的)?(?:消息|原话|发言|输入|所说|说过的话)",
    re.I,
)
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+.*|\*\*[^*\n]{1,100}\*\*\s*[:：]?\s*|[^\n]{1,60}[:：])\s*$")
_ITEM = re.compile(r"^\s*(?:[-*•](?=\s)|\d{1,3}[.)、]|[（(]\d{1,3}[)）])\s*")
_QUOTE = re.compile(r"「([^」\n]{2,})」|“([^”]{2,})”|\"([^\"\n]{4,})\"|^\s*>\s*(.+)$", re.M)
_USER_HEADING = re.compile(r"\b(?:user|customer|client)\b|用户|客户", re.I)
_CHECK_HEADING = re.compile(r"\b(?:review|scan|audit|test|check)s?\b|审查|扫描|审计|测试|检查", re.I)
_BULLET_ACT_EN = re.compile(
    r"^(?:explicitly\s+|also\s+|then\s+)?(?:(?P<request>asked|requested|instructed|wanted|specified|insisted|told)"
    r"|(?P<consent>approved|agreed|confirmed|accepted|authori[sz]ed|allowed|consented|okayed)"
    r"|(?P<refusal>declined|rejected|refused|denied)|(?P<decision>decided|chose|opted|selected)"
    r"|(?P<speech>said|stated|mentioned|noted|pointed|clarified))\b",
    re.I,
)
_BULLET_ACT_ZH = re.compile(
    r"^(?:(?P<request>要求|请求|希望|指示)|(?P<consent>同意|批准|确认|认可|允许|授权)|(?P<refusal>拒绝|否决|驳回)|(?P<decision>决定|选择)|(?P<speech>表示|提到|指出|说))"
)
_BULLET_FINDING = re.compile(r"^(?:found|detected|identified|flagged|发现|检测到|查出)", re.I)
# Negation inside a statement's own words ("the user did not approve"): a refusal, not consent.
_NEG = re.compile(
    r"\b(?:not|never|no longer|didn't|did not|hasn't|has not|haven't|won't|wouldn't)\b|没有|没|未|不", re.I
)


# Longer "sentences" are not read for statements (pasted output with no sentence ends).
MAX_SENTENCE = 1_000


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement about a party in a written after message.

    start/end: the sentence in after.messages[message_index].content (content[start:end] ==
    text). act_start/act_end: the party-and-act words inside it. content: what was said or
    done, the sentence without those words (for a quote: the quoted text).
    """

    message_index: int
    start: int
    end: int
    text: str
    party: str
    act: str
    content: str
    act_start: int
    act_end: int
    negated: bool = False


def _group(m: re.Match[str], names: tuple[str, ...]) -> str | None:
    for n in names:
        for suffix in ("", "2", "3"):
            try:
                if m.group(n + suffix):
                    return n
            except IndexError:
                continue
    return None


_ACTS = ("request", "consent", "refusal", "decision", "speech")


def _party(m: re.Match[str]) -> tuple[str, str]:
    for prefix in ("p_", "q_", "r_", "a_", "n_"):
        for kind in ("user", "system", "person"):
            try:
                word = m.group(prefix + kind)
            except IndexError:
                continue
            if word:
                return (f"person:{word.strip().lower()}" if kind == "person" else kind), word
    return "unknown", ""


_MARKUP = re.compile(r"\*+|`+|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])|^\s*#+\s*|^\s*>\s*", re.M)


def _strip_markup(text: str) -> str:
    """Markdown emphasis, code ticks, headings and quote marks out; identifiers ("test_api.py") kept."""
    return _MARKUP.sub(" ", text)


def _negated(sentence: str, act_start: int, act_end: int) -> bool:
    """A negation right before the act ("did not approve", "没有同意") turns consent into refusal."""
    before = sentence[max(0, act_start - 14) : act_end]
    return bool(_NEG.search(before))


# Clause breaks that start another fact: "，" and "；" in Chinese; "; " and ", and/but/which" in English.
_FACT_BREAK = re.compile(
    r"[，；;]|,\s+(?:and|but|which|while|so|then|after|before)\b|\s+(?:and then|but)\s+", re.I
)
# Words before the party that make it a pending or conditional act, not a report of one:
# "wait for the user to confirm", "if the user agrees", "需要用户确认", "等待用户确认".
_PENDING = re.compile(
    r"(?:\b(?:wait(?:ing)?\s+(?:for|on)|ask(?:ing)?|asks|need(?:s|ed)?|until|unless|if|once|whether|when|before|pending|let|have|get|require[sd]?|requiring|for)\s+(?:the\s+)?$)"
    r"|(?:等待|等|待|需要|需|请|让|如果|若|除非|直到|是否|要求|征求|询问|问|由)$",
    re.I,
)
_QUESTION = re.compile(r"[?？]\s*$|吗\s*[。]?\s*$")
# A possession or passive marker just before a Chinese party: "获得财务主管授权" names an
# authorization (a noun), it does not report the manager's act.
_POSSESSED = re.compile(r"[有得获持经需由的]\S{0,3}$")


def _content(sentence: str, a: int, b: int, passive: bool = False) -> str:
    """What a statement says was said or done: its own clause after the act words (the clause
    before them for a passive), else the rest of the sentence."""
    sentence = _ASIDE.sub(lambda m: " " * len(m.group()), sentence)  # same length: offsets hold
    tail_cut = _FACT_BREAK.search(sentence, b)
    tail = sentence[b : tail_cut.start() if tail_cut else len(sentence)]
    heads = [m.end() for m in _FACT_BREAK.finditer(sentence, 0, a)]
    head = sentence[heads[-1] if heads else 0 : a]
    if passive and _substantial(head):
        return _strip_markup(head)  # "the README update was requested by the user": the subject
    if not passive and _substantial(tail):
        return _strip_markup(tail)  # "for ticket 9912 the user approved X": what was approved
    own = _strip_markup(_ASIDE.sub(" ", head + " " + tail))
    if len(re.findall(r"[A-Za-z0-9]{3,}|[\u3400-\u9fff]", own)) >= 2:
        return own
    return _strip_markup(_ASIDE.sub(" ", sentence[:a] + " " + sentence[b:]))


# Asides in parentheses are the compressor's details ("asked for pricing (Basic $10, Pro $30)").
_ASIDE = re.compile(r"\([^()\n]{0,200}\)|（[^（）\n]{0,200}）|^\s*\[[^\[\]\n]{0,40}\]|【[^【】\n]{0,20}】")


def _substantial(text: str) -> bool:
    return len(re.findall(r"[A-Za-z0-9]{3,}|[\u3400-\u9fff]", text)) >= 2


def wider_content(st: Statement) -> str:
    """The whole sentence without the party and act words: what a statement may be about when
    its own clause is a paraphrase of part of what was said."""
    s = st.act_start - st.start
    e = st.act_end - st.start
    sentence = _ASIDE.sub(" ", st.text[:s]) + " " + _ASIDE.sub(" ", st.text[e:])
    return _strip_markup(sentence)


def _make(
    index: int,
    content: str,
    s: int,
    e: int,
    party: str,
    act: str,
    a: int,
    b: int,
    neg: bool = False,
    passive: bool = False,
) -> Statement:
    sentence = content[s:e]
    return Statement(index, s, e, sentence, party, act, _content(sentence, a - s, b - s, passive), a, b, neg)


def _pending(sentence: str, start: int) -> bool:
    """The act is awaited or conditional ("waiting for the user to confirm"), not reported."""
    return bool(_PENDING.search(sentence[max(0, start - 24) : start]))


# Words one of the statement patterns above needs (a party, an approval or payment word, a
# check, a finding label), lowercase: a sentence with none of them states nothing, and one
# automaton pass over it spares the dozen pattern searches that would each fail (most sentences
# of a long summary or log). It must stay a superset of what those patterns require: a test
# compares the statements found with and without it.
_GATE_GROUPS = (
    # parties (_PARTY_EN / _PARTY_ZH)
    "user customer client requester human caller system operator developer policy platform manager boss "
    "supervisor lead director admin owner cfo ceo cto legal finance compliance approver dba "
    "用户 客户 对方 顾客 提问者 系统 平台 开发者 运营方 策略 老板 经理 主管 领导 上级 负责人 总监 管理员 财务 法务 "
    "审批人 店长 组长 运维 安全团队",
    # approvals and payments with no agent (_EN_AGENTLESS / _ZH_AGENTLESS)
    "approv authoris authoriz okayed cleared verified validated permission consent go-ahead sign-off green-lit "
    "greenlit payment "
    "charge transaction transfer paid 批准 获批 审批 授权 同意 放行 支付 付款 扣款 收款 到账",
    # checks and finding labels (_CHECK_WORDS_* / _LABELLED_FINDING)
    "review scan audit check test pipeline linter analysis verification validator inspection assessment evaluation screen build "
    "finding issue "
    "result verdict 发现 结论 结果 " + _CHECK_WORDS_ZH.replace("|", " "),
)
_GATE_WORDS = [w for group in _GATE_GROUPS for w in group.split()] + [
    "signed off",
    "security team",
    "on-call engineer",
]
# "ci" is a word only at a word start ("the CI run found…"), not inside "decide" or "specific".
_WORD_START_ONLY = frozenset({"ci"})


_GATE_ALL = (*_GATE_WORDS, *_WORD_START_ONLY)
_GATE = Automaton(_GATE_ALL, longest=False)


def _may_state(low: str, s: int, e: int) -> bool:
    """Whether low[s:e] (lowered text) holds a word some statement pattern needs."""
    for k, p, _ in _GATE.matches(low[s:e]):
        if _GATE_ALL[k] not in _WORD_START_ONLY:
            return True
        p += s
        if p == s or not (low[p - 1].isalnum() or low[p - 1] == "_"):
            return True
    return False


def data_line(sentence: str) -> bool:
    """A JSON object or array on its own ("{"user": "u870", "op": "delete"}"): a log or a
    record, which states nothing about anyone (a whole JSON summary is the claims check's)."""
    t = sentence.strip()
    return len(t) > 1 and t[0] in "{[" and t[-1] in "}]"


# An approval a rule makes a condition of ("只有在审批通过后才能重启", "restart only after the change
# is approved", "once the refund is approved") is what must happen first, not a report that it did.
_CONDITION_BEFORE = re.compile(
    r"(?:\b(?:only\s+(?:after|once|when|if)|unless|until|once|if|after|before|when|as soon as)\s+(?:\S+\s+){0,6}$)"
    r"|(?:只有在|只有|唯有|须在|必须在|需在|待|等到|一旦|如果|若|除非|直到)\S{0,8}$",
    re.I,
)
_CONDITION_AFTER = re.compile(r"^\s*(?:之后|以后|后)?\s*(?:才|方可|再)")
# "负责人签字确认后再上线", "经理批准之后才能退款": an approval that comes before a step is its condition
_STEP_AFTER = re.compile(r"^[\u4e00-\u9fff]{0,4}?(?:之后|以后|后)\s*(?:才|方可|再)|^\s*(?:才|方可)")


def conditional(sentence: str, start: int, end: int) -> bool:
    """The approval at sentence[start:end] is a condition of something else, not a report."""
    return bool(
        _CONDITION_BEFORE.search(sentence[max(0, start - 60) : start])
        or _CONDITION_AFTER.match(sentence[end : end + 8])
    )


class _Shape(NamedTuple):
    """What one sentence states, by position (offsets in the sentence): the same for every
    sentence that differs from it only in its digits — no statement pattern names a digit — so a
    template line ("Order 34203: the user wants to delete it", one per order) is read once."""

    party: str
    act: str
    start: int  # the party-and-act words
    end: int
    negated: bool = False
    passive: bool = False
    finding: tuple[int, int, int, int] | None = None  # a finding's check words and object (-1: none)


def _sentence_shapes(sentence: str) -> Iterator[_Shape]:
    m: re.Match[str] | None
    if _QUESTION.search(sentence):
        return
    found = False
    for pattern in (_EN_ACT_STATEMENT, _ZH_ACT_STATEMENT):
        for m in pattern.finditer(sentence):
            act = _group(m, _ACTS)
            if (
                act is None
                or _pending(sentence, m.start())
                or _POSSESSED.search(sentence[max(0, m.start() - 4) : m.start()])
                # "负责人签字确认后再上线": a step the rule makes a condition, not an approval given
                or (act == "consent" and _STEP_AFTER.match(sentence[m.end() : m.end() + 10]))
            ):
                continue
            if m.group(0).lower().endswith(("told", "instructed", "directed", "ordered")) and re.match(
                r"\s+to\b", sentence[m.end() :]
            ):
                continue  # "customer told to rebook": the customer was told, by someone else
            party, _ = _party(m)
            neg = _negated(sentence, m.start(), m.end())
            if neg and party != "user":
                continue  # "not confirmed by the system", "未经系统确认": a hedge, not a claim
            if neg and act == "consent":
                act = "refusal"
            found = True
            yield _Shape(party, act, m.start(), m.end(), negated=neg)
            break
    for pattern in (_EN_PASSIVE, _ZH_PASSIVE):
        m = pattern.search(sentence)
        if m and not _pending(sentence, m.start()) and not _negated(sentence, m.start(), m.start() + 1):
            act = _group(m, _ACTS) or "consent"
            party, _ = _party(m)
            found = True
            yield _Shape(party, act, m.start(), m.end(), passive=True)
    if not found:
        for pattern in (_EN_AGENTLESS, _ZH_AGENTLESS):
            m = pattern.search(sentence)
            if (
                m
                and not _negated(sentence, m.start(), m.end())
                and not conditional(sentence, m.start(), m.end())
            ):
                found = True
                yield _Shape("unknown", "consent", m.start(), m.end(), passive=True)
                break
    for pattern in (_EN_IDENTITY, _ZH_IDENTITY):
        m = pattern.search(sentence)
        if m and not _negated(sentence, m.start(), m.end()):
            party, _ = _party(m)
            found = True
            yield _Shape(party, "identity", m.start(), m.end())
    for pattern in (_EN_FINDING, _ZH_FINDING):
        m = pattern.search(sentence)
        if m:
            found = True
            obj = m.span("object") if "object" in pattern.groupindex else (-1, -1)
            yield _Shape("check", "finding", m.start(), m.end(), finding=(*m.span("check"), *obj))
            break
    if not found:
        m = _LABELLED_FINDING.match(sentence)
        if m:
            yield _Shape("check", "finding", m.start(), m.end())


def _built(sentence: str, sh: _Shape) -> Statement:
    """The Statement a shape makes of `sentence` (at offset 0): its words, its content."""
    st = _make(0, sentence, 0, len(sentence), sh.party, sh.act, sh.start, sh.end, sh.negated, sh.passive)
    if sh.finding is None:
        return st
    check_start, check_end, obj_start, obj_end = sh.finding
    what = sentence[obj_start:obj_end].strip() if obj_start >= 0 else ""
    if not _substantial(st.content + " " + what):
        # "the KYC check passed; proceed": the result is about the check it names
        what = f"{sentence[check_start:check_end]} {what}".strip()
    return replace(st, content=f"{what} {st.content}") if what else st


_DIGIT_MASK = str.maketrans("123456789", "000000000")


@lru_cache(maxsize=16_384)
def _shapes_of(masked: str) -> tuple[_Shape, ...]:
    return tuple(_sentence_shapes(masked))


# A summary or a log repeats sentences (a template line per item): each sentence is read once
# per process, at offset 0, and its statements are moved to where it stands; sentences that
# differ only in their digits share one reading (_Shape).
@lru_cache(maxsize=16_384)
def _sentence_reading(sentence: str) -> tuple[Statement, ...]:
    """The statements of one sentence at offset 0: none when it holds no word a statement pattern
    needs (_may_state) or is a JSON record. (Lowering the sentence alone finds the same gate words
    as lowering its message: they are ASCII or Chinese.)"""
    if not _may_state(lowered(sentence), 0, len(sentence)) or data_line(sentence):
        return ()
    return tuple(_built(sentence, sh) for sh in _shapes_of(sentence.translate(_DIGIT_MASK)))


def _shifted(found: tuple[Statement, ...], index: int, offset: int) -> list[Statement]:
    # built directly: dataclasses.replace costs several times more, once per statement found
    return [
        Statement(
            index,
            st.start + offset,
            st.end + offset,
            st.text,
            st.party,
            st.act,
            st.content,
            st.act_start + offset,
            st.act_end + offset,
            st.negated,
        )
        for st in found
    ]


def _lines(content: str) -> Iterator[tuple[int, int]]:
    pos = 0
    for line in content.split("\n"):
        yield pos, pos + len(line)
        pos += len(line) + 1


def _list_statements(index: int, content: str) -> Iterator[Statement]:
    """Items of user-message lists (quotes) and act bullets under a heading naming the user or a check."""
    mode: str | None = None  # "quotes" | "user" | "check"
    item: list[tuple[int, int]] = []

    def flush() -> Iterator[Statement]:
        if mode != "quotes" or not item:
            return
        s, e = item[0][0], item[-1][1]
        block = content[s:e]
        quotes = [
            (s + q.start(g), s + q.end(g))
            for q in _QUOTE.finditer(block)
            for g in range(1, 5)
            if q.group(g) and len(q.group(g).strip()) >= 2
        ]
        if not quotes:
            lead = _ITEM.match(block)
            a = s + (lead.end() if lead else 0)
            body = content[a:e].strip()
            # "8. Clarifications:" and "[Request for summary]" describe, they do not quote.
            if body.endswith((":", "：")) or (body.startswith("[") and body.endswith("]")):
                return
            quotes = [(a, e)]
        for a, b in quotes:
            text = content[a:b].strip()
            if text:
                yield Statement(index, s, e, content[s:e], "user", "quote", text, s, s)

    for ls, le in _lines(content):
        line = content[ls:le]
        stripped = line.strip()
        if not stripped:
            continue
        is_item = bool(_ITEM.match(line))
        if not is_item and _HEADING.match(line) and len(stripped) <= 120:
            yield from flush()
            item = []
            if _USER_MESSAGES_HEADING.search(stripped):
                mode = "quotes"
            elif _USER_HEADING.search(stripped):
                mode = "user"
            elif _CHECK_HEADING.search(stripped):
                mode = "check"
            else:
                mode = None
            # A heading line that carries its own content ("用户消息汇总：「…」") is one item.
            continue
        if mode == "quotes":
            if is_item:
                yield from flush()
                item = [(ls, le)]
            elif item and (line[:1].isspace() or stripped.startswith(">")):
                item.append((ls, le))
            else:
                yield from flush()
                item = []
                mode = None
            continue
        if mode in ("user", "check") and is_item:
            lead = _ITEM.match(line)
            a = ls + (lead.end() if lead else 0)
            body = _strip_markup(content[a:le]).strip()
            if body.endswith((":", "：")):
                continue  # a label ("**Confirmed requirements**:"), its items follow
            if mode == "user":
                m = _BULLET_ACT_EN.match(body) or _BULLET_ACT_ZH.match(body)
                if m:
                    act = _group(m, _ACTS) or "speech"
                    yield Statement(index, a, le, content[a:le], "user", act, body[m.end() :], a, a)
            elif _BULLET_FINDING.match(body):
                yield Statement(index, a, le, content[a:le], "check", "finding", body, a, a)
        elif not is_item and not line[:1].isspace():
            mode = None if mode in ("user", "check") and not _HEADING.match(line) else mode
    yield from flush()


def statements_in(index: int, content: str) -> list[Statement]:
    """Every statement in one written after message (see the module docstring), in text order;
    a sentence with a party-and-act statement yields it once per shape."""
    out: list[Statement] = list(_list_statements(index, content))
    listed = {(st.start, st.end) for st in out}
    covered = [(st.start, st.end) for st in out]
    for s, e in sentences(content):
        if e - s > MAX_SENTENCE:
            continue  # a log line or a blob without punctuation states nothing about anyone
        found = _sentence_reading(content[s:e])
        if not found or (s, e) in listed or any(a <= s and e <= b for a, b in covered):
            continue
        out.extend(_shifted(found, index, s))
    out.sort(key=lambda st: (st.start, st.act_start))
    return out
