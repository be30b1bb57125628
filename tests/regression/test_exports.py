"""Regression-set exports (issue 15): pytest, promptfoo and DeepEval files, each runnable as exported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from ctxaudit.regression import exports
from ctxaudit.regression.models import RegressionCase
from tests.engine.test_cli import failing_case, passing_case

HOSTILE_ID = 'x"""\'\\n{}'


def samples() -> list[dict[str, Any]]:
    return [passing_case("kept"), failing_case("lost")]


def run_pytest(path: Path, *extra_paths: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["PYTHONPATH"] = os.pathsep.join([*(str(p) for p in extra_paths), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:django", path.name],
        cwd=path.parent,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_the_pytest_export_passes_kept_rules_and_fails_lost_ones(tmp_path: Path) -> None:
    path = tmp_path / "test_ctxaudit_regression.py"
    path.write_text(exports.pytest_file(samples(), title="acme"), encoding="utf-8")
    run = run_pytest(path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 1 passed" in run.stdout
    assert "test_rules_survive_compression[lost]" in run.stdout
    assert "rules lost in compression" in run.stdout
    only_kept = tmp_path / "ok" / "test_ok.py"
    only_kept.parent.mkdir()
    only_kept.write_text(exports.pytest_file([passing_case("kept")]), encoding="utf-8")
    run = run_pytest(only_kept)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout


def test_hostile_case_text_cannot_break_the_python_files() -> None:
    case = {**passing_case(HOSTILE_ID), "rules": [{"id": "R1", "text": '"""; import os; os.exit(3) #'}]}
    for build in (exports.pytest_file, exports.deepeval_file):
        source = build([case], title='evil """ \\ title')
        compile(source, "export.py", "exec")
        namespace: dict[str, Any] = {}
        # Only the CASES line is evaluated: the literal gives back the case text unchanged.
        cases_line = next(line for line in source.splitlines() if line.startswith("CASES = "))
        exec("import json\n" + cases_line, namespace)  # noqa: S102 - our own generated file under test
        assert namespace["CASES"][0]["id"] == HOSTILE_ID
        assert namespace["CASES"][0]["rules"][0]["text"].startswith('"""')


def _promptfoo_assert(value: str):
    """The python assertion as promptfoo runs a multiline one: a function body over output, context."""
    namespace: dict[str, Any] = {}
    exec("def check(output, context):\n" + textwrap.indent(value, "    "), namespace)  # noqa: S102 - as promptfoo does
    return namespace["check"]


def test_the_promptfoo_suite_is_valid_yaml_and_its_assertion_runs_ctxaudit() -> None:
    config = yaml.safe_load(exports.promptfoo_config([*samples(), passing_case(HOSTILE_ID)], title="acme"))
    assert config["prompts"] == ["{{after}}"]
    assert config["providers"] == ["echo"]
    assert [t["vars"]["case_id"] for t in config["tests"]] == ["kept", "lost", HOSTILE_ID]
    assert json.loads(config["tests"][0]["vars"]["before"]) == passing_case()["before"]
    (assertion,) = config["defaultTest"]["assert"]
    assert assertion["type"] == "python"
    check = _promptfoo_assert(assertion["value"])
    kept, lost = config["tests"][0]["vars"], config["tests"][1]["vars"]
    assert check(kept["after"], {"vars": kept})["pass"] is True
    result = check(lost["after"], {"vars": lost})
    assert result["pass"] is False and result["score"] == 0.0
    assert "R1" in result["reason"] and "missing" in result["reason"]


STUB_DEEPEVAL = {
    "deepeval/__init__.py": """
def assert_test(test_case, metrics):
    for m in metrics:
        m.measure(test_case)
        assert m.is_successful(), f"{m.__name__}: {m.reason}"
""",
    "deepeval/metrics.py": "class BaseMetric:\n    pass\n",
    "deepeval/test_case.py": """
class LLMTestCase:
    def __init__(self, input, actual_output=None, name=None, **kwargs):
        self.input, self.actual_output, self.name = input, actual_output, name
""",
}


def test_the_deepeval_file_runs_with_the_documented_interface(tmp_path: Path) -> None:
    # DeepEval is not installed here: a stub with its documented names (BaseMetric, LLMTestCase,
    # assert_test) checks that the file calls the engine and fails the lost case.
    stubs = tmp_path / "stubs"
    for rel, text in STUB_DEEPEVAL.items():
        (stubs / rel).parent.mkdir(parents=True, exist_ok=True)
        (stubs / rel).write_text(text, encoding="utf-8")
    path = tmp_path / "suite" / "test_ctxaudit_deepeval.py"
    path.parent.mkdir()
    path.write_text(exports.deepeval_file(samples()), encoding="utf-8")
    run = run_pytest(path, stubs)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 1 passed" in run.stdout
    assert "ctxaudit rule retention: rule R1 is missing" in run.stdout


@pytest.mark.django_db
def test_members_download_each_export(client, alice, charlie, project) -> None:
    case = passing_case("kept")
    RegressionCase.objects.create(
        project=project, case_id="kept", rules=case["rules"], before=case["before"], after=case["after"]
    )
    client.force_login(alice)
    for kind, filename in [
        ("pytest", "test_ctxaudit_regression.py"),
        ("promptfoo", "promptfooconfig.yaml"),
        ("deepeval", "test_ctxaudit_deepeval.py"),
    ]:
        r = client.get(f"/projects/{project.pk}/regression/export/{kind}/")
        assert r.status_code == 200
        assert r["Content-Disposition"] == f'attachment; filename="{filename}"'
        assert "kept" in r.content.decode()
    assert client.get(f"/projects/{project.pk}/regression/export/junit/").status_code == 404
    client.force_login(charlie)
    assert client.get(f"/projects/{project.pk}/regression/export/pytest/").status_code == 404
