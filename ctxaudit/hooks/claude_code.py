"""`ctxaudit hook claude-code`: Claude Code's compaction hooks → ctxaudit.

Hook input (stdin JSON) and output as documented in Claude Code's hooks reference,
https://code.claude.com/docs/en/hooks (read from the mirror thevibeworks/claude-code-docs,
content/en/docs/claude-code/hooks.md @ 3f1ef7c2860523314e2c1b07d95f1db5235f66b1):
common fields `session_id`, `transcript_path`, `cwd`, `hook_event_name`;
- PreCompact: `trigger` ("manual"|"auto"), `custom_instructions`;
- PostCompact: `trigger`, `compact_summary` (the summary the compaction generated);
- SessionStart: `source` ("startup"|"resume"|"clear"|"compact"|"fork"), optional `model`;
  its stdout JSON `{"hookSpecificOutput": {"hookEventName": "SessionStart",
  "additionalContext": "..."}}` is added to Claude's context (capped at 10,000 characters).

What each event does here:
- PreCompact posts nothing: it copies the transcript as it stands to ~/.ctxaudit/state/, so the
  context before the compaction is still known if Claude Code rewrites the file.
- PostCompact posts the compaction to POST /api/v1/events with the body and Idempotency-Key that
  `manage.py import_transcripts` builds for it (engine/transcripts/events.py), so this post, the
  SessionStart gate call and a later import make one event. The transcript is read with the
  importer's reader (engine/transcripts/claude_jsonl.py); `compact_summary` is used only where
  the file has no summary line yet.
- SessionStart with source "compact" sends the same body to POST /api/v1/gate; when rules came
  out missing or weakened it prints them, in their original words, as additionalContext.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxaudit.client import GateResult
from ctxaudit.engine.transcripts import TranscriptError, parse_transcript
from ctxaudit.engine.transcripts.events import compaction_event
from ctxaudit.hooks.sending import Sender
from ctxaudit.hooks.settings import HookSettings

AGENT = "claude-code"
ADDITIONAL_CONTEXT_MAX = 10_000  # Claude Code's cap on hook output strings
PENDING_BOUNDARY = "ctxaudit-pending-boundary"
PENDING_SUMMARY = "ctxaudit-pending-summary"


class HookInputError(ValueError):
    """The hook's stdin is not what Claude Code sends (named field)."""


@dataclass(frozen=True)
class PreparedEvent:
    key: str
    body: dict[str, Any]


def _state_path(settings: HookSettings, session_id: str) -> Path:
    # The session id is foreign text: hash it into a file name.
    return settings.home / "state" / AGENT / hashlib.sha256(session_id.encode()).hexdigest()[:32]


def _state_dir(settings: HookSettings, session_id: str) -> Path:
    path = _state_path(settings, session_id)
    settings.private_dir(*path.relative_to(settings.home).parts)
    return path


def forget_compaction(settings: HookSettings, session_id: str) -> None:
    """Remove the transcript copy and the posted body kept for this compaction (they hold
    conversation text); the copy's line count stays, to tell this compaction from the next."""
    folder = _state_path(settings, session_id)
    for name in ("precompact.jsonl", "posted.json"):
        (folder / name).unlink(missing_ok=True)


# --- PreCompact: where the transcript stood ------------------------------------------------


def record_position(settings: HookSettings, payload: dict[str, Any]) -> Path | None:
    """Copy the transcript as it is now and note its size and hash (state/<session>/precompact.*).

    Returns the copy's path, or None when there is no readable transcript.
    """
    session_id, transcript_path = _ids(payload)
    src = Path(transcript_path)
    if not src.is_file():
        return None
    folder = _state_dir(settings, session_id)
    copy = folder / "precompact.jsonl"
    shutil.copyfile(src, copy)
    copy.chmod(0o600)
    data = copy.read_bytes()
    meta = {
        "transcript_path": str(src),
        "lines": len(data.decode("utf-8-sig", "replace").splitlines()),
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "trigger": payload.get("trigger"),
        "recorded_at": datetime.now(UTC).isoformat(),
    }
    (folder / "precompact.json").write_text(json.dumps(meta), encoding="utf-8")
    return copy


def _transcript_text(settings: HookSettings, session_id: str, path: Path) -> str:
    """The transcript's text; if the file was rewritten since PreCompact, the copy PreCompact
    kept followed by the entries written since (those whose uuid the copy does not hold)."""
    current = path.read_bytes()
    folder = _state_path(settings, session_id)
    try:
        meta = json.loads((folder / "precompact.json").read_text(encoding="utf-8"))
        old = (folder / "precompact.jsonl").read_bytes()
    except (OSError, ValueError):
        return current.decode("utf-8-sig")
    size = meta.get("size") if isinstance(meta, dict) else None
    if (
        isinstance(size, int)
        and len(current) >= size
        and hashlib.sha256(current[:size]).hexdigest() == meta.get("sha256")
    ):
        return current.decode("utf-8-sig")  # the file only grew: it holds everything
    old_text = old.decode("utf-8-sig")
    seen = {_uuid_of(line) for line in old_text.splitlines()} - {None}
    added = [line for line in current.decode("utf-8-sig").splitlines() if _uuid_of(line) not in seen]
    return old_text.rstrip("\n") + "\n" + "\n".join(added) + "\n"


def _uuid_of(line: str) -> str | None:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    u = data.get("uuid") if isinstance(data, dict) else None
    return u if isinstance(u, str) else None


# --- the event body ------------------------------------------------------------------------


def _ids(payload: dict[str, Any]) -> tuple[str, str]:
    session_id = payload.get("session_id")
    transcript_path = payload.get("transcript_path")
    if not isinstance(session_id, str) or not session_id:
        raise HookInputError("session_id: missing")
    if not isinstance(transcript_path, str) or not transcript_path:
        raise HookInputError("transcript_path: missing")
    return session_id, transcript_path


def _leaf_uuid(text: str) -> str | None:
    for line in reversed(text.splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if (
            isinstance(data, dict)
            and data.get("type") in ("user", "assistant")
            and isinstance(data.get("uuid"), str)
            and not data.get("isSidechain")
        ):
            return str(data["uuid"])
    return None


def _last_entry(text: str) -> dict[str, Any] | None:
    for line in reversed(text.splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def _with_pending_compaction(text: str, session_id: str, summary: str, trigger: Any) -> str:
    """The transcript plus the entries of this compaction Claude Code has not written yet, in
    its own format, so the importer's reader finds it like any other: the summary entry, after
    the boundary when the file ends with one, else after a boundary added here too."""
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    last = _last_entry(text)
    added: list[dict[str, Any]] = []
    if last is not None and last.get("type") == "system" and last.get("subtype") == "compact_boundary":
        boundary_uuid = last.get("uuid") if isinstance(last.get("uuid"), str) else PENDING_BOUNDARY
    else:
        boundary_uuid = PENDING_BOUNDARY
        added.append(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "parentUuid": None,
                "logicalParentUuid": _leaf_uuid(text),
                "uuid": PENDING_BOUNDARY,
                "sessionId": session_id,
                "timestamp": now,
                "compactMetadata": {"trigger": trigger} if isinstance(trigger, str) else {},
            }
        )
    added.append(
        {
            "type": "user",
            "parentUuid": boundary_uuid,
            "uuid": PENDING_SUMMARY,
            "sessionId": session_id,
            "timestamp": now,
            "isCompactSummary": True,
            "message": {"role": "user", "content": [{"type": "text", "text": summary}]},
        }
    )
    return text.rstrip("\n") + "\n" + "".join(json.dumps(e) + "\n" for e in added)


def _recorded_lines(settings: HookSettings, session_id: str) -> int | None:
    """How many lines the transcript had at PreCompact (None: PreCompact did not run)."""
    try:
        meta = json.loads((_state_path(settings, session_id) / "precompact.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    lines = meta.get("lines") if isinstance(meta, dict) else None
    return lines if isinstance(lines, int) else None


def prepare_event(settings: HookSettings, payload: dict[str, Any]) -> PreparedEvent | None:
    """The compaction this hook reports, as (Idempotency-Key, body); None when there is none.

    - The transcript holds it with its summary line: exactly the importer's body and key.
    - It holds the boundary but no summary line yet: `compact_summary` becomes the summary
      (metadata.summary_source = "hook:compact_summary").
    - It holds no new compaction yet (none after where PreCompact saw the file end, or a
      boundary with nothing after it): with a `compact_summary`, the missing summary entry (and
      boundary) are appended to the text as Claude Code writes them and the text is read as
      above; without one, None.
    Raises HookInputError, TranscriptError (unreadable transcript).
    """
    session_id, transcript_path = _ids(payload)
    path = Path(transcript_path)
    try:
        text = _transcript_text(settings, session_id, path)
    except OSError as exc:
        raise TranscriptError(str(path), None, f"cannot read: {exc.strerror or exc}") from exc
    raw_summary = payload.get("compact_summary")
    summary = raw_summary if isinstance(raw_summary, str) and raw_summary.strip() else None
    transcript = parse_transcript(text, name=str(path), format="claude-jsonl")
    threshold = _recorded_lines(settings, session_id)
    is_new = bool(transcript.compactions) and (
        threshold is None or transcript.compactions[-1].line > threshold
    )
    synthesized = not is_new
    if synthesized:
        if summary is None:
            return None
        transcript = parse_transcript(
            _with_pending_compaction(text, session_id, summary, payload.get("trigger")),
            name=str(path),
            format="claude-jsonl",
        )
        if not transcript.compactions:
            return None
    compaction = transcript.compactions[-1]
    key, body = compaction_event(transcript, compaction, path)
    if compaction.metadata.get("summary_missing") and summary:
        body["after"] = [{"role": "user", "content": summary, "kind": "compact_summary"}, *body["after"]]
        body["metadata"] = {k: v for k, v in body["metadata"].items() if k != "summary_missing"}
        body["metadata"]["summary_source"] = "hook:compact_summary"
    elif synthesized:
        body["metadata"]["summary_source"] = "hook:compact_summary"
    return PreparedEvent(key, body)


def _remember_posted(settings: HookSettings, session_id: str, prepared: PreparedEvent) -> None:
    path = _state_dir(settings, session_id) / "posted.json"
    path.write_text(
        json.dumps({"key": prepared.key, "body": prepared.body}, ensure_ascii=False), encoding="utf-8"
    )
    path.chmod(0o600)


def _posted(settings: HookSettings, session_id: str) -> PreparedEvent | None:
    try:
        data = json.loads((_state_path(settings, session_id) / "posted.json").read_text(encoding="utf-8"))
        return PreparedEvent(str(data["key"]), dict(data["body"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


# --- the events -----------------------------------------------------------------------------


def additional_context(result: GateResult) -> str | None:
    """The reminder printed on SessionStart: each missing or weakened rule in its original words.
    None when no rule was lost or weakened. At most 10,000 characters (Claude Code's cap)."""
    rules = result.rules_in_state("missing", "weakened")
    if not rules:
        return None
    head = (
        "ctxaudit checked the compaction that just happened: these rules were "
        "lost or weakened in the summary. They still apply, exactly as originally given:"
    )
    lines = [head]
    for r in rules:
        what = r.state
        if r.state == "weakened" and r.lost:
            what = "weakened: " + "; ".join(r.lost)
        lines.append(f"- {r.text} ({what})")
    if result.ui_url:
        lines.append(f"Details: {result.ui_url}")
    text = "\n".join(lines)
    if len(text) > ADDITIONAL_CONTEXT_MAX:
        text = text[: ADDITIONAL_CONTEXT_MAX - 1] + "…"
    return text


def handle(settings: HookSettings, payload: dict[str, Any], sender: Sender) -> dict[str, Any] | None:
    """Run one Claude Code hook event. Returns the JSON to print on stdout, or None.

    Raises HookInputError (bad stdin) and TranscriptError (unreadable transcript); the caller
    turns every error into a line on stderr and exit 0.
    """
    event = payload.get("hook_event_name")
    if event == "PreCompact":
        record_position(settings, payload)
        return None
    if event == "PostCompact":
        prepared = prepare_event(settings, payload)
        if prepared is not None:
            _remember_posted(settings, _ids(payload)[0], prepared)
            sender.post(prepared.key, prepared.body)
        return None
    if event == "SessionStart" and payload.get("source") == "compact":
        prepared = prepare_event(settings, payload)
        posted = _posted(settings, _ids(payload)[0])
        # What PostCompact sent under this key is what the server holds: send it again as is.
        if posted is not None and (prepared is None or prepared.key == posted.key):
            prepared = posted
        if prepared is None:
            return None
        result = sender.gate(prepared.key, prepared.body)
        # The server has the event now, or the spool does: the copies are no longer needed.
        forget_compaction(settings, _ids(payload)[0])
        text = additional_context(result) if result is not None else None
        if text is None:
            return None
        return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    if event not in ("PreCompact", "PostCompact", "SessionStart"):
        sys.stderr.write(f"ctxaudit hook claude-code: ignoring hook event {event!r}\n")
    return None
