"""`ctxaudit hook …`: run an agent hook, or install one.

    ctxaudit hook claude-code            # Claude Code runs this with the hook's JSON on stdin
    ctxaudit hook cursor                 # Cursor's preCompact hook
    ctxaudit hook install claude-code [--project-dir DIR | --user] [--dry-run]
    ctxaudit hook install cursor      [--project-dir DIR | --user] [--dry-run]

A hook run never breaks the agent: whatever happens (no CTXAUDIT_URL, bad input, server down or
slow, a bug here) it prints at most a note on stderr and exits 0 within CTXAUDIT_HOOK_TIMEOUT
seconds (default 3), spooling what it could not send under ~/.ctxaudit/spool/; each run then
sends what earlier runs spooled, with the time left (not PreCompact, which holds up the
compaction). The installer exits 0 when done, 2 when the settings file
cannot be merged.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from ctxaudit.hooks import claude_code, cursor
from ctxaudit.hooks.install import AGENTS, InstallError, install, settings_path
from ctxaudit.hooks.sending import Sender
from ctxaudit.hooks.settings import HookSettings

HandleFn = Callable[[HookSettings, dict[str, Any], Sender], dict[str, Any] | None]
# The hook registry: an agent = a module with `handle` + one line here (+ an installer in install.AGENTS).
HOOKS: dict[str, HandleFn] = {
    "claude-code": claude_code.handle,
    "cursor": cursor.handle,
}


# Hook events the agent waits on before it goes on, and which send nothing themselves.
HOLDS_UP = frozenset({"PreCompact"})


class _OutOfTime(BaseException):
    """Raised by the alarm when a run passes its budget (BaseException: no handler swallows it)."""


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise _OutOfTime


def run_hook(
    agent: str, stdin: TextIO, stdout: TextIO, stderr: TextIO, settings: HookSettings | None = None
) -> int:
    """One hook run. Always returns 0 (see module doc)."""
    settings = settings or HookSettings.from_env()
    if not settings.url:
        stderr.write(f"ctxaudit hook {agent}: CTXAUDIT_URL is not set; nothing sent\n")
        return 0
    # Signals can only be set from the main thread (a hook run is a process of its own; tests
    # and embedders may call this from elsewhere, where the Client's deadline alone applies).
    use_alarm = (
        hasattr(signal, "setitimer")
        and hasattr(signal, "SIGALRM")
        and threading.current_thread() is threading.main_thread()
    )
    previous = None
    if use_alarm:
        # A last guard: whatever hangs (a huge transcript, a stuck disk) ends the run in time.
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, settings.timeout + 0.5)
    try:
        raw = stdin.read()
        try:
            payload = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            stderr.write(f"ctxaudit hook {agent}: stdin is not JSON ({exc.msg}); nothing sent\n")
            return 0
        if not isinstance(payload, dict):
            stderr.write(f"ctxaudit hook {agent}: stdin must be a JSON object; nothing sent\n")
            return 0
        sender = Sender(settings)
        try:
            output = HOOKS[agent](settings, payload, sender)
            if output is not None:
                stdout.write(json.dumps(output, ensure_ascii=False) + "\n")
                stdout.flush()
        except Exception as exc:  # noqa: BLE001 - the agent must never be broken by its audit hook
            stderr.write(f"ctxaudit hook {agent}: {type(exc).__name__}: {exc}\n")
        # Earlier runs' events go out with the time left — except where the agent is waiting
        # on this very hook before it can go on (PreCompact holds up the compaction).
        if payload.get("hook_event_name") not in HOLDS_UP:
            sender.flush()
    except _OutOfTime:
        stderr.write(f"ctxaudit hook {agent}: gave up after {settings.timeout:g} s\n")
    except Exception as exc:  # noqa: BLE001 - the agent must never be broken by its audit hook
        stderr.write(f"ctxaudit hook {agent}: {type(exc).__name__}: {exc}\n")
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous or signal.SIG_DFL)
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ctxaudit hook", description="Agent hooks that post compactions to ctxaudit."
    )
    sub = p.add_subparsers(dest="agent", metavar="AGENT|install", required=True)
    for name in HOOKS:
        sub.add_parser(name, help=f"run as {name}'s hook (JSON on stdin)")
    inst = sub.add_parser("install", help="merge ctxaudit's hook entries into an agent's settings")
    inst.add_argument("target", choices=sorted(AGENTS), metavar="AGENT", help=" | ".join(sorted(AGENTS)))
    where = inst.add_mutually_exclusive_group()
    where.add_argument(
        "--project-dir", type=Path, metavar="DIR", help="the project (default: current folder)"
    )
    where.add_argument("--user", action="store_true", help="the user's settings (~/.claude, ~/.cursor)")
    inst.add_argument("--dry-run", action="store_true", help="print the change, write nothing")
    return p


def main(
    argv: Sequence[str],
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """`ctxaudit hook ARGS…` (argv without the leading "hook"). Returns the exit code."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        args = _parser().parse_args(list(argv))
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    if args.agent != "install":
        return run_hook(args.agent, stdin or sys.stdin, out, err)
    path = settings_path(args.target, project_dir=args.project_dir, user=args.user)
    try:
        result = install(args.target, path, dry_run=args.dry_run)
    except InstallError as exc:
        err.write(f"ctxaudit hook install: {exc}\n")
        return 2
    if args.dry_run:
        out.write(result.diff() or f"{path}: already up to date\n")
    elif result.changed:
        out.write(f"{path}: ctxaudit hooks installed for {args.target}\n")
    else:
        out.write(f"{path}: already up to date\n")
    return 0
