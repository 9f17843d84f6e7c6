"""Queue-of-replies Ollama double for tests, on top of the scripted server the evaluation also uses."""
from __future__ import annotations

from carenav_core.screener.scripted_ollama import ScriptedOllama


class OllamaDouble(ScriptedOllama):
    """Replies are popped from a queue ("{}" once it is empty)."""

    def __init__(self, replies: list[str] | None = None, *, status: int = 200) -> None:
        queue = list(replies or [])
        super().__init__(lambda body: queue.pop(0) if queue else "{}", status=status)
