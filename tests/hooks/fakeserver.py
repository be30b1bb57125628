"""A loopback HTTP server that answers from a script, for the client's retry and timeout tests."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Script:
    """Answers in order: (status, body dict, headers, delay seconds); the last one repeats."""

    answers: list[tuple[int, dict[str, Any], dict[str, str], float]]
    seen: list[Seen] = field(default_factory=list)


@contextmanager
def fake_server(*answers: tuple[int, dict[str, Any], dict[str, str], float]) -> Iterator[tuple[str, Script]]:
    script = Script(list(answers))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.headers.get("Content-Encoding") == "gzip":
                raw = gzip.decompress(raw)
            body = json.loads(raw) if raw else None
            script.seen.append(Seen(self.command, self.path, dict(self.headers.items()), body))
            i = min(len(script.seen) - 1, len(script.answers) - 1)
            status, data, headers, delay = script.answers[i]
            if delay:
                time.sleep(delay)
            out = json.dumps(data).encode()
            try:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
            except (BrokenPipeError, ConnectionResetError):
                pass

        do_GET = do_POST = _answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", script
    finally:
        server.shutdown()
        server.server_close()


def dead_url() -> str:
    """An address nothing listens on (a port just released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
