"""`ctxaudit import dify|coze --config FILE --messages FILE…`: one event per memory-window drop.

    ctxaudit import dify --config app.yml --messages page1.json page2.json [--context-tokens 128000]
    ctxaudit import coze --config bot.json --messages list.json
    ctxaudit import dify ... --dry-run        # print the events as JSON lines, send nothing

The config is the app's export (Dify DSL YAML; Coze `GET /v1/bots/{id}` answer), the messages
are one conversation's pages as the platform's message API returned them (see
engine/platforms/dify.py, coze.py). Events go to CTXAUDIT_URL with CTXAUDIT_API_KEY, each with
its own Idempotency-Key (importing again adds nothing). Exit 0: done; 1: some events were not
accepted; 2: bad input or no CTXAUDIT_URL.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ctxaudit.client import ApiError, Client, Unavailable
from ctxaudit.engine.platforms import PLATFORMS, PlatformError, conversation_events


def _read(path: Path) -> tuple[str, str]:
    try:
        return str(path), path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlatformError(str(path), f"cannot read: {exc}") from exc


def main(argv: Sequence[str], *, stdout: TextIO, stderr: TextIO) -> int:
    p = argparse.ArgumentParser(
        prog="ctxaudit import",
        description="Memory-window drops of a Dify or Coze conversation → ctxaudit events.",
    )
    p.add_argument("platform", choices=sorted(PLATFORMS))
    p.add_argument("--config", type=Path, required=True, metavar="FILE", help="Dify DSL YAML / Coze bot JSON")
    p.add_argument(
        "--messages", type=Path, nargs="+", required=True, metavar="FILE", help="message API answers (pages)"
    )
    p.add_argument(
        "--context-tokens",
        type=int,
        metavar="N",
        help="the model's context size, to replay Dify's token budget",
    )
    p.add_argument("--dry-run", action="store_true", help="print the events as JSON lines, send nothing")
    try:
        args = p.parse_args(list(argv))
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    try:
        conversation = PLATFORMS[args.platform](
            _read(args.config), [_read(m) for m in args.messages], context_tokens=args.context_tokens
        )
        events = conversation_events(conversation)
    except PlatformError as exc:
        stderr.write(f"ctxaudit import: {exc}\n")
        return 2
    rounds = sum(len(s) for s in conversation.sections)
    if args.dry_run:
        for key, body in events:
            stdout.write(json.dumps({"idempotency_key": key, "body": body}, ensure_ascii=False) + "\n")
        stderr.write(f"{conversation.conversation_id}: {rounds} round(s), {len(events)} window drop(s)\n")
        return 0
    url = os.environ.get("CTXAUDIT_URL", "").strip()
    if not url:
        stderr.write("ctxaudit import: set CTXAUDIT_URL (and CTXAUDIT_API_KEY), or use --dry-run\n")
        return 2
    client = Client(url, os.environ.get("CTXAUDIT_API_KEY") or None)
    created = existing = failed = 0
    for key, body in events:
        try:
            accepted = client.post_event(body, idempotency_key=key)
        except (ApiError, Unavailable) as exc:
            stderr.write(f"ctxaudit import: round {body['metadata']['round']}: {exc}\n")
            failed += 1
            continue
        created += accepted.created
        existing += not accepted.created
    stdout.write(
        f"{conversation.conversation_id}: {rounds} round(s), {len(events)} window drop(s): "
        f"{created} new event(s), {existing} already there, {failed} failed\n"
    )
    return 1 if failed else 0
