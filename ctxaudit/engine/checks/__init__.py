"""The check registry: name → callable. Each check reads a ContextPair and returns findings."""

from __future__ import annotations
