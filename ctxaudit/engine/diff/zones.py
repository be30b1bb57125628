"""The three zones of a context built the way the seed recommends (a fixed rule zone that never
enters compression, the compressible history, the latest turns kept verbatim), detected from the
two contexts themselves — no declaration needed.

- rule zone: the leading run of system/developer messages that are not a summary;
- latest turns: the longest run of trailing messages the after-context keeps verbatim
  (role and text) from the end of the before-context, outside the rule zone;
- history: everything between (before: what was compressed; after: what replaced it).

`intact` says the layout held: the before-context has a rule zone and the after-context starts
with exactly the same messages, word for word. A reviewer then knows the rules never entered
compression; a rule lost from such a context was lost from the history, not from the rule zone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ctxaudit.engine.types import Message

Zone = Literal["rules", "history", "latest"]
ZONE_LABELS: dict[str, str] = {"rules": "rule zone", "history": "history", "latest": "latest turns"}
_INSTRUCTION_ROLES = ("system", "developer")
_SUMMARY_KINDS = ("summary", "compact_summary", "compaction", "encrypted_compaction")


@dataclass(frozen=True, slots=True)
class Zones:
    """Zone of every message on each side (by index), and what the layout says.

    rules_before/rules_after: messages in each side's rule zone; latest: trailing messages kept
    verbatim; history_before/history_after: messages in between. intact: a non-empty rule zone
    kept verbatim. summary: one English sentence for the page."""

    before: tuple[Zone, ...]
    after: tuple[Zone, ...]
    rules_before: int
    rules_after: int
    latest: int
    history_before: int
    history_after: int
    intact: bool
    summary: str

    def of(self, side: str, index: int) -> Zone | None:
        """The zone of message `index` on `side` ("before"/"after"), None when out of range."""
        zones = self.before if side == "before" else self.after
        return zones[index] if 0 <= index < len(zones) else None


def _rule_zone(messages: Sequence[Message]) -> int:
    n = 0
    for m in messages:
        if m.role not in _INSTRUCTION_ROLES or (m.kind or "") in _SUMMARY_KINDS:
            break
        n += 1
    return n


def detect_zones(before: Sequence[Message], after: Sequence[Message]) -> Zones:
    """Zones of both contexts (module docstring). Linear in the number of messages."""
    rb, ra = _rule_zone(before), _rule_zone(after)
    intact = (
        rb > 0
        and rb == ra
        and all(
            (b.role, b.content) == (a.role, a.content) for b, a in zip(before[:rb], after[:ra], strict=True)
        )
    )
    # Trailing messages kept verbatim, never reaching into either rule zone. When the whole
    # remainder is equal, nothing was compressed and there is no "latest" distinct from history.
    latest = 0
    while (
        latest < len(before) - rb
        and latest < len(after) - ra
        and (before[-1 - latest].role, before[-1 - latest].content)
        == (after[-1 - latest].role, after[-1 - latest].content)
    ):
        latest += 1
    if latest == len(before) - rb and latest == len(after) - ra:
        latest = 0  # the same conversation on both sides: all of it is history, unchanged
    hb, ha = len(before) - rb - latest, len(after) - ra - latest
    return Zones(
        _layout(rb, hb, latest),
        _layout(ra, ha, latest),
        rb,
        ra,
        latest,
        hb,
        ha,
        intact,
        _summary(rb, ra, latest, hb, ha, intact),
    )


def _layout(rules: int, history: int, latest: int) -> tuple[Zone, ...]:
    out: list[Zone] = ["rules"] * rules
    out += ["history"] * history
    out += ["latest"] * latest
    return tuple(out)


def _n(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def _summary(rb: int, ra: int, latest: int, hb: int, ha: int, intact: bool) -> str:
    kept = f"the latest {_n(latest, 'message')} kept verbatim" if latest else "no latest turns kept verbatim"
    history = f"the history went from {_n(hb, 'message')} to {ha}"
    if intact:
        return (
            f"Built in three zones and the rule zone came through intact ({_n(rb, 'message')}, word for "
            f"word); {history}, {kept}."
        )
    if rb == 0:
        return (
            f"No fixed rule zone: the before-context does not start with a system message; {history}, {kept}."
        )
    if ra == 0:
        return f"The rule zone is gone: {_n(rb, 'system message')} before, none after; {history}, {kept}."
    return (
        f"The rule zone entered compression: {_n(rb, 'message')} before and {ra} after, not the same "
        f"text; {history}, {kept}."
    )
