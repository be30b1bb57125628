"""`ctxaudit hook install claude-code|cursor`: merges into the settings file, keeps other hooks."""

from __future__ import annotations

import io
import json
from pathlib import Path

from ctxaudit.engine.cli import main

OTHER_SESSION_START = {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
OTHER_PRE_TOOL = {"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/guard.sh", "timeout": 5}]}


def _install(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["hook", "install", *args], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _settings(project: Path) -> Path:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Bash(npm test)"]},
                "hooks": {"SessionStart": [OTHER_SESSION_START], "PreToolUse": [OTHER_PRE_TOOL]},
            },
            indent=2,
        )
    )
    return path


def test_claude_code_install_keeps_other_hooks_and_settings(tmp_path) -> None:
    path = _settings(tmp_path)
    code, out, _ = _install("claude-code", "--project-dir", str(tmp_path))
    assert code == 0 and "installed" in out
    data = json.loads(path.read_text())
    assert data["permissions"] == {"allow": ["Bash(npm test)"]}
    assert data["hooks"]["PreToolUse"] == [OTHER_PRE_TOOL]
    assert data["hooks"]["SessionStart"][0] == OTHER_SESSION_START
    ours = data["hooks"]["SessionStart"][1]
    assert ours["matcher"] == "compact"
    assert ours["hooks"][0]["type"] == "command"
    assert ours["hooks"][0]["command"].endswith("-m ctxaudit.engine hook claude-code")
    for event in ("PreCompact", "PostCompact"):
        (group,) = data["hooks"][event]
        assert "matcher" not in group and group["hooks"][0]["command"] == ours["hooks"][0]["command"]

    code, out, _ = _install("claude-code", "--project-dir", str(tmp_path))
    assert code == 0 and "already up to date" in out
    assert json.loads(path.read_text()) == data  # a second install adds nothing


def test_dry_run_prints_the_change_and_writes_nothing(tmp_path) -> None:
    path = _settings(tmp_path)
    before = path.read_text()
    code, out, _ = _install("claude-code", "--project-dir", str(tmp_path), "--dry-run")
    assert code == 0
    assert out.startswith("---") and '+    "PreCompact": [' in out
    assert path.read_text() == before


def test_a_broken_settings_file_is_left_alone(tmp_path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {')
    code, _, err = _install("claude-code", "--project-dir", str(tmp_path))
    assert code == 2 and "not valid JSON" in err
    assert path.read_text() == '{"hooks": {'


def test_user_install_writes_under_home(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    code, _, _ = _install("claude-code", "--user")
    assert code == 0
    assert "PostCompact" in json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]


def test_cursor_install_merges_into_hooks_json(tmp_path) -> None:
    path = tmp_path / ".cursor" / "hooks.json"
    path.parent.mkdir()
    other = {"command": "./audit.sh"}
    path.write_text(json.dumps({"version": 1, "hooks": {"preCompact": [other], "stop": [{"command": "x"}]}}))
    assert _install("cursor", "--project-dir", str(tmp_path))[0] == 0
    assert _install("cursor", "--project-dir", str(tmp_path))[0] == 0
    data = json.loads(path.read_text())
    assert data["version"] == 1 and data["hooks"]["stop"] == [{"command": "x"}]
    assert data["hooks"]["preCompact"][0] == other
    assert len(data["hooks"]["preCompact"]) == 2
    assert data["hooks"]["preCompact"][1]["command"].endswith("-m ctxaudit.engine hook cursor")
