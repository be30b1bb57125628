"""OpenHands event streams and trajectories (a JSON array of events, or one event a line).

Built from All-Hands-AI/OpenHands @ 156d0686c46aafb0fa9d291da6421fb6f64dddc0 (read, not copied):
- openhands/events/serialization/event.py: `event_to_dict` writes `id`, `timestamp`, `source`,
  `message`, then for an action `action` + `args`, for an observation `observation` +
  `content` + `extras` (and `cause`); trajectories (`save_trajectory_path`, core/main.py) are a
  JSON list of those dicts.
- openhands/events/action/agent.py: `CondensationAction` (`action: "condensation"`) with
  `forgotten_event_ids` or `forgotten_events_start_id`..`forgotten_events_end_id`, and an
  optional `summary` + `summary_offset`; `CondensationRequestAction` (`condensation_request`).
- openhands/memory/view.py: `View.from_events`: the events the LLM sees are all events minus
  every forgotten id (and the condensation actions themselves), with the most recent summary
  inserted at its offset as an `AgentCondensationObservation` (view.py @ e0a253c223a544d86069e5a1f8c0b3e9afe69146
  forgets condensation and condensation-request actions too). The offset counts events of the
  agent's history (openhands/controller/state/state_tracker.py keeps recall actions there, which
  the LLM never reads), not the messages they render to.
- openhands/llm/metrics.py: an agent event's `llm_metrics.accumulated_token_usage.model` names
  the model (the compaction's model: the last one named before it).
- openhands/events/observation/agent.py: `RecallObservation` (`observation: "recall"`) carries
  the workspace context: `repo_instructions` (the repository's .openhands/microagents/repo.md
  or AGENTS.md), `additional_agent_instructions` and triggered `microagent_knowledge`.

So for each condensation action: before = the view of the events before it, after = the view
including it. Actions render as tool calls, observations as tool output, `system` as the
system prompt, `message` as user/assistant text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxaudit.engine.transcripts.jsonutil import call_text, load_json, load_jsonl, obj, parse_time
from ctxaudit.engine.transcripts.sniff import jsonl_head, whole_json
from ctxaudit.engine.transcripts.types import Compaction, Instruction, Reader, Transcript, TranscriptError
from ctxaudit.engine.types import Context, Message

FORMAT = "openhands"
_HIDDEN_ACTIONS = frozenset(
    {
        "condensation",
        "condensation_request",
        "change_agent_state",
        "recall",
        "null",
        "pause",
        "resume",
        "stop",
    }
)
_HIDDEN_OBSERVATIONS = frozenset({"agent_state_changed", "null", "user_rejected"})
_ARG_NOISE = frozenset(
    {
        "thought",
        "security_risk",
        "confirmation_state",
        "hidden",
        "blocking",
        "is_input",
        "impl_source",
        "wait_for_response",
        "image_urls",
        "file_urls",
        "is_static",
        "cwd",
        "timeout",
    }
)


def _is_event(e: Any) -> bool:
    return (
        isinstance(e, dict)
        and ("action" in e or "observation" in e)
        and ("args" in e or "extras" in e or "content" in e)
    )


def sniff(name: str, text: str) -> bool:
    """Serialized OpenHands events: objects with `action` + `args` or `observation` + `extras`."""
    data = whole_json(text)
    if isinstance(data, list):
        return any(_is_event(e) for e in data[:20])
    if isinstance(data, dict):
        listed = _listed(data)
        return _is_event(data) or any(_is_event(e) for e in listed[:20])
    return any(_is_event(e) for e in jsonl_head(text))


def _listed(data: dict[str, Any]) -> list[Any]:
    """The events of an object that wraps them: `{"trajectory": [...]}` (the server's
    GET /api/conversations/{id}/trajectory answer, server/routes/trajectory.py), `history`, `events`."""
    for key in ("trajectory", "history", "events"):
        value = data.get(key)
        if isinstance(value, list):
            return value
    return []


def _events(text: str, name: str) -> list[tuple[int, dict[str, Any]]]:
    """(position used as line, event). A JSON array is numbered by index + 1; JSONL by line."""
    data = whole_json(text)
    if data is None and text.lstrip().startswith("["):
        data = load_json(text, name)  # raises with the line of the syntax error
    if isinstance(data, dict) and not _is_event(data):
        data = _listed(data)
    if isinstance(data, list):
        return [(i + 1, e) for i, e in enumerate(data) if isinstance(e, dict)]
    if isinstance(data, dict):
        return [(1, data)]
    return load_jsonl(text, name)


def event_store(folder: Path) -> str | None:
    """A conversation of the server's file store, `sessions/<id>/events/<n>.json` (one event a
    file, openhands/storage/locations.py `get_conversation_event_filename`), as one JSON list in
    event order; None when `folder` is not such a folder. A file that cannot be read or is not
    an event ends the stream there (the store is being written)."""
    if folder.name != "events" or not folder.is_dir():
        return None
    numbered = sorted(
        (f for f in folder.iterdir() if f.suffix == ".json" and f.stem.isdigit() and f.is_file()),
        key=lambda f: int(f.stem),
    )
    events: list[Any] = []
    for f in numbered:
        try:
            e = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            break
        if not _is_event(e):
            break
        events.append(e)
    return json.dumps(events) if events else None


def _forgotten(args: dict[str, Any], where: tuple[str, int]) -> set[int]:
    ids = args.get("forgotten_event_ids")
    if isinstance(ids, list):
        return {i for i in ids if isinstance(i, int)}
    start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    if isinstance(start, int) and isinstance(end, int):
        return set(range(start, end + 1))
    raise TranscriptError(where[0], where[1], "condensation action names no forgotten events")


def _message(e: dict[str, Any]) -> Message | None:
    """How one event reads in the LLM's context (None: not sent to the LLM)."""
    action, obs = e.get("action"), e.get("observation")
    args = obj(e.get("args"))
    extras = obj(e.get("extras"))
    if action is not None:
        if action in _HIDDEN_ACTIONS:
            return None
        if action == "system":
            return Message(role="system", content=str(args.get("content", "")))
        if action == "message":
            role = "user" if e.get("source") == "user" else "assistant"
            return Message(role=role, content=str(args.get("content", "")))
        if action == "think":
            return Message(role="assistant", content=str(args.get("thought", "")))
        if action == "finish":
            return Message(
                role="assistant",
                content=str(args.get("final_thought") or args.get("outputs") or e.get("message", "")),
            )
        shown = {k: v for k, v in args.items() if k not in _ARG_NOISE and v not in (None, "", [], {})}
        thought = str(args.get("thought") or "")
        return Message(
            role="assistant", content=(thought + "\n" if thought else "") + call_text(action, shown)
        )
    if obs in _HIDDEN_OBSERVATIONS:
        return None
    if obs == "condense":
        return Message(role="user", content=str(e.get("content", "")), kind="compact_summary")
    if obs == "recall":
        parts = [
            extras.get(k)
            for k in ("repo_instructions", "additional_agent_instructions", "conversation_instructions")
        ]
        parts += [k.get("content") for k in extras.get("microagent_knowledge") or [] if isinstance(k, dict)]
        text = "\n\n".join(p for p in parts if isinstance(p, str) and p.strip())
        return Message(role="user", content=text, kind="instructions") if text else None
    content = e.get("content")
    return (
        Message(role="tool", content=content if isinstance(content, str) else "", name=str(obs))
        if content
        else None
    )


def _instructions(e: dict[str, Any]) -> list[Instruction]:
    if e.get("observation") != "recall" or not isinstance(e.get("extras"), dict):
        return []
    x = e["extras"]
    out = []
    if isinstance(x.get("repo_instructions"), str) and x["repo_instructions"].strip():
        repo = x.get("repo_name") if isinstance(x.get("repo_name"), str) and x["repo_name"] else "repository"
        out.append(Instruction(f"{repo}: repository instructions", x["repo_instructions"].strip()))
    if isinstance(x.get("additional_agent_instructions"), str) and x["additional_agent_instructions"].strip():
        out.append(Instruction("additional agent instructions", x["additional_agent_instructions"].strip()))
    for k in x.get("microagent_knowledge") or []:
        if isinstance(k, dict) and isinstance(k.get("content"), str) and k["content"].strip():
            out.append(Instruction(f"microagent {k.get('name', '?')}", k["content"].strip()))
    return out


# Events the agent's history never holds (controller/state/state_tracker.py filter_out): the
# summary's offset counts the rest, hidden from the LLM or not (a recall action takes a place).
_NOT_IN_HISTORY_ACTIONS = frozenset({"null", "change_agent_state"})
_NOT_IN_HISTORY_OBSERVATIONS = frozenset({"null", "agent_state_changed"})


def _in_history(e: dict[str, Any]) -> bool:
    return (
        e.get("action") not in _NOT_IN_HISTORY_ACTIONS
        and e.get("action") not in ("condensation", "condensation_request")  # View forgets them too
        and e.get("observation") not in _NOT_IN_HISTORY_OBSERVATIONS
        and not e.get("hidden")
    )


def _view(
    events: list[dict[str, Any]], forgotten: set[int], summary: tuple[str, int] | None
) -> list[Message]:
    """The LLM's messages of `events` (View.from_events): the events not forgotten, the summary
    inserted among those *events* at its offset, then each event rendered (or not: _message)."""
    kept = [e for e in events if e.get("id") not in forgotten and _in_history(e)]
    at = max(0, min(summary[1], len(kept))) if summary is not None else -1
    out: list[Message] = []
    for i, e in enumerate([*kept, None]):
        if i == at and summary is not None:
            out.append(Message(role="user", content=summary[0], kind="compact_summary"))
        if e is not None and (m := _message(e)) is not None:
            out.append(m)
    return out


def parse(text: str, *, name: str) -> Transcript:
    """Parse an OpenHands trajectory or event stream.

    Returns one Compaction per condensation action (before: the view before it, after: the view
    with it applied, its summary `compact_summary`) and the workspace instructions of recall
    observations. Raises TranscriptError for unreadable JSON and for a condensation action that
    names no forgotten events.
    """
    events = _events(text, name)
    if len(events) == 1 and not text.lstrip().startswith("["):
        # One file of an event store (sessions/<id>/events/<n>.json): its views need the others.
        return Transcript(
            format=FORMAT,
            session_id=Path(name).stem,
            compactions=(),
            notes=(
                "a single OpenHands event (one file of an event store): export the conversation's trajectory to audit it",
            ),
        )
    seen: list[dict[str, Any]] = []
    forgotten: set[int] = set()
    summary: tuple[str, int] | None = None
    compactions: list[Compaction] = []
    instructions: dict[str, Instruction] = {}
    model: str | None = None
    for pos, e in events:
        for ins in _instructions(e):
            instructions.setdefault(ins.source, ins)
        used = obj(obj(e.get("llm_metrics")).get("accumulated_token_usage")).get("model")
        model = used if isinstance(used, str) and used else model
        if e.get("action") == "condensation":
            args = obj(e.get("args"))
            before = _view(seen, forgotten, summary)
            drop = _forgotten(args, (name, pos))
            forgotten |= drop
            if isinstance(args.get("summary"), str) and isinstance(args.get("summary_offset"), int):
                summary = (args["summary"], args["summary_offset"])
            after = _view(seen, forgotten, summary)
            metadata: dict[str, Any] = {
                "source_format": FORMAT,
                "source_line": pos,
                "forgotten_events": len(drop),
            }
            if isinstance(e.get("id"), int):
                metadata["event_id"] = e["id"]
            if not isinstance(args.get("summary"), str):
                metadata["summary_missing"] = True
            compactions.append(
                Compaction(
                    index=len(compactions),
                    before=Context(messages=tuple(before)),
                    after=Context(messages=tuple(after)),
                    line=pos,
                    occurred_at=parse_time(e.get("timestamp")),
                    model=model,
                    metadata=metadata,
                )
            )
        seen.append(e)
    folder = Path(name)
    return Transcript(
        format=FORMAT,
        # an event store's folder is sessions/<id>/events: the session is its parent
        session_id=folder.parent.name if folder.name == "events" else folder.stem,
        compactions=tuple(compactions),
        instructions=tuple(instructions.values()),
    )


READER = Reader(
    name=FORMAT,
    label="OpenHands event streams / trajectories (JSON list or JSONL of events)",
    extensions=(".json", ".jsonl"),
    sniff=sniff,
    parse=parse,
    folder=event_store,
)
