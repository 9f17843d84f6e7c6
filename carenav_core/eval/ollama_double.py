"""A scripted stand-in for an Ollama server, on loopback, for tests and evaluation harnesses that
drive the real `ollama.Client` (no model, no network).

Speaks the subset CareNav uses (shapes: shared/reference/backends.md):
  GET  /api/tags    the models it pretends to have
  POST /api/chat    the next scripted reply, streamed as x-ndjson (chunked) or as one JSON object
  POST /api/embed   deterministic fake vectors (from a hash of each input)
Every request is recorded (`double.requests`) so tests can assert what prompt the model saw.

    double.enqueue("G0556 pays $15.20 [PFS CY2025 RVU25D].")            # one reply
    double.enqueue(["G0556 ", "pays ", "$15.20"], break_after=2)        # error line after 2 chunks
    double.enqueue("...", break_after=1, break_with="close")            # drop the connection
    double.enqueue("...", delay=1.0)                                    # slow: sleep before answering
    double.enqueue("", status=404, error="model 'x' not found")         # an HTTP error reply
    OllamaDouble(responder=lambda body: "...")                          # computed from each request
                                                                        # once the queue is empty
"""
from __future__ import annotations

import hashlib
import json
import math
import socket
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Literal, Sequence

CREATED_AT = "2026-01-01T00:00:00Z"
# Computes a reply from the /api/chat request body: a string, the chunks to stream, or a ScriptedReply.
Responder = Callable[[dict[str, Any]], "str | Sequence[str] | ScriptedReply"]


@dataclass(frozen=True, kw_only=True)
class ScriptedReply:
    """One /api/chat answer: its chunks and how it misbehaves, if at all."""
    chunks: tuple[str, ...]
    break_after: int | None = None              # stop after this many chunks ...
    break_with: Literal["error", "close"] = "error"   # ... with an {"error"} line, or by closing the socket
    error: str = "model runner has unexpectedly stopped"
    delay: float = 0.0                          # seconds before the response starts
    chunk_delay: float = 0.0                    # seconds between streamed chunks (a slow or stalling model)
    status: int = 200                           # non-200: reply {"error": error} with this status


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    method: str
    path: str
    body: dict[str, Any]


@dataclass(kw_only=True)
class _Script:
    replies: deque[ScriptedReply] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    models: tuple[str, ...] = ("llama3.2:latest",)
    tags_delay: float = 0.0
    embed_dim: int = 8
    responder: Responder | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


def fake_embedding(text: str, dim: int) -> list[float]:
    """A unit vector that depends only on `text` (same text, same vector)."""
    digest = hashlib.sha256(text.encode()).digest()
    raw = [(digest[i % len(digest)] - 127.5) / 127.5 for i in range(dim)]
    norm = math.sqrt(sum(v * v for v in raw)) or 1.0
    return [v / norm for v in raw]


class JsonHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, quiet, with a JSON reply helper: the base of the double and of bench/ollama_shim.py."""
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True    # headers and body go out in separate writes: no 40 ms delayed-ACK stall

    def log_message(self, format: str, *args: Any) -> None:   # keep pytest output clean
        pass

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Handler(JsonHandler):
    script: _Script   # set on the per-double subclass

    def do_GET(self) -> None:
        self._record({})
        if self.path != "/api/tags":
            return self._json(404, {"error": f"ollama double: no route GET {self.path}"})
        self.script.stopping.wait(self.script.tags_delay)
        models = [{"model": m, "name": m, "modified_at": CREATED_AT, "size": 1,
                   "digest": hashlib.sha256(m.encode()).hexdigest(), "details": {}} for m in self.script.models]
        self._json(200, {"models": models})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self._record(body)
        if self.path == "/api/chat":
            return self._chat(body)
        if self.path == "/api/embed":
            texts = body.get("input", [])
            texts = [texts] if isinstance(texts, str) else texts
            vectors = [fake_embedding(t, self.script.embed_dim) for t in texts]
            return self._json(200, {"model": body.get("model", ""), "embeddings": vectors})
        self._json(404, {"error": f"ollama double: no route POST {self.path}"})

    # --- replies -----------------------------------------------------------------------------

    def _record(self, body: dict[str, Any]) -> None:
        with self.script.lock:
            self.script.requests.append(RecordedRequest(method=self.command, path=self.path, body=body))

    def _next_reply(self, body: dict[str, Any]) -> ScriptedReply | None:
        with self.script.lock:
            if self.script.replies:
                return self.script.replies.popleft()
        if self.script.responder is None:
            return None
        try:
            computed = self.script.responder(body)
        except Exception as exc:  # noqa: BLE001 - a broken script must show up as a model error, not a hang
            return ScriptedReply(chunks=(), status=500, error=f"ollama double: responder failed: {exc!r}")
        if isinstance(computed, ScriptedReply):
            return computed
        return ScriptedReply(chunks=(computed,) if isinstance(computed, str) else tuple(computed))

    def _chat(self, body: dict[str, Any]) -> None:
        reply = self._next_reply(body)
        if reply is None:
            return self._json(500, {"error": "ollama double: no scripted reply queued"})
        self.script.stopping.wait(reply.delay)
        if reply.status != 200:
            return self._json(reply.status, {"error": reply.error})
        model = body.get("model", "")
        if body.get("stream", True):
            return self._stream(model, reply)
        self._json(200, _chat_part(model, "".join(reply.chunks), done=True))

    def _stream(self, model: str, reply: ScriptedReply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for index, chunk in enumerate(reply.chunks):
            if reply.break_after is not None and index == reply.break_after:
                return self._break(reply)
            if index and reply.chunk_delay and self.script.stopping.wait(reply.chunk_delay):
                return None
            self._send_line(_chat_part(model, chunk, done=False))
        if reply.break_after is not None and reply.break_after >= len(reply.chunks):
            return self._break(reply)
        self._send_line(_chat_part(model, "", done=True))
        self.wfile.write(b"0\r\n\r\n")

    def _break(self, reply: ScriptedReply) -> None:
        if reply.break_with == "error":
            self._send_line({"error": reply.error})
            self.wfile.write(b"0\r\n\r\n")
            return
        self.close_connection = True
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)

    def _send_line(self, payload: dict[str, Any]) -> None:
        send_line(self.wfile, payload)


def send_line(wfile: Any, payload: dict[str, Any]) -> None:
    """One x-ndjson line of a chunked HTTP response (how Ollama streams)."""
    data = json.dumps(payload).encode() + b"\n"
    wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    wfile.flush()


def _chat_part(model: str, content: str, *, done: bool) -> dict[str, Any]:
    part = {"model": model, "created_at": CREATED_AT, "message": {"role": "assistant", "content": content},
            "done": done}
    if done:
        part.update(done_reason="stop", total_duration=1, eval_count=1)
    return part


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (timeout tests) is expected; anything else is reported."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class OllamaDouble:
    """The server: `start()` (or `with`), point `ollama.Client(host=double.url)` at it, `stop()`.
    Queued replies come first; with the queue empty, `responder(request body)` computes the reply
    (without one, the double answers HTTP 500 "no scripted reply queued")."""

    def __init__(self, *, models: Sequence[str] = ("llama3.2:latest",), embed_dim: int = 8,
                 responder: Responder | None = None) -> None:
        self._script = _Script(models=tuple(models), embed_dim=embed_dim, responder=responder)
        handler = type("OllamaDoubleHandler", (_Handler,), {"script": self._script})
        self._server = QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="ollama-double", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first."""
        with self._script.lock:
            return list(self._script.requests)

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == "/api/chat"]

    def enqueue(self, reply: str | Sequence[str], **behaviour: Any) -> None:
        """Queue the next /api/chat reply: a string, or the list of chunks to stream.
        `behaviour`: break_after, break_with, error, delay, chunk_delay, status (see ScriptedReply)."""
        chunks = (reply,) if isinstance(reply, str) else tuple(reply)
        with self._script.lock:
            self._script.replies.append(ScriptedReply(chunks=chunks, **behaviour))

    @property
    def pending(self) -> int:
        """Scripted replies not yet used."""
        with self._script.lock:
            return len(self._script.replies)

    def set_tags_delay(self, seconds: float) -> None:
        """Make GET /api/tags slow (to test the availability probe's timeout)."""
        self._script.tags_delay = seconds

    def start(self) -> "OllamaDouble":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._script.stopping.set()        # wakes any handler sleeping in a `delay`
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "OllamaDouble":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
