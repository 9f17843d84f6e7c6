"""Who writes the prose: the `Writer` protocol, and the model writer. The deterministic writer (no
model) is in chat/deterministic.py. Either way the output guard checks every sentence afterwards; a
writer is never trusted.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Protocol

from carenav_core.chat.prepared import Prepared
from carenav_core.llm import ModelClient


class Writer(Protocol):
    """Who writes the prose of a prepared answer. The output guard checks whatever it yields."""
    name: str

    def stream(self, prepared: Prepared) -> Iterator[str]:
        """Prose chunks; a model writer raises ModelError when the model fails."""
        ...


@dataclass(frozen=True, kw_only=True)
class ModelWriter:
    """Prose from the language model behind the one model client (carenav_core/llm.py), with the request's
    budget options (num_ctx, num_predict) and the answer's deadlines."""
    model: ModelClient
    options: dict[str, Any] = field(default_factory=dict)
    first_token_s: float | None = None
    total_s: float | None = None

    @property
    def name(self) -> str:
        """Writer name for DoneEvent, e.g. "ollama:llama3.2"."""
        return self.model.name

    def stream(self, prepared: Prepared) -> Iterator[str]:
        return self.model.stream(prepared.messages, self.options, first_token_s=self.first_token_s,
                                 total_s=self.total_s)
