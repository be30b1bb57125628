"""The diff starts at what matters: zones detected from the contexts, summaries aligned on their
headings, short shared lines not cutting a rewrite into confetti, long changed blocks folded
except near a highlight."""

from __future__ import annotations

from ctxaudit.engine.diff import Highlight, diff_contexts, expand_lines
from ctxaudit.engine.diff.hunks import coalesce
from ctxaudit.engine.diff.sections import SectionPair, align_sections, heading_key
from ctxaudit.engine.diff.zones import detect_zones
from ctxaudit.engine.types import Message

S = Message("system", "You are the ops agent.\nNever delete business data.")
U1, A1 = Message("user", "List yesterday's orders"), Message("assistant", "1280 orders.")
U2, A2 = Message("user", "And today?"), Message("assistant", "312 so far.")
SUMMARY = Message("user", "[History summary] The user asked for yesterday's orders (1280).")


def test_a_three_zone_context_left_intact_is_said_to_be_so() -> None:
    z = detect_zones([S, U1, A1, U2, A2], [S, SUMMARY, U2, A2])
    assert (z.rules_before, z.rules_after, z.latest, z.history_before, z.history_after) == (1, 1, 2, 2, 1)
    assert z.intact
    assert z.before == ("rules", "history", "history", "latest", "latest")
    assert z.after == ("rules", "history", "latest", "latest")
    assert z.summary == (
        "Built in three zones and the rule zone came through intact (1 message, word for word); "
        "the history went from 2 messages to 1, the latest 2 messages kept verbatim."
    )
    assert z.of("after", 0) == "rules" and z.of("after", 9) is None


def test_a_rewritten_or_missing_rule_zone_is_said_too() -> None:
    rewritten = Message("system", "You are the ops agent. Be careful with data.")
    z = detect_zones([S, U1, A1, U2, A2], [rewritten, SUMMARY, U2, A2])
    assert not z.intact and z.summary.startswith(
        "The rule zone entered compression: 1 message before and 1 after"
    )
    gone = detect_zones([S, U1, A1], [SUMMARY])
    assert not gone.intact and gone.summary.startswith("The rule zone is gone")
    none = detect_zones([U1, A1], [SUMMARY])
    assert none.rules_before == 0 and none.summary.startswith("No fixed rule zone")
    same = detect_zones([S, U1, A1], [S, U1, A1])  # nothing compressed: no separate latest turns
    assert same.latest == 0 and same.history_before == 2 and same.intact


def test_the_diff_carries_the_zones_on_every_message() -> None:
    d = diff_contexts([S, U1, A1, U2, A2], [S, SUMMARY, U2, A2])
    assert d.zones is not None and d.zones.intact
    refs = [r.after for r in d.rows if r.after is not None]
    refs += [x.after for r in d.rows for x in r.after_rows if x.after is not None]
    assert {r.index: r.zone for r in refs} == {0: "rules", 1: "history", 2: "latest", 3: "latest"}


OLD = """Summary:
## 1. Primary Request and Intent
Build the export.
Add a menu.
## 2. Files and Code Sections
- src/export.py
```python
# not a heading
x = 1
```
## 3. Pending Tasks
- none"""
NEW = """Summary:
## 1. Primary Request and Intent
Build the export, then the wiki.
## 2. Errors and fixes
- a crash on empty input
## 3. Files and Code Sections
- src/export.py
## 4. Pending Tasks
- write the README"""


def test_summaries_are_aligned_on_their_headings() -> None:
    assert heading_key("## 3. Files and Code Sections") == "files and code sections"
    assert heading_key("1. **Initial Request**: read AI.md") == "initial request: read ai.md"
    pairs = align_sections(OLD.splitlines(), NEW.splitlines())
    assert pairs == [
        SectionPair((0, 1), (0, 1), True),  # "Summary:"
        SectionPair((1, 4), (1, 3), True),  # intent
        SectionPair((4, 4), (3, 5), False),  # "Errors and fixes" is new
        SectionPair((4, 10), (5, 7), True),  # files: the fenced "# not a heading" is no heading
        SectionPair((10, 12), (7, 9), True),  # pending
    ]
    assert align_sections(["plain", "text"], NEW.splitlines()) is None


def test_a_short_shared_line_does_not_cut_a_rewrite() -> None:
    ops = [("replace", 0, 5, 0, 5), ("equal", 5, 6, 5, 6), ("replace", 6, 10, 6, 9), ("equal", 10, 20, 9, 19)]
    assert coalesce(ops) == [("replace", 0, 10, 0, 9), ("equal", 10, 20, 9, 19)]
    kept = [("replace", 0, 2, 0, 2), ("equal", 2, 5, 2, 5), ("replace", 5, 7, 5, 7)]
    assert coalesce(kept) == kept  # three shared lines are a real anchor


def test_a_long_rewrite_folds_except_near_a_highlight() -> None:
    before = Message("user", "\n".join(f"old line {k} about the export" for k in range(60)))
    after = Message("user", "\n".join(f"new text {k} on another topic entirely" for k in range(50)))
    start = before.content.index("old line 40 ")
    hl = Highlight("before", 0, start, start + 10, "rule-0-before", "hl-rule hl-was-missing", "rule R1")
    d = diff_contexts([before], [after], highlights=[hl])
    (row,) = d.rows
    shown_b = [ln.number for h in row.hunks for ln in h.before]
    shown_a = [ln.number for h in row.hunks for ln in h.after]
    assert shown_b[:6] == [1, 2, 3, 4, 5, 6] and shown_b[-3:] == [58, 59, 60]
    assert 41 in shown_b  # the highlighted line (0-based 40) and its context stay on the page
    assert len(shown_b) < 25 and len(shown_a) == 9
    assert "rule-0-before" in d.anchors
    folded = [h.collapsed for h in row.hunks if h.kind == "collapsed"]
    assert {c.op for c in folded} == {"delete", "insert"}
    first = folded[0]
    back = expand_lines([before], [after], first, highlights=[hl])
    assert len(back.before) == first.count and back.before[0].number == first.before[0] + 1
