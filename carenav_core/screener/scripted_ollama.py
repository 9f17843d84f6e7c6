"""A scripted stand-in for an Ollama server (POST /api/chat, non-streaming), for tests and evaluation.

The real `ollama.Client(host=server.host)` talks to it over HTTP on 127.0.0.1 (random port); each reply
is computed by `reply(request_body) -> content`, and every request body is recorded.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

Reply = Callable[[dict], str]


class ScriptedOllama:
    """Context manager: `with ScriptedOllama(reply) as server: ollama.Client(host=server.host)`."""

    def __init__(self, reply: Reply, *, status: int = 200) -> None:
        self.reply, self.status, self.requests = reply, status, []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.host = f"http://127.0.0.1:{self.server.server_address[1]}"

    def _answer(self, body: dict) -> tuple[int, bytes]:
        self.requests.append(body)
        if self.status != 200:
            return self.status, json.dumps({"error": "scripted failure"}).encode()
        message = {"role": "assistant", "content": self.reply(body)}
        return 200, json.dumps({"model": body.get("model", ""), "created_at": "2026-01-01T00:00:00Z",
                                "message": message, "done": True, "done_reason": "stop"}).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                status, raw = scripted._answer(body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: object) -> None:
                pass
        return Handler

    def __enter__(self) -> "ScriptedOllama":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
