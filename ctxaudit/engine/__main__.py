"""`python -m ctxaudit.engine check PATH...`: the same gate as the `ctxaudit` console script (engine/cli.py)."""

from __future__ import annotations

import sys

from ctxaudit.engine.cli import main

sys.exit(main())
