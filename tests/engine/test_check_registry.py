from __future__ import annotations

from ctxaudit.engine import ContextPair, Rule, parse_context, run_checks
from ctxaudit.engine.checks import CHECKS
from ctxaudit.engine.tokens import CharCounter

BEFORE = parse_context(
    [{"role": "system", "content": "Never delete orders."}, {"role": "user", "content": "hi"}]
)
AFTER = parse_context([{"role": "user", "content": "Summary: the user said hi."}])


def test_the_registry_names_every_check_the_runner_runs() -> None:
    assert list(CHECKS)[:2] == ["rule_retention", "claims"]
    assert {"system_block", "invented_directives", "summary_hygiene", "unauditable"} <= set(CHECKS)


def test_enabled_runs_only_the_named_checks() -> None:
    pair = ContextPair(BEFORE, AFTER, rules=(Rule("R1", "Never delete orders."),))
    full = run_checks(pair, counter=CharCounter())
    only = run_checks(pair, counter=CharCounter(), enabled=["rule_retention"])
    assert [r.state.value for r in only.rules] == ["missing"]
    assert {f.kind for f in only.findings} == {"rule_missing"}
    assert len(full.findings) >= len(only.findings)
    none = run_checks(pair, counter=CharCounter(), enabled=[])
    assert none.rules == () and none.findings == ()
