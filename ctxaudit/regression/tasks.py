from __future__ import annotations

from ctxaudit.core.tasks import ctxaudit_task


@ctxaudit_task(name="regression.replay_run_execute", soft_time_limit=150, time_limit=180)
def replay_run_execute_task(run_id: int) -> None:
    from ctxaudit.regression.services import replay_run_execute

    replay_run_execute(run_id=run_id)
