"""clients/python builds the light distribution `ctxaudit-client`: it installs into a clean
virtualenv (no Django, no engine) and `ctxaudit.client` imports and works there."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_it_builds_and_imports_without_django(tmp_path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)  # a bare interpreter: nothing but the stdlib
    python = env_dir / "bin" / "python"
    # This pip installs into that interpreter (pip --python); build isolation fetches setuptools
    # from PyPI, as `pip install ./clients/python` does for users.
    install = subprocess.run(  # noqa: S603 - fixed arguments
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            str(REPO / "clients" / "python"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    probe = (
        "import sys, importlib.util\n"
        "from ctxaudit.client import Client, GateResult\n"
        "import ctxaudit.integrations\n"
        "assert importlib.util.find_spec('django') is None, 'django is installed'\n"
        "assert 'django' not in sys.modules and 'celery' not in sys.modules\n"
        "assert importlib.util.find_spec('ctxaudit.engine') is None, 'the engine came along'\n"
        "print(GateResult.from_json({'verdict': 'pass'}).passed)\n"
    )
    run = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path)  # noqa: S603
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True"
    assert sys.executable != str(python)
