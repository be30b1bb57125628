"""The bilingual lexicon behind the constraint model: force markers, scope words, condition markers
and a small concept lexicon (actions and objects), Chinese and English.

Why a lexicon and not raw character overlap: a rule is kept when its *core* (what is forbidden or
required, and of what) survives with its force, whatever the wording (seed 000 §3.4: "禁止删除任何订单"
→ "删除订单需谨慎" keeps the core 删除订单 but loses the force; "禁止输出敏感信息" → "注意保护用户隐私"
keeps the object through a synonym). Concepts make 删掉/删除/delete/remove one thing, and let a
hypernym stand for its members (隐私 ≈ 敏感字段 ⊃ 手机号/身份证号).

Everything here is data; matching is in `constraints.py`. Surfaces are matched on text folded by
`fold()` (full/half width, case); English surfaces must start at a word boundary and may carry an
inflection suffix (delete → deletes/deleted/deleting/deletion).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Force(StrEnum):
    """What a clause does to its action (seed 000 §1.2, §3.4; issue 3 "Drift")."""

    PROHIBITION = "prohibition"  # 禁止/不得/严禁/不允许/不能/never/must not/shall not/forbidden
    OBLIGATION = "obligation"  # 必须/务必/一律/always/must/shall/required; 不得不 (double negation)
    RESTRICTION = "restriction"  # 只能/仅/only: everything else is forbidden
    IMPERATIVE = "imperative"  # a bare directive: "Log account changes." / "请记录日志"
    SHOULD = "should"  # should/应该/需要: expected, not enforced
    ADVICE = "advice"  # 最好/建议/尽量/try to/consider/ideally
    CAUTION = "caution"  # 需谨慎/注意/小心/be careful: a reminder, no rule
    PERMISSION = "permission"  # 可以/允许/may/can/need not/不必: the opposite of a rule
    NONE = "none"  # narrative: no directive force at all


# Strength of each force on the 0..1 scale RuleResult.strength uses. seed 000 §3.4: "'禁止'是硬性条件，
# '需谨慎'是软性提醒，'必须'是流程要求，'最好'是建议" — hard conditions 1.0, suggestions ~0.45,
# reminders ~0.35; narrative text (§3.5 step 3, "用户对数据操作有要求") carries none.
FORCE_LEVEL: dict[Force, float] = {
    Force.PROHIBITION: 1.0,
    Force.OBLIGATION: 1.0,
    Force.RESTRICTION: 1.0,
    Force.IMPERATIVE: 0.8,
    Force.SHOULD: 0.6,
    Force.ADVICE: 0.45,
    Force.CAUTION: 0.35,
    Force.PERMISSION: 0.0,
    Force.NONE: 0.0,
}

HARD_FORCES = (Force.PROHIBITION, Force.OBLIGATION, Force.RESTRICTION)

FORCE_NAMES_ZH: dict[Force, str] = {
    Force.PROHIBITION: "禁止",
    Force.OBLIGATION: "必须",
    Force.RESTRICTION: "只能",
    Force.IMPERATIVE: "祈使句",
    Force.SHOULD: "应该",
    Force.ADVICE: "建议",
    Force.CAUTION: "提醒",
    Force.PERMISSION: "允许",
    Force.NONE: "无约束力",
}

# Force markers. Longest match wins, so "不得不" (obligation) beats "不得" (prohibition), "不可以"
# beats "可以", "must not" beats "must". Double negations are listed as obligations on purpose.
FORCE_MARKERS: dict[Force, tuple[str, ...]] = {
    Force.PROHIBITION: (
        "禁止",
        "严禁",
        "不得",
        "不准",
        "不许",
        "不允许",
        "不能",
        "不可",
        "不可以",
        "不要",
        "切勿",
        "请勿",
        "勿",
        "别",
        "不应",
        "不应该",
        "不应当",
        "不能够",
        "绝不",
        "绝对不",
        "决不",
        "永远不要",
        "永远不",
        "不得以",
        "never",
        "must not",
        "mustn't",
        "shall not",
        "shan't",
        "do not",
        "don't",
        "does not",
        "doesn't",
        "cannot",
        "can't",
        "can not",
        "may not",
        "should never",
        "must never",
        "is not allowed",
        "are not allowed",
        "not allowed",
        "not permitted",
        "is forbidden",
        "forbidden",
        "prohibited",
        "is prohibited",
        "are prohibited",
        "under no circumstances",
        "no longer allowed",
        "refuse to",
        "should not",
        "shouldn't",
    ),
    Force.OBLIGATION: (
        "必须",
        "务必",
        "一律",
        "一定要",
        "必需",
        "须",
        "应当",
        "需经",
        "需经过",
        "必须经过",
        "总是",
        "始终",
        "不得不",
        "不能不",
        "不可不",
        "不会不",
        "非得",
        "不要忘记",
        "别忘了",
        "不要忘了",
        "切记",
        "记得",
        "always",
        "must",
        "shall",
        "required",
        "is required",
        "are required",
        "requires",
        "require",
        "mandatory",
        "need to always",
        "never fail to",
        "never forget to",
        "do not forget to",
        "don't forget to",
        "make sure",
        "ensure",
        "be sure to",
        "at all times",
        "has to",
        "have to",
        "is obligated",
        "obliged to",
    ),
    Force.RESTRICTION: (
        "只能",
        "仅能",
        "只可以",
        "只允许",
        "仅允许",
        "仅限",
        "只限",
        "仅可",
        "只可",
        "only",
        "solely",
        "exclusively",
    ),
    Force.SHOULD: (
        "应该",
        "应",
        "需要",
        "需",
        "should",
        "ought to",
        "need to",
        "needs to",
        "needs",
        "need",
        "is expected to",
        "expected to",
    ),
    Force.ADVICE: (
        "最好",
        "建议",
        "尽量",
        "尽可能",
        "推荐",
        "宜",
        "可考虑",
        "争取",
        "酌情",
        "原则上",
        "avoid",
        "避免",
        "尽量避免",
        "try to",
        "try not to",
        "try and",
        "attempt to",
        "consider",
        "preferably",
        "prefer",
        "ideally",
        "recommended",
        "it is recommended",
        "where possible",
        "if possible",
        "when possible",
        "encouraged",
        "it's best to",
        "best to",
        "aim to",
        "strive to",
    ),
    Force.CAUTION: (
        "需谨慎",
        "要谨慎",
        "谨慎",
        "小心",
        "要小心",
        "需小心",
        "注意",
        "要注意",
        "需注意",
        "留意",
        "当心",
        "慎重",
        "审慎",
        "be careful",
        "careful",
        "be cautious",
        "cautious",
        "caution",
        "with care",
        "be mindful",
        "mindful",
        "take care",
        "pay attention",
        "watch out",
        "be aware",
        "keep in mind",
    ),
    Force.PERMISSION: (
        "可以",
        "允许",
        "可",
        "准许",
        "能够",
        "不必",
        "不用",
        "无需",
        "无须",
        "不需要",
        "没必要",
        "可不",
        "may",
        "can",
        "is allowed",
        "are allowed",
        "allowed to",
        "is permitted",
        "permitted to",
        "feel free",
        "free to",
        "need not",
        "needn't",
        "don't need to",
        "do not need to",
        "doesn't have to",
        "does not have to",
        "not required",
        "not necessary",
        "optional",
    ),
}

# Scope quantifiers (issue 3: 任何/所有/全部/any/all/every). Losing one narrows nothing in words but
# turns "every change" into "changes", which a model reads as "usually".
SCOPE_WORDS: tuple[str, ...] = (
    "任何",
    "所有",
    "全部",
    "一切",
    "每个",
    "每条",
    "每次",
    "每一",
    "任意",
    "各种",
    "全体",
    "凡是",
    "任何时候",
    "any",
    "all",
    "every",
    "each",
    "anything",
    "everything",
    "at any time",
    "whatsoever",
    "under any",
)

# Condition / exception markers: what follows is the condition under which the rule bends
# ("除非…", "without a manager approval ticket", "未经管理员确认").
CONDITION_MARKERS: tuple[str, ...] = (
    "除非",
    "除了",
    "未经",
    "没有",
    "经过",
    "须经",
    "需经",
    "必须经过",
    "在未",
    "如无",
    "若无",
    "否则",
    "unless",
    "without",
    "except",
    "other than",
    "absent",
    "in the absence of",
    "if not",
    "only if",
    "only when",
    "provided that",
)

# Reporting verbs: "助手表示不能删除订单" / "the assistant said it can't" is narrative about a rule,
# not the rule (brief: an assistant saying "根据规则，我不能删除订单" does not keep a rule alive).
REPORTING_VERBS: tuple[str, ...] = (
    "表示",
    "说",
    "称",
    "声称",
    "回复",
    "回答",
    "解释",
    "提到",
    "指出",
    "询问",
    "问",
    "提出",
    "认为",
    "希望",
    "said",
    "says",
    "say",
    "explained",
    "told",
    "replied",
    "stated",
    "noted",
    "mentioned",
    "asked",
    "claimed",
    "claims",
    "answered",
    "responded",
    "wants",
    "wanted",
    "requested",
)

# Openers that make a user sentence a *standing* instruction (issue 2: tell a standing instruction
# from a one-off request). Calibrated on shared/samples/real/claude-md-exports: "Always use AI.md for
# programming rules" is standing; "Don't code yet. Show me solution" is about this turn.
STANDING_MARKERS: tuple[str, ...] = (
    "always",
    "never",
    "from now on",
    "going forward",
    "in future",
    "in the future",
    "for all future",
    "whenever",
    "every time",
    "each time",
    "at all times",
    "for the rest of",
    "remember to",
    "remember that",
    "don't ever",
    "do not ever",
    "as a rule",
    "in general",
    "以后都",
    "以后",
    "今后",
    "从现在开始",
    "从现在起",
    "从今以后",
    "每次",
    "始终",
    "永远",
    "一律",
    "任何时候",
    "总是",
    "一直",
    "记住",
    "切记",
    "默认",
)
ONE_OFF_MARKERS: tuple[str, ...] = (
    "yet",
    "for now",
    "right now",
    "this time",
    "first",
    "at the moment",
    "today",
    "just now",
    "for this",
    "先",
    "暂时",
    "这次",
    "本次",
    "现在先",
    "暂且",
    "目前先",
    "这一次",
)


class Kind(StrEnum):
    ACTION = "action"
    OBJECT = "object"
    GENERIC = "generic"  # weak object (用户/user/数据): shared by too many sentences to anchor a match


@dataclass(frozen=True, slots=True)
class Concept:
    id: str
    kind: Kind
    zh: str  # display label
    en: str
    surfaces: tuple[str, ...]
    parent: str | None = None  # hypernym: a text naming the parent only "generalises" this concept
    negates: bool = False  # 保护/protect ≈ "do not reveal": the surface carries a prohibition


def _c(
    cid: str, kind: Kind, zh: str, en: str, surfaces: str, parent: str | None = None, negates: bool = False
) -> Concept:
    return Concept(
        cid, kind, zh, en, tuple(s.strip() for s in surfaces.split("|") if s.strip()), parent, negates
    )


A, O, G = Kind.ACTION, Kind.OBJECT, Kind.GENERIC

# The concept lexicon. Synonym groups from seed 000 §1.2 (typical rules), §3.4 (drift examples),
# §4.1 (the order assistant's four rules), §3.5 (decay) and S2 §5 (indirect injection).
CONCEPTS: tuple[Concept, ...] = (
    # --- write actions (seed 000 §4.1 rule 1) ---
    _c(
        "write",
        A,
        "写操作",
        "write operations",
        "写操作|写入|写数据|write operation|write operations|write access|writes|write",
    ),
    _c(
        "delete",
        A,
        "删除",
        "delete",
        "删除|删掉|删|移除|清除|清空|抹掉|销毁|delete|remove|erase|drop|purge|wipe|destroy|truncate",
        parent="write",
    ),
    _c(
        "modify",
        A,
        "修改",
        "modify",
        "修改|更改|变更|改动|编辑|篡改|更新|modify|change|edit|update|alter|amend|overwrite",
        parent="write",
    ),
    _c("create", A, "新增", "create", "新增|新建|创建|添加|增加|插入|create|add|insert", parent="write"),
    _c(
        "query",
        A,
        "查询",
        "query",
        "查询|查看|查|检索|读取|浏览|query|look up|lookup|look-up|view|read|search|check|retrieve",
    ),
    # --- disclosure (seed 000 §4.1 rule 2; "保护隐私" ≈ "不输出敏感信息", §3.4) ---
    _c(
        "reveal",
        A,
        "输出",
        "reveal",
        "输出|泄露|泄漏|透露|显示|展示|暴露|披露|打印|告诉|告知|提供|返回|发布|reveal|disclose|expose|output|print|display|show|leak|share|tell|return|publish|echo",
    ),
    _c(
        "export",
        A,
        "导出",
        "export",
        "导出|下载|外传|拷贝|复制出|export|download|dump|exfiltrate",
        parent="reveal",
    ),
    _c(
        "protect",
        A,
        "保护",
        "protect",
        "保护|保密|隐藏|脱敏|遮盖|屏蔽|掩码|打码|protect|safeguard|keep private|keep confidential|conceal|hide|mask|redact|sanitize|sanitise",
        parent="reveal",
        negates=True,
    ),
    _c(
        "sensitive",
        O,
        "敏感信息",
        "sensitive data",
        "敏感字段|敏感信息|敏感数据|敏感|隐私|个人信息|个人数据|用户信息|机密|sensitive|privacy|private|personal data|personal information|pii|confidential",
    ),
    _c(
        "phone",
        O,
        "手机号",
        "phone number",
        "手机号码|手机号|电话号码|电话|手机|phone number|phone numbers|phone|mobile number|telephone",
        parent="sensitive",
    ),
    _c(
        "id_number",
        O,
        "身份证号",
        "ID number",
        "身份证号码|身份证号|身份证|证件号|id number|id card|national id|identity number|ssn|social security number|passport number",
        parent="sensitive",
    ),
    _c(
        "card_number",
        O,
        "卡号",
        "card number",
        "银行卡号|信用卡号|卡号|card number|card numbers|credit card|card details",
        parent="sensitive",
    ),
    _c(
        "address",
        O,
        "地址",
        "address",
        "地址|邮箱|邮件地址|address|addresses|email address",
        parent="sensitive",
    ),
    _c(
        "password",
        O,
        "密码",
        "password",
        "密码|口令|密钥|令牌|password|passwords|secret|secrets|api key|token|credential|credentials",
        parent="sensitive",
    ),
    # --- audit (seed 000 §4.1 rule 3, §6.5) ---
    _c(
        "log",
        A,
        "记录日志",
        "log",
        "记录日志|写日志|日志|记录|审计|留痕|log|logs|logged|logging|audit|audit trail",
    ),
    # --- authorization and confirmation (seed 000 §4.1 rule 4, §3.1; brief: 确认≈approval/审批) ---
    _c(
        "confirm",
        A,
        "确认",
        "confirm",
        "确认|核实|核验|验证|审批|批准|审核|复核|同意|confirm|confirmation|approval|approve|approved|verify|verification|sign-off|sign off|authorise|authorize",
    ),
    _c(
        "double_confirm",
        A,
        "二次确认",
        "second confirmation",
        "二次确认|双重确认|再次确认|second confirmation|double confirmation|double-check|two-step confirmation|re-confirm",
        parent="confirm",
    ),
    _c(
        "authorization",
        O,
        "授权",
        "authorization",
        "已授权|授权|权限|许可|authorization|authorisation|authorized|authorised|permission|permissions|clearance",
    ),
    _c(
        "replace",
        A,
        "替代",
        "substitute",
        "替代|代替|取代|顶替|等同于|等于|视为|当作|replace|substitute|stand in for|count as|be treated as|instead of|in place of|equivalent",
    ),
    _c(
        "admin",
        O,
        "管理员",
        "administrator",
        "管理员|管理者|主管|经理|上级|负责人|admin|administrator|manager|supervisor|superuser|owner",
    ),
    _c("ticket", O, "工单", "ticket", "工单|凭证|单据|审批单|ticket|ticket number|receipt"),
    # --- business objects (seed 000 §4.1, §3.5; en-* cases) ---
    _c("order", O, "订单", "order", "订单|order|orders"),
    _c("data", G, "数据", "data", "业务数据|数据|资料|data|dataset|database|records"),
    _c("refund", A, "退款", "refund", "退款|退费|退钱|refund|refunds|reimburse|chargeback"),
    _c("payment", A, "付款", "payment", "付款|支付|转账|汇款|扣款|payment|pay|transfer|wire|charge"),
    _c("account", O, "账户", "account", "账户|账号|帐户|帐号|account|accounts"),
    _c(
        "file",
        O,
        "文件",
        "file",
        "日志文件|文件|附件|文档|log file|log files|audit log|audit logs|file|files|attachment|document",
    ),
    _c("send", A, "发送", "send", "发送|发出|发给|发邮件|转发|外发|send|email|mail|forward|upload|transmit"),
    _c("execute", A, "执行", "execute", "执行|运行|调用|run|execute|invoke"),
    _c(
        "instruction",
        O,
        "指令",
        "instructions",
        "指令|指示|规则|系统提示词|提示词|instruction|instructions|system prompt|rules|policy|policies",
    ),
    _c("ignore", A, "忽略", "ignore", "忽略|无视|绕过|违反|ignore|disregard|bypass|override|violate"),
    _c("code", O, "代码", "code", "代码|编码|编程|code|coding|programming"),
    _c("use", G, "使用", "use", "使用|采用|用|use|utilize|utilise"),
    _c("user", G, "用户", "user", "用户|客户|顾客|user|users|customer|customers|client"),
    _c("amount", O, "金额", "amount", "金额|额度|amount|大额|large|high-value"),
)

CONCEPTS_BY_ID: dict[str, Concept] = {c.id: c for c in CONCEPTS}

# Inflection suffixes an English surface may carry (delete → deleted/deletes/deleting/deletion).
EN_SUFFIXES: frozenset[str] = frozenset(
    (
        "",
        "s",
        "es",
        "ed",
        "d",
        "ing",
        "ion",
        "ions",
        "ation",
        "ations",
        "er",
        "ers",
        "ment",
        "ments",
        "al",
        "ly",
        "ies",
        "ied",
    )
)

# English words that never carry a rule's meaning (used for out-of-lexicon fallback tokens).
EN_STOPWORDS: frozenset[str] = frozenset(
    (
        "a an the and or but if then else of to in on at by for with from into onto as is are was were be been being "
        "it its this that these those there here you your yours we our us they them their he she his her i me my "
        "not no nor so than too very can could will would should must may might shall do does did done doing have has "
        "had having any all every each some such only own same other more most less least few many much also just "
        "about above below over under again further once up down out off what which who whom whose when where why how "
        "please always never ever yet now first use using used make sure get got let via per issue issued"
    ).split()
)

# Surfaces that contain a force character but carry no force ("可能" is not "可", "应用" is not "应",
# "特别" is not "别", "要求" in narrative is a request). Matched longest-first, they shadow the marker.
NEUTRAL_SURFACES: tuple[str, ...] = (
    "可能",
    "可是",
    "可见",
    "可靠",
    "可用",
    "可读",
    "可选",
    "可视",
    "认可",
    "不可能",
    "宁可",
    "可惜",
    "可爱",
    "应用",
    "反应",
    "响应",
    "适应",
    "供应",
    "对应",
    "相应",
    "答应",
    "回应",
    "效应",
    "应答",
    "特别",
    "区别",
    "识别",
    "类别",
    "级别",
    "分别",
    "告别",
    "别人",
    "别的",
    "个别",
    "差别",
    "性别",
    "便宜",
    "事宜",
    "需求",
    "要求",
    "有要求",
    "诉求",
    "必需品",
    "须知",
    "只是",
    "只有",
    "不只",
    "不仅",
    "can you",
    "could you",
    "may i",
    "not only",
    "if only",
    "说明",
    "问题",
    "访问",
    "名称",
    "简称",
    "称为",
    "小说",
    "据说",
    "比如说",
    "也就是说",
)
