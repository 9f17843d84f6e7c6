"""Compatibility shim: the scripted Ollama server is now the shared loopback double
(carenav_core/eval/ollama_double.py). `ScriptedOllama(reply)` keeps the old interface
(`.host`, `.requests` as request bodies) for callers not yet switched (bench/bench_screener.py)."""
from __future__ import annotations

from typing import Callable

from carenav_core.eval.ollama_double import OllamaDouble, ScriptedReply

Reply = Callable[[dict], str]


class ScriptedOllama:
    """Context manager: `with ScriptedOllama(reply) as server: ollama.Client(host=server.host)`."""

    def __init__(self, reply: Reply, *, status: int = 200) -> None:
        def respond(body: dict) -> str | ScriptedReply:
            if status != 200:
                return ScriptedReply(chunks=(), status=status, error="scripted failure")
            return reply(body)
        self.double = OllamaDouble(responder=respond)
        self.host = self.double.url

    @property
    def requests(self) -> list[dict]:
        """Bodies of the /api/chat requests received so far."""
        return [r.body for r in self.double.chat_requests()]

    def __enter__(self) -> "ScriptedOllama":
        self.double.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.double.stop()
