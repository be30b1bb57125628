"""PII detector figures: recall on a synthetic corpus, false positives on random digit strings, speed.

Run: /work/venv/bin/python benchmarks/pii_bench.py [--n 2000] [--seed 7]
Pure Python (ctxaudit.engine.pii), no Django needed.
"""

from __future__ import annotations

import argparse
import random
import string
import sys
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxaudit.engine.cn_regions import REGION_CODES  # noqa: E402
from ctxaudit.engine.pii import (  # noqa: E402
    _ID_CHECK,
    _ID_WEIGHTS,
    PLACEHOLDERS,
    cn_id_checksum_ok,
    is_cn_id,
    luhn_ok,
    redact,
)

TEMPLATES = [
    "用户说：我的{label}是{value}，请帮我处理订单。",
    "Please reach me at {value} regarding order 10086.",
    "【历史摘要】用户提供了{label} {value}，要求删除订单。",
    'tool_result: {{"{label}": "{value}", "status": "ok"}}',
    "{value}",
]


def _id(rng: random.Random) -> str:
    region = rng.choice(sorted(REGION_CODES))
    born = date(1930, 1, 1) + timedelta(days=rng.randrange(0, 365 * 90))
    body = region + born.strftime("%Y%m%d") + f"{rng.randrange(1000):03d}"
    return body + _ID_CHECK[sum(int(c) * w for c, w in zip(body, _ID_WEIGHTS, strict=True)) % 11]


def _card(rng: random.Random) -> str:
    prefix = rng.choice(["4", "51", "55", "2221", "34", "37", "6011", "62", "35"])
    length = {"34": 15, "37": 15, "62": rng.choice([16, 17, 18, 19])}.get(
        prefix, rng.choice([13, 16, 19]) if prefix == "4" else 16
    )
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    check = next(d for d in string.digits if luhn_ok(body + d))
    num = body + check
    if rng.random() < 0.5 and length == 16:
        num = " ".join(num[i : i + 4] for i in range(0, 16, 4))
    return num


def _phone(rng: random.Random) -> str:
    mobile = "1" + rng.choice("3456789") + "".join(rng.choice(string.digits) for _ in range(9))
    style = rng.randrange(5)
    if style == 0:
        return mobile
    if style == 1:
        return f"+86 {mobile[:3]}-{mobile[3:7]}-{mobile[7:]}"
    if style == 2:
        return f"0{rng.randrange(10, 999)}-{rng.randrange(1000000, 99999999)}"
    if style == 3:
        return f"({rng.randrange(200, 999)}) {rng.randrange(200, 999)}-{rng.randrange(0, 9999):04d}"
    return f"+44 20 {rng.randrange(1000, 9999)} {rng.randrange(1000, 9999)}"


def _email(rng: random.Random) -> str:
    user = (
        "".join(
            rng.choice(string.ascii_lowercase + string.digits + "._") for _ in range(rng.randrange(3, 12))
        ).strip("._")
        or "x"
    )
    return f"{user}@{rng.choice(['example.com', 'qq.com', '163.com', 'corp.example.cn', 'mail.co.uk'])}"


def _secret(rng: random.Random) -> str:
    tok = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))
    return rng.choice(
        [
            f"sk-proj-{tok}",
            f"sk-ant-api03-{tok}",
            "AKIA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16)),
            f"ghp_{tok[:36]}",
            f"xoxb-{rng.randrange(10**11, 10**12)}-{tok[:24]}",
            f"eyJhbGciOiJIUzI1NiJ9.eyJ{tok[:20]}.{tok[20:]}",
        ]
    )


GENERATORS = {
    "cn_id": ("身份证号", _id),
    "card": ("卡号", _card),
    "phone": ("手机号", _phone),
    "email": ("邮箱", _email),
    "secret": ("API key", _secret),
}


def recall(n: int, rng: random.Random) -> dict[str, tuple[int, int]]:
    out = {}
    for kind, (label, gen) in GENERATORS.items():
        hit = 0
        for _ in range(n):
            value = gen(rng)
            text = rng.choice(TEMPLATES).format(label=label, value=value)
            red, _ = redact(text)
            if value not in red and PLACEHOLDERS[kind] in red:
                hit += 1
        out[kind] = (hit, n)
    return out


def false_positives(n: int, rng: random.Random) -> dict[int, tuple[int, int]]:
    out = {}
    for length in (6, 8, 10, 11, 12, 13, 15, 16, 18, 19, 20):
        flagged = 0
        for _ in range(n):
            digits = "".join(rng.choice(string.digits) for _ in range(length))
            if redact(f"订单号 {digits} 已发货")[1]:
                flagged += 1
        out[length] = (flagged, n)
    return out


def id_filters(n: int, rng: random.Random) -> dict[str, int]:
    today = date(2026, 1, 1)
    counts = {"checksum": 0, "checksum+province+date": 0, "checksum+6-digit region+date": 0}
    for _ in range(n):
        s = "".join(rng.choice(string.digits) for _ in range(18))
        counts["checksum"] += cn_id_checksum_ok(s)
        counts["checksum+province+date"] += is_cn_id(s, today=today)
        counts["checksum+6-digit region+date"] += is_cn_id(s, strict_region=True, today=today)
    return counts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000, help="items per kind / per digit length")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)  # noqa: S311 - reproducible synthetic data, not secrets

    print(f"Recall on a synthetic corpus ({args.n} items per kind, {len(TEMPLATES)} sentence templates):")
    for kind, (hit, n) in recall(args.n, rng).items():
        print(f"  {kind:7s} {hit}/{n} = {100 * hit / n:.2f}%")

    print(f"\nFalse positives: random digit strings in '订单号 <digits> 已发货' ({args.n} per length):")
    for length, (flagged, n) in false_positives(args.n, rng).items():
        print(f"  {length:2d} digits: {flagged}/{n} = {100 * flagged / n:.2f}% redacted")

    big = 1_000_000
    print(f"\nResident-ID filters on {big:,} random 18-digit strings:")
    for name, c in id_filters(big, rng).items():
        print(f"  {name:30s} {c:7d} pass = {100 * c / big:.4f}%")

    text = ("用户：帮我查订单 10086，手机号 13812345678。助手：好的，已为您查询。" * 200 + "\n") * 5
    t0 = time.perf_counter()
    reps = 20
    for _ in range(reps):
        redact(text)
    dt = (time.perf_counter() - t0) / reps
    print(
        f"\nSpeed: {len(text.encode()) / 1e6:.2f} MB of mixed Chinese text in {dt * 1000:.1f} ms = {len(text.encode()) / 1e6 / dt:.1f} MB/s"
    )


if __name__ == "__main__":
    main()
