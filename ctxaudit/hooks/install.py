"""`ctxaudit hook install claude-code|cursor`: merge ctxaudit's hook entries into the agent's
settings file, keeping every other hook and setting as it was.

- Claude Code: `.claude/settings.json` of the project (`--project-dir`, default the current
  folder) or `~/.claude/settings.json` (`--user`); entries in the documented shape
  `{"hooks": {"<Event>": [{"matcher"?, "hooks": [{"type": "command", "command", "timeout"}]}]}}`
  (Claude Code hooks reference, see claude_code.py) for PreCompact, PostCompact and
  SessionStart with matcher "compact".
- Cursor: `.cursor/hooks.json` of the project or `~/.cursor/hooks.json`, shape
  `{"version": 1, "hooks": {"preCompact": [{"command"}]}}` (see cursor.py for the sources).

Running it again replaces ctxaudit's own entries (found by the `hook claude-code` / `hook cursor`
in their command) instead of adding more. A settings file that is not a JSON object is left alone
(`InstallError`). `--dry-run` prints the change as a unified diff and writes nothing.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Claude Code's per-hook timeout, seconds: generous, since the hook keeps its own
# CTXAUDIT_HOOK_TIMEOUT budget and exits 0 in time.
CLAUDE_HOOK_TIMEOUT = 30


class InstallError(Exception):
    """The settings file cannot be merged (unreadable, not JSON, wrong shape); nothing was written."""


@dataclass(frozen=True)
class InstallResult:
    path: Path
    before: str
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.before.splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile=f"{self.path} (now)",
                tofile=f"{self.path} (with ctxaudit)",
            )
        )


def hook_command(agent: str) -> str:
    """The command the agent runs: this Python with `-m ctxaudit.engine hook <agent>`, by
    absolute path, so it works when the agent starts outside this virtualenv."""
    return f"{shlex.quote(sys.executable)} -m ctxaudit.engine hook {agent}"


def _ours(command: Any, agent: str) -> bool:
    return isinstance(command, str) and f"hook {agent}" in command and "ctxaudit" in command


def _merge_claude(settings: dict[str, Any], command: str) -> dict[str, Any]:
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError('"hooks" must be an object')
    wanted: list[tuple[str, str | None]] = [
        ("PreCompact", None),
        ("PostCompact", None),
        ("SessionStart", "compact"),
    ]
    for event, matcher in wanted:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InstallError(f'"hooks.{event}" must be a list')
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                handlers = [
                    h
                    for h in group["hooks"]
                    if not (isinstance(h, dict) and _ours(h.get("command"), "claude-code"))
                ]
                if not handlers:
                    continue  # a group that only held our old entry
                group = {**group, "hooks": handlers}
            kept.append(group)
        entry: dict[str, Any] = {
            "hooks": [{"type": "command", "command": command, "timeout": CLAUDE_HOOK_TIMEOUT}]
        }
        if matcher is not None:
            entry = {"matcher": matcher, **entry}
        hooks[event] = [*kept, entry]
    return settings


def _merge_cursor(settings: dict[str, Any], command: str) -> dict[str, Any]:
    settings.setdefault("version", 1)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError('"hooks" must be an object')
    entries = hooks.setdefault("preCompact", [])
    if not isinstance(entries, list):
        raise InstallError('"hooks.preCompact" must be a list')
    kept = [e for e in entries if not (isinstance(e, dict) and _ours(e.get("command"), "cursor"))]
    hooks["preCompact"] = [*kept, {"command": command}]
    return settings


AGENTS: dict[str, tuple[str, Callable[[dict[str, Any], str], dict[str, Any]]]] = {
    "claude-code": (".claude/settings.json", _merge_claude),
    "cursor": (".cursor/hooks.json", _merge_cursor),
}


def settings_path(agent: str, *, project_dir: Path | None = None, user: bool = False) -> Path:
    """The file to merge into: `<project>/<rel>` or `~/<rel>` with `--user`."""
    rel = AGENTS[agent][0]
    base = Path.home() if user else (project_dir or Path.cwd())
    return base / rel


def install(agent: str, path: Path, *, dry_run: bool = False, command: str | None = None) -> InstallResult:
    """Merge the agent's ctxaudit hook entries into `path` (created if missing) unless dry_run.
    Raises InstallError when the existing file cannot be merged; then nothing is written."""
    merge = AGENTS[agent][1]
    try:
        before = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"{path}: cannot read: {exc}") from exc
    try:
        current = json.loads(before) if before.strip() else {}
    except json.JSONDecodeError as exc:
        raise InstallError(f"{path}: not valid JSON (line {exc.lineno}): fix or move it first") from exc
    if not isinstance(current, dict):
        raise InstallError(f"{path}: must hold a JSON object")
    try:
        merged = merge(current, command or hook_command(agent))
    except InstallError as exc:
        raise InstallError(f"{path}: {exc}") from None
    after = json.dumps(merged, indent=2, ensure_ascii=False) + "\n"
    result = InstallResult(path, before, after)
    if not dry_run and result.changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(after)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    return result
