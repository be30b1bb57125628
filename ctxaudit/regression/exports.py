"""A regression set exported as a pytest file, a promptfoo suite or DeepEval test cases (issue 15).

Each export is one self-contained file holding the cases (samples format, shared/samples/README.md)
and runnable as exported in a user's CI: every case is judged by `ctxaudit check` (gate mode,
seed §6.6: a missing, weakened or demoted rule or a fail verdict fails the case). Out of the box
each file checks the stored `after`; the file says where to call your own compressor on `before`
instead. Pure functions (list of sample dicts in, file text out): no Django, no database.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

Sample = dict[str, Any]

# The keys `ctxaudit check` needs from a case; `expected` stays out (the gate does not read it).
_CASE_KEYS = ("id", "source", "strategy", "description", "rules", "before", "after")


def _safe_title(title: str) -> str:
    """A project name fit for a docstring/comment: word characters, spaces, dots and dashes only."""
    return re.sub(r"[^\w .-]", "", title)[:100].strip()


def _slim(samples: Sequence[Sample]) -> list[Sample]:
    return [{k: s[k] for k in _CASE_KEYS if k in s} for s in samples]


def _py_literal(samples: Sequence[Sample]) -> str:
    """The cases as a Python expression: a JSON text inside a str literal (repr escapes every
    quote and control character, so hostile case text cannot end the literal)."""
    return f"json.loads({json.dumps(_slim(samples), ensure_ascii=True)!r})"


PYTEST_TEMPLATE = '''"""ctxaudit regression set{title}, exported as pytest tests.

Run:  pytest {filename}   (with ctxaudit installed: pip install -e <the ctxaudit repository>)
Each case is checked with `ctxaudit check` (exit 0 = every rule retained, verdict pass).
To test your own compressor, make compress() return its output for `before`.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

CASES = {cases}


def compress(case):
    """The after-context to check. Default: the one stored in the regression set."""
    return case["after"]


def ctxaudit_command():
    exe = shutil.which("ctxaudit")
    return [exe] if exe else [sys.executable, "-m", "ctxaudit.engine"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_rules_survive_compression(case, tmp_path):
    path = tmp_path / "case.json"
    path.write_text(json.dumps({{**case, "after": compress(case)}}, ensure_ascii=False), encoding="utf-8")
    run = subprocess.run(
        [*ctxaudit_command(), "check", str(path)],
        capture_output=True, text=True, encoding="utf-8", env={{**os.environ, "PYTHONIOENCODING": "utf-8"}},
    )
    assert run.returncode != 2, "ctxaudit could not read the case: " + run.stderr
    assert run.returncode == 0, "rules lost in compression:\\n" + run.stdout
'''


def pytest_file(
    samples: Sequence[Sample], *, title: str = "", filename: str = "test_ctxaudit_regression.py"
) -> str:
    """A pytest module: one test per case, each running `ctxaudit check <case>` in a subprocess
    and failing when it exits non-zero. Returns Python source (UTF-8 text)."""
    return PYTEST_TEMPLATE.format(
        title=f" for {_safe_title(title)}" if _safe_title(title) else "",
        filename=filename,
        cases=_py_literal(samples),
    )


# promptfoo: a python assertion sees `output` (the provider's answer) and `context["vars"]`;
# returning {"pass", "score", "reason"} is its documented result shape
# (https://promptfoo.dev/docs/configuration/expected-outputs/python). The `echo` provider returns
# the prompt unchanged (https://promptfoo.dev/docs/providers/echo), so with prompt "{{after}}" the
# suite checks the stored after-context; swap in your compressor as the provider, prompt "{{before}}".
PROMPTFOO_ASSERT = """import json, os, shutil, subprocess, sys, tempfile
v = context["vars"]
text = output if isinstance(output, str) else json.dumps(output)
try:
    after = json.loads(text)
except ValueError:
    after = text
case = {"id": v["case_id"], "rules": json.loads(v["rules"]), "before": json.loads(v["before"]), "after": after}
fd, path = tempfile.mkstemp(suffix=".json")
with os.fdopen(fd, "w", encoding="utf-8") as f:
    json.dump(case, f, ensure_ascii=False)
exe = shutil.which("ctxaudit")
cmd = [exe] if exe else [sys.executable, "-m", "ctxaudit.engine"]
try:
    run = subprocess.run(cmd + ["check", path], capture_output=True, text=True, encoding="utf-8")
finally:
    os.unlink(path)
ok = run.returncode == 0
return {"pass": ok, "score": 1.0 if ok else 0.0, "reason": (run.stdout + run.stderr)[-4000:]}
"""


def _yaml_str(value: str) -> str:
    """A YAML double-quoted scalar: a JSON string literal is one (YAML 1.2 is a JSON superset);
    ensure_ascii keeps line separators and other odd code points escaped."""
    return json.dumps(value, ensure_ascii=True)


def promptfoo_config(samples: Sequence[Sample], *, title: str = "") -> str:
    """A promptfooconfig.yaml (https://www.promptfoo.dev/docs/configuration/reference/): one test
    per case with vars case_id / before / after / rules (JSON text) and a python assertion that
    runs `ctxaudit check` on the provider's output. Run: `npx promptfoo@latest eval -c <file>`."""
    lines = [
        "# ctxaudit regression set exported as a promptfoo suite. Run: npx promptfoo@latest eval -c promptfooconfig.yaml",
        "# Needs `ctxaudit` installed for the python promptfoo uses. To test your compressor,",
        "# replace the echo provider with it and use the prompt '{{before}}'.",
        f"description: {_yaml_str('ctxaudit regression set' + (f' {title}' if title else ''))}",
        "prompts:",
        "  - '{{after}}'",
        "providers:",
        "  - echo",
        "defaultTest:",
        "  assert:",
        "    - type: python",
        f"      value: {_yaml_str(PROMPTFOO_ASSERT)}",
        "tests:",
    ]
    for s in _slim(samples):
        lines += [
            f"  - description: {_yaml_str(str(s['id']))}",
            "    vars:",
            f"      case_id: {_yaml_str(str(s['id']))}",
            f"      rules: {_yaml_str(json.dumps(s.get('rules') or [], ensure_ascii=False))}",
            f"      before: {_yaml_str(json.dumps(s['before'], ensure_ascii=False))}",
            f"      after: {_yaml_str(json.dumps(s['after'], ensure_ascii=False))}",
        ]
    if not samples:
        lines[-1] = "tests: []"
    return "\n".join(lines) + "\n"


# DeepEval: a custom metric subclasses BaseMetric and implements measure / a_measure /
# is_successful / __name__ (https://deepeval.com/docs/metrics-custom); assert_test(test_case,
# [metric]) fails a pytest test (https://deepeval.com/docs/getting-started).
DEEPEVAL_TEMPLATE = '''"""ctxaudit regression set{title}, exported as DeepEval test cases.

Run:  pip install deepeval && deepeval test run {filename}   (or: pytest {filename}; needs ctxaudit installed)
Each LLMTestCase has input = the context before compression and actual_output = the context after
(JSON); RuleRetentionMetric runs the ctxaudit engine on it, no LLM judge. To test your own
compressor, make compress() return its output for `before`.
"""

import json

import pytest
from deepeval import assert_test
from deepeval.metrics import BaseMetric
from deepeval.test_case import LLMTestCase

from ctxaudit.engine.cli import case_from_dict, check_case, violations
from ctxaudit.engine.tokens import CharCounter

CASES = {cases}
RULES = {{c["id"]: c.get("rules") or [] for c in CASES}}


def compress(case):
    """The after-context to check. Default: the one stored in the regression set."""
    return case["after"]


class RuleRetentionMetric(BaseMetric):
    """1.0 when `ctxaudit check` passes the compression (every rule retained, verdict pass), else 0.0."""

    def __init__(self, threshold=1.0):
        # The attributes DeepEval's custom-metric page lists; no LLM is involved.
        self.threshold = threshold
        self.evaluation_model = "ctxaudit engine"
        self.include_reason = True
        self.strict_mode = True
        self.async_mode = False
        self.error = None

    def measure(self, test_case, *args, **kwargs):
        case = {{
            "id": test_case.name,
            "rules": RULES[test_case.name],
            "before": json.loads(test_case.input),
            "after": json.loads(test_case.actual_output),
        }}
        result = check_case(case_from_dict(case, test_case.name), counter=CharCounter())
        problems = violations(result.report)
        self.score = 0.0 if problems else 1.0
        self.success = self.score >= self.threshold
        self.reason = "; ".join(problems) or "every rule retained"
        return self.score

    async def a_measure(self, test_case, *args, **kwargs):
        return self.measure(test_case)

    def is_successful(self):
        return self.error is None and bool(getattr(self, "success", False))

    @property
    def __name__(self):
        return "ctxaudit rule retention"


TEST_CASES = [
    LLMTestCase(
        name=c["id"],
        input=json.dumps(c["before"], ensure_ascii=False),
        actual_output=json.dumps(compress(c), ensure_ascii=False),
    )
    for c in CASES
]


@pytest.mark.parametrize("test_case", TEST_CASES, ids=[c["id"] for c in CASES])
def test_rules_survive_compression(test_case):
    assert_test(test_case, [RuleRetentionMetric()])
'''


def deepeval_file(
    samples: Sequence[Sample], *, title: str = "", filename: str = "test_ctxaudit_deepeval.py"
) -> str:
    """A DeepEval test module: LLMTestCases (input = before, actual_output = after, as JSON) and a
    RuleRetentionMetric that calls the ctxaudit engine in-process. Returns Python source."""
    return DEEPEVAL_TEMPLATE.format(
        title=f" for {_safe_title(title)}" if _safe_title(title) else "",
        filename=filename,
        cases=_py_literal(samples),
    )
