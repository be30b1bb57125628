"""redact_many (one scan of many texts joined by NUL) gives exactly what redacting each text
alone gives, on inputs built to fool a joined scan: PII cut in two at a text boundary, labels in
one text and values in the next, NUL inside a text, and the separator alone."""

from __future__ import annotations

import random

import pytest

from ctxaudit.engine.pii import SEPARATOR, redact, redact_many
from tests.engine.test_pii_scan import PIECES

KEY = b"k" * 32


def per_text(texts: list[str], key: bytes | None = None) -> tuple[list[str], dict[str, int]]:
    out, counts = [], {}
    for t in texts:
        r, c = redact(t, key=key)
        out.append(r)
        for kind, n in c.items():
            counts[kind] = counts.get(kind, 0) + n
    return out, counts


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        # a labelled value of 3 characters is no secret, even when the next text continues it
        (["password=abc", "defghijk"], (["password=abc", "defghijk"], {})),
        (["token=", "abcdefgh"], (["token=", "abcdefgh"], {})),
        (["Bearer", " abcdefghijklmnop"], (["Bearer", " abcdefghijklmnop"], {})),
        # numbers and addresses cut in two are not found in either half
        (["call 138", "12345678 now"], (["call 138", "12345678 now"], {})),
        (["4111 1111", " 1111 1111"], (["4111 1111", " 1111 1111"], {})),
        (["mail a@b", ".com"], (["mail a@b", ".com"], {})),
        (["11010519491", "231002X"], (["11010519491", "231002X"], {})),
        # ... and whole ones are, in their own text
        (["tel 13812345678", "x"], (["tel [PHONE]", "x"], {"phone": 1})),
        (["4111 1111 1111 1111", "a@b.com"], (["[CARD]", "[EMAIL]"], {"card": 1, "email": 1})),
        # a value right before the next text ends at its own end
        (["password=hunter2hunter", "next"], (["password=[SECRET]", "next"], {"secret": 1})),
        # NUL inside a text (the separator itself): each text is redacted alone
        (
            ["a\x00b 13812345678", "password=abc\x00defghijk"],
            (["a\x00b [PHONE]", "password=[SECRET]"], {"phone": 1, "secret": 1}),
        ),
        (["\x00"], (["\x00"], {})),
        (["", ""], (["", ""], {})),
        ([], ([], {})),
    ],
)
def test_it_redacts_each_text_as_alone(texts: list[str], expected: tuple[list[str], dict[str, int]]) -> None:
    assert redact_many(texts) == expected
    assert redact_many(texts) == per_text(texts)


def test_random_cuts_give_what_each_text_alone_gives() -> None:
    rnd = random.Random(1313)
    for _ in range(3000):
        parts = []
        for _ in range(rnd.randint(0, 25)):
            r = rnd.random()
            if r < 0.55:
                parts.append(rnd.choice(PIECES))
            elif r < 0.8:
                parts.append("".join(rnd.choice("0123456789 -+()xX.") for _ in range(rnd.randint(1, 20))))
            elif r < 0.97:
                parts.append("".join(rnd.choice("abcAZ@._%+-0189 =:\n手") for _ in range(rnd.randint(1, 12))))
            else:
                parts.append(SEPARATOR)
        whole = "".join(parts)
        # cut the text at random places, often inside a number, an address or a label's value
        cuts = sorted(rnd.sample(range(len(whole) + 1), min(len(whole) + 1, rnd.randint(0, 8))))
        texts = [whole[a:b] for a, b in zip([0, *cuts], [*cuts, len(whole)], strict=True)]
        key = KEY if rnd.random() < 0.5 else None
        assert redact_many(texts, key=key) == per_text(texts, key=key), texts
