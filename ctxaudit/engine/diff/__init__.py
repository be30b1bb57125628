"""Structured before/after diff of two contexts: dataclasses the templates render, never HTML.

Shape of the result (`diff_contexts`): a `ContextDiff` whose `rows` go down the page. Each `Row`
puts one before-message beside one after-message (either may be absent), or stands for a
collapsed run of messages. A row's `hunks` go down the message: equal lines, changed lines
(with word-level `Segment`s for English, character-level for CJK), or a collapsed run of lines.
Offsets are Python string indices (code points) into `Message.content`, like `types.Span`.

How it stays near-linear on 200k-token contexts (~1 MB a side):
1. Messages are aligned on fingerprints (role + content). Sequences are diffed by trimming the
   common head and tail, then patience anchors (lines unique on both sides), and
   `difflib.SequenceMatcher(autojunk=False)` only on the small gaps left. autojunk stays off:
   with it, any line seen in more than 1% of a 200+ line text ("{", "},", blank lines) is junk
   and can anchor nothing, so a repetitive JSON dump would come out as "everything changed".
2. Changed messages are paired by similarity (a rewritten system message sits beside its old
   self; a message moved elsewhere is paired too, marked `moved`).
3. Inside a paired message: a line diff first; a word/character diff only inside each changed
   hunk, and only when the hunk is below `Limits.max_inline_tokens` a side (otherwise the hunk is
   shown line by line and the row carries a note).
4. Long unchanged runs of messages and lines are collapsed into a `Collapsed` marker that the UI
   expands on request (`expand_messages`, `expand_lines`). Runs that hold a highlight are never
   collapsed, so a link to a highlight always finds it on the page.

`plan_contexts` does all of it but the rows' hunks, which it builds when a row is asked for: a
page of a long uncollapsed diff builds its own rows only.

Highlights (rule and finding evidence) are applied here by splitting message text at span
boundaries, so the templates only ever print escaped text with classes.
"""

from __future__ import annotations

from ctxaudit.engine.diff.expand import expand_lines, expand_messages
from ctxaudit.engine.diff.rows import DiffPlan, RowPlan, diff_contexts, plan_contexts
from ctxaudit.engine.diff.sequence import sequence_opcodes
from ctxaudit.engine.diff.similarity import similarity, tokenize
from ctxaudit.engine.diff.types import (
    DEFAULT_LIMITS,
    Collapsed,
    ContextDiff,
    Highlight,
    Hunk,
    Limits,
    Line,
    Mark,
    MessageRef,
    Op,
    Opcode,
    Row,
    RowKind,
    Segment,
)

__all__ = [
    "Collapsed",
    "ContextDiff",
    "DiffPlan",
    "DEFAULT_LIMITS",
    "Highlight",
    "Hunk",
    "Limits",
    "Line",
    "Mark",
    "MessageRef",
    "Op",
    "Opcode",
    "Row",
    "RowKind",
    "RowPlan",
    "Segment",
    "sequence_opcodes",
    "similarity",
    "tokenize",
    "diff_contexts",
    "plan_contexts",
    "expand_lines",
    "expand_messages",
]
