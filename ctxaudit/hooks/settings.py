"""What a hook run may do, from the environment (README "Configuration").

CTXAUDIT_URL: the server; unset → the hook sends nothing, spools nothing and exits 0.
CTXAUDIT_API_KEY: an `ingest` key of the project (`read` too for nothing here).
CTXAUDIT_HOOK_TIMEOUT: seconds a hook run may take in all, sending and spooling included
(default 3; the agent waits for the hook, so it must give up rather than hang).
Files live under ~/.ctxaudit/ (`spool/` for events not yet sent, `state/` for what PreCompact
recorded), created with owner-only permissions: they hold conversation text.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TIMEOUT = 3.0


@dataclass(frozen=True)
class HookSettings:
    url: str | None
    api_key: str | None
    timeout: float
    home: Path
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> HookSettings:
        """Read CTXAUDIT_URL, CTXAUDIT_API_KEY, CTXAUDIT_HOOK_TIMEOUT (a bad value → 3 s) and HOME."""
        env = os.environ if env is None else env
        try:
            timeout = float(env.get("CTXAUDIT_HOOK_TIMEOUT", "") or DEFAULT_TIMEOUT)
        except ValueError:
            timeout = DEFAULT_TIMEOUT
        if not timeout > 0:
            timeout = DEFAULT_TIMEOUT
        home = Path(env.get("HOME") or Path.home()) / ".ctxaudit"
        return cls(
            url=(env.get("CTXAUDIT_URL") or "").strip() or None,
            api_key=(env.get("CTXAUDIT_API_KEY") or "").strip() or None,
            timeout=timeout,
            home=home,
        )

    def remaining(self) -> float:
        """Seconds left of CTXAUDIT_HOOK_TIMEOUT since the run started (never below 0)."""
        return max(0.0, self.timeout - (time.monotonic() - self.started))

    def private_dir(self, *parts: str) -> Path:
        """~/.ctxaudit/<parts>, created 0700."""
        path = self.home.joinpath(*parts)
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        return path
