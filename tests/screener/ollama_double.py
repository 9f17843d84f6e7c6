"""Queue-of-replies Ollama double for the screener tests, on the shared loopback double
(carenav_core/eval/ollama_double.py): `.host` to connect, `.requests` are the chat request bodies."""
from __future__ import annotations

from carenav_core.eval.ollama_double import OllamaDouble as LoopbackDouble
from carenav_core.eval.ollama_double import ScriptedReply


class OllamaDouble:
    """Replies are popped from a queue ("{}" once it is empty); `status` != 200 fails every request."""

    def __init__(self, replies: list[str] | None = None, *, status: int = 200) -> None:
        queue = list(replies or [])

        def respond(body: dict) -> str | ScriptedReply:
            if status != 200:
                return ScriptedReply(chunks=(), status=status, error="scripted failure")
            return queue.pop(0) if queue else "{}"
        self._double = LoopbackDouble(responder=respond)
        self.host = self._double.url

    @property
    def requests(self) -> list[dict]:
        return [r.body for r in self._double.chat_requests()]

    def __enter__(self) -> "OllamaDouble":
        self._double.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._double.stop()
