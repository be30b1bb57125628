"""Numbers in rule text, whatever script they are written in, as comparable values.

A threshold is the same threshold in every spelling (issue 12 §2): "十五个工作日" = "15 个工作日",
"百分之八十" = "80%", "two hundred dollars" = "$200", "两万元" = "20000 元", "1,000" = "1000",
"五十行" = "50 行". `find_numbers` returns each number's span in the (folded) text and its value as a
canonical string: digits without grouping or trailing zeros ("20000", "0.5"), "%" appended for a
percentage. Currency signs and units are not part of the value: a rule's unit survives (or not) as
the words around it.

Durations are compared in seconds: "24 hours", "one day" and "一天" all read "86400s" (see
_durations); working days stay plain numbers.

Chinese numerals follow the standard positional reading (个/十/百/千 within a 万 group, 万 = 10⁴,
亿 = 10⁸; "十五" = 15, "两百" = 200, "三千五" = 3500 is read as 3005 only when written "三千零五").
English number words cover units, teens, tens, "hundred", "thousand", "million" and "a"/"one"
("a hundred" = 100, "two hundred and fifty" = 250); single "one"/"a" alone are not numbers (too
common as pronouns/articles). Linear in the text: two regex scans.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_ZH_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10_000, "亿": 100_000_000}
_ZH_CHARS = "".join(_ZH_DIGITS) + "".join(_ZH_UNITS) + "".join(_ZH_BIG)

# Chinese numerals: a run of numeral characters, optionally after 百分之 (percent). A lone "一"
# is skipped below (一律/一下/一致 are words, not numbers); "十" alone is 10.
_ZH_NUMBER = re.compile(f"(百分之)?([{_ZH_CHARS}]+)")
# Arabic numbers with an optional currency sign, grouping commas, decimals and a percent sign;
# not inside identifiers ("v2", "0012_add", "ai.md", "P0-1", "30-40"; "10:30" stays two numbers only
# as a time); a hyphen may join a time unit ("a 30-second timeout").
_ARABIC = re.compile(
    r"(?<![A-Za-z0-9_/.\-])[$¥￥€£]?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s?(%|万|亿)?"
    r"(?![A-Za-z0-9_/]|-(?!(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)(?![A-Za-z]))|\.\d)"
)

_TIME = re.compile(
    r"(下午|晚上|傍晚|夜里|夜间)?\s?(?:(\d{1,2}):(\d{2})(?!\d)|(\d{1,2})\s?(a\.?m\.?|p\.?m\.?)(?![a-z])|(\d{1,2})\s?[点時时](?:整|(半))?)",
    re.I,
)
# An hour in Chinese numerals: "晚上十点以后" = "after 10 pm" = 22. Without a time-of-day word the
# hour must be followed by a time word (前/后/以后/之前/整/半/钟), so "慢一点"/"两点建议" stay words.
_ZH_HOUR = re.compile(
    "(凌晨|早上|早晨|上午|中午|下午|晚上|傍晚|夜里|夜间)?([零一二两三四五六七八九十]{1,3})[点點](?:整|钟)?(?=([前后以之半钟整])?)"
)
_PM_WORDS = ("下午", "晚上", "傍晚", "夜里", "夜间")
_EN_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_EN_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_EN_WORD = "|".join(sorted([*_EN_UNITS, *_EN_SCALES], key=len, reverse=True))
_EN_DIGIT = "zero|oh|one|two|three|four|five|six|seven|eight|nine"
_EN_DIGITS = {
    w: str(i)
    for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"))
}
_EN_DIGITS["oh"] = "0"
# "ninety-nine point five percent" = 99.5%: digit words after "point" are the decimals
_EN_NUMBER = re.compile(
    rf"\b(?:(?:a|one)\s+(?={'|'.join(_EN_SCALES)}))?(?:{_EN_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_EN_WORD}))*\b"
    rf"(?:\s+point((?:[\s-]+(?:{_EN_DIGIT}))+)\b)?"
    r"(?:\s+(percent|per cent))?",
    re.I,
)
# A lone "one"/"a" is a pronoun or an article, not a quantity ("no one", "one of them").
_NOT_QUANTITY = re.compile(r"^(?:one|a)$", re.I)
# Words written with numeral characters that are not numbers: 千万不要 (by no means), 十分 (very),
# 万一 (in case), 一一 (one by one).
_ZH_WORDS = ("千万", "万万", "万一", "一一")
_ZH_NOT_AFTER = {"十": "分足全"}  # 十分, 十足, 十全
# 成 after a numeral counts tenths ("八成" = 80%), unless it starts a word (一成不变, 三成员, 五成功)
_TENTHS = re.compile("成(?![功为本立绩员熟果交年长形型品分不人])")
# "二次" before a verb means "second/double" (二次确认 = double confirmation), not twice as a bound
_SECONDARY = re.compile("次(?=[确核验审认复校])")


def _canon(value: Decimal, percent: bool) -> str:
    text = format(value.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text + ("%" if percent else "")


def zh_value(numeral: str) -> int | None:
    """The value of a Chinese numeral ("十五" → 15, "两万" → 20000, "一百零八" → 108, "三〇五" → 305),
    or None when it is not a well-formed numeral."""
    if all(ch in _ZH_DIGITS for ch in numeral):
        if len(numeral) == 1:
            return _ZH_DIGITS[numeral]
        return int("".join(str(_ZH_DIGITS[ch]) for ch in numeral))  # digit-by-digit: 二〇二五
    total = section = digit = 0
    last_unit = 0
    for ch in numeral:
        if ch in _ZH_DIGITS:
            digit = _ZH_DIGITS[ch]
        elif ch in _ZH_UNITS:
            unit = _ZH_UNITS[ch]
            section += (digit or (1 if unit == 10 else 0) or 1) * unit
            digit, last_unit = 0, unit
        elif ch in _ZH_BIG:
            big = _ZH_BIG[ch]
            total += (section + digit or 1) * big
            section = digit = 0
            last_unit = big  # "两万五" = 25000: a trailing digit counts one unit below
        else:
            return None
    # "三千五" (3500) and "两万五" (25000): a trailing digit counts one unit below the last one
    if digit and last_unit >= 100 and numeral[-2] not in _ZH_DIGITS:
        digit *= last_unit // 10
    return total + section + digit


def _en_value(words: list[str]) -> int | None:
    total = current = 0
    seen = False
    for w in words:
        w = w.lower()
        if w in ("a", "and"):
            if w == "a":
                current = max(current, 1)
            continue
        if w in _EN_UNITS:
            current += _EN_UNITS[w]
            seen = True
        elif w == "hundred":
            current = (current or 1) * 100
            seen = True
        elif w in _EN_SCALES:
            total += (current or 1) * _EN_SCALES[w]
            current = 0
            seen = True
        else:
            return None
    return total + current if seen else None


def find_numbers(text: str) -> list[tuple[int, int, str]]:
    """(start, end, canonical value) of every number in `text`, in text order.

    Works on raw or folded text (the same offsets). "退款须在十五个工作日内" → [(4, 6, "15")];
    "above $1,000" → [(6, 12, "1000")]; "百分之八十" → [(0, 5, "80%")]; "two hundred" → "200".
    """
    out: list[tuple[int, int, str]] = []
    for m in _TIME.finditer(text):  # "20:00" = "8 pm" = "晚上8点" (the hour, minutes when not :00)
        hour = int(m.group(2) or m.group(4) or m.group(6))
        minutes = m.group(3) or ("30" if m.group(7) else "00")  # "8点半" is 8:30
        if (m.group(5) or "").startswith("p") and hour < 12 or (m.group(1) and hour < 12):
            hour += 12
        out.append((m.start(), m.end(), str(hour) if minutes == "00" else f"{hour}:{minutes}"))
    for m in _ZH_HOUR.finditer(text) if ("点" in text or "點" in text) else ():
        if not m.group(1) and m.group(3) is None:
            continue
        zh_hour = zh_value(m.group(2))
        if zh_hour is None or zh_hour > 24:
            continue
        if m.group(1) in _PM_WORDS and zh_hour < 12:
            zh_hour += 12
        if m.group(3) == "半":  # 十二点半 is 12:30, not 12
            out.append((m.start(), m.end() + 1, f"{zh_hour}:30"))
            continue
        out.append((m.start(), m.end(), str(zh_hour)))
    for m in _ARABIC.finditer(text):
        try:
            value = Decimal(m.group(1).replace(",", "") + (m.group(2) or ""))
        except InvalidOperation:  # pragma: no cover - the pattern only matches digits
            continue
        suffix = m.group(3) or ""
        if suffix in _ZH_BIG:
            value *= _ZH_BIG[suffix]
        out.append((m.start(), m.end(), _canon(value, suffix == "%")))
    for m in _ZH_NUMBER.finditer(text):
        numeral = m.group(2)
        if numeral == "一" and not m.group(1) and text[m.end() : m.end() + 1] != "次":
            continue  # 一律, 一下, 统一: a word, not the number one ("一次" is once)
        if (len(numeral) == 1 and numeral in _ZH_BIG) or numeral in _ZH_WORDS:
            continue  # 万一, 千万: words
        nxt = text[m.end() : m.end() + 1]
        if nxt and nxt in _ZH_NOT_AFTER.get(numeral, ""):
            continue
        if numeral == "二" and _SECONDARY.match(text, m.end()):
            continue  # 二次确认, 二次核验: a second (double) check, not the count two
        zh = zh_value(numeral)
        if zh is None:
            continue
        if not m.group(1) and 1 <= zh <= 10 and _TENTHS.match(text, m.end()):
            # "装满八成", "九成以上": tenths, a share ("八成" = 80%)
            out.append((m.start(), m.end() + 1, _canon(Decimal(zh * 10), True)))
            continue
        out.append((m.start(), m.end(), _canon(Decimal(zh), bool(m.group(1)))))
    for m in _EN_NUMBER.finditer(text):
        whole = m.group(0)[: m.start(1) - m.start()] if m.group(1) else m.group(0)
        words = [
            w
            for w in re.split(r"[\s-]+", whole)
            if w and w.lower() not in ("point", "percent", "per", "cent")
        ]
        if len(words) == 1 and _NOT_QUANTITY.match(words[0]) and not m.group(1):
            continue
        en = _en_value(words)
        if en is None:
            continue
        decimals = "".join(_EN_DIGITS[w.lower()] for w in re.split(r"[\s-]+", m.group(1) or "") if w)
        value = Decimal(f"{en}.{decimals}") if decimals else Decimal(en)
        out.append((m.start(), m.end(), _canon(value, m.group(2) is not None)))
    # a following "percent"/"%" after an Arabic number written with a space is already handled;
    # "80 percent" reads as 80%
    fixed: list[tuple[int, int, str]] = []
    for s, e, v in sorted(out, key=lambda t: (t[0], -t[1])):
        if fixed and s < fixed[-1][1]:
            continue  # overlapping readings: keep the longest at the earliest start
        if not v.endswith("%") and re.match(r"\s*(?:percent|per cent)\b", text[e : e + 12], re.I):
            v += "%"
        fixed.append((s, e, v))
    return _durations(text, fixed)


# Durations compare in one unit (issue 12 §2: "within 24 hours" = "within one day", "两小时" = "120
# 分钟"): a number followed by a time unit reads as seconds ("86400s"). Working days (工作日, business
# days) are no fixed length and stay plain numbers.
_UNIT_SECONDS = {
    "second": 1, "sec": 1, "s": 1, "秒": 1, "秒钟": 1,
    "minute": 60, "min": 60, "分钟": 60,
    "hour": 3600, "hr": 3600, "h": 3600, "小时": 3600, "钟头": 3600,
    "day": 86400, "天": 86400,
    "week": 604800, "周": 604800, "星期": 604800, "日": 86400,
}  # fmt: skip
_UNIT = re.compile(
    r"(?:\s|-)?(?:个)?\s?(seconds?|secs?|s|minutes?|mins?|hours?|hrs?|h|days?|weeks?|秒钟|秒|分钟|小时|钟头|天|星期|周|日(?!期))(?![A-Za-z])",
    re.I,
)
# Before a count of days, these make it a day's position, not a length: 第一天, 头一天, 前一天 (not 提前一天).
_WHICH_DAY = re.compile(r"(?:第|头|(?<![提之])前)\s?$")
# "an hour", "a day", "one week", "一天", "半小时": a duration with no digit
_ONE_UNIT = re.compile(
    r"\b(?:an?|one)\s+(hour|day|week|minute)\b|(一|半)(?:个)?\s?(小时|天|周|星期|分钟)", re.I
)


def _singular(unit: str) -> str:
    u = unit.lower()
    if u in _UNIT_SECONDS:
        return u
    return u[:-1] if u.endswith("s") and u[:-1] in _UNIT_SECONDS else u


def _durations(text: str, numbers: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The same numbers, a number followed by a time unit read as seconds (span includes the unit),
    plus unit phrases without a digit ("a day", "一天", "半小时")."""
    out: list[tuple[int, int, str]] = []
    for s, e, v in numbers:
        m = _UNIT.match(text, e)
        if m is None or v.endswith("%") or ":" in v:
            out.append((s, e, v))
            continue
        unit = _singular(m.group(1))
        if _WHICH_DAY.search(text, max(0, s - 3), s):
            continue  # "第一天", "第 3 周", "前一天": which day, not how long ("提前一天" is how long)
        if unit == "日" and re.search("[月/-]\\s?$", text[max(0, s - 2) : s]):
            out.append((s, e, v))  # "11月5日" is a date, "七日用量" a duration
            continue
        secs = Decimal(v) * _UNIT_SECONDS[unit]
        out.append((s, m.end(), _canon(secs, False) + "s"))
    taken = [(s, e) for s, e, _ in out]
    for m in _ONE_UNIT.finditer(text):
        if any(a < m.end() and m.start() < b for a, b in taken) or _WHICH_DAY.search(
            text, max(0, m.start() - 3), m.start()
        ):
            continue
        unit = _singular(m.group(1) or m.group(3))
        half = m.group(2) == "半"
        secs = Decimal(_UNIT_SECONDS[unit]) / (2 if half else 1)
        out.append((m.start(), m.end(), _canon(secs, False) + "s"))
    return sorted(out)


def number_values(text: str) -> tuple[str, ...]:
    """The canonical values of the numbers in `text`, in order (see find_numbers)."""
    return tuple(v for _, _, v in find_numbers(text))
