"""Claude Code session logs written for these tests, line by line in the format Claude Code
writes (`~/.claude/projects/<project>/<session>.jsonl`; see tests/hooks/README.md for the
sources): user/assistant entries linked by `uuid`/`parentUuid`, then at a compaction a
`compact_boundary` system entry (`parentUuid: null`, `logicalParentUuid`, `compactMetadata`)
and the `isCompactSummary` user entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION = "7f3c2a10-5b1e-4c8e-9d2a-0e6b4f1a9c33"
RULE_MAIN = "Never push directly to the main branch."
RULE_TESTS = "Always run the test suite before you commit."
SUMMARY = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:\n"
    "The user is refactoring the billing module. Always run the test suite before you commit. "
    "Work so far: split invoice.py into three files."
)
HOOK_SUMMARY = "The user is refactoring the billing module; invoice.py was split into three files."


def _entry(kind: str, uuid: str, parent: str | None, ts: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message = {
            "id": f"msg_{uuid}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1200, "output_tokens": 80},
        }
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/user/billing",
        "sessionId": SESSION,
        "version": "2.0.14",
        "gitBranch": "refactor-billing",
        "type": kind,
        "message": message,
        "uuid": uuid,
        "timestamp": ts,
        **extra,
    }


def before_compaction() -> list[dict[str, Any]]:
    """Four turns: the user's two standing rules, a tool call and its result."""
    return [
        _entry(
            "user",
            "u1",
            None,
            "2026-11-30T09:00:00.000Z",
            f"We are refactoring billing. {RULE_MAIN} {RULE_TESTS}",
        ),
        _entry(
            "assistant", "a1", "u1", "2026-11-30T09:00:05.000Z", [{"type": "text", "text": "Understood."}]
        ),
        _entry("user", "u2", "a1", "2026-11-30T09:01:00.000Z", "Split invoice.py into three files."),
        _entry(
            "assistant",
            "a2",
            "u2",
            "2026-11-30T09:01:30.000Z",
            [
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "Bash",
                    "input": {"command": "git mv invoice.py billing/"},
                }
            ],
        ),
        _entry(
            "user",
            "u3",
            "a2",
            "2026-11-30T09:01:31.000Z",
            [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "ok"}],
            toolUseResult={"stdout": "ok", "stderr": ""},
        ),
    ]


def boundary(logical_parent: str = "u3") -> dict[str, Any]:
    return {
        "parentUuid": None,
        "logicalParentUuid": logical_parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/user/billing",
        "sessionId": SESSION,
        "version": "2.0.14",
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "isMeta": False,
        "timestamp": "2026-11-30T09:05:00.000Z",
        "uuid": "cb1",
        "level": "info",
        "compactMetadata": {"trigger": "auto", "preTokens": 154210},
    }


def summary_entry() -> dict[str, Any]:
    return _entry(
        "user",
        "cs1",
        "cb1",
        "2026-11-30T09:05:00.500Z",
        SUMMARY,
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
    )


def write(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def append(path: Path, entries: list[dict[str, Any]]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        for e in entries:
            fh.write(json.dumps(e) + "\n")


def payload(event: str, path: Path, **extra: Any) -> dict[str, Any]:
    """A hook's stdin as Claude Code sends it (common fields + the event's own)."""
    return {
        "session_id": SESSION,
        "transcript_path": str(path),
        "cwd": "/home/user/billing",
        "permission_mode": "default",
        "hook_event_name": event,
        **extra,
    }
