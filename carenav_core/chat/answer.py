"""One typed answer folded from the event stream: what the page shows again on a rerun, what
`carenav ask` prints at the end and what the chat harness scores. The only fold of events there is."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable

from carenav_core.chat.events import (ChatEvent, DoneEvent, FactorEvent, Provenance, Source, SourcesEvent,
                                      TokenEvent, ValuationEvent, WarningEvent, json_value)
from carenav_core.pfs.rows import ValuationRow


@dataclass(frozen=True, kw_only=True)
class Answer:
    """A finished (or interrupted) answer. `text` is the prose exactly as shown (released sentences and
    the notes replacing withheld ones, in order); `released` and `withheld` hold them apart."""
    question: str
    valuation: ValuationEvent | None
    tokens: tuple[TokenEvent, ...]
    warnings: tuple[WarningEvent, ...]
    cited: tuple[Source, ...]
    also_retrieved: tuple[Source, ...]
    writer: str
    build_id: str = ""             # fee-schedule build the rows came from (first 12 hex digits)
    index_version: str = ""        # rule-text index the excerpts came from
    factors: FactorEvent | None = None    # national conversion factors, when the question asked about them

    @classmethod
    def from_events(cls, question: str, events: Iterable[ChatEvent]) -> "Answer":
        """Fold the events of one answer (in order) into an Answer."""
        valuation, factors, tokens, warnings, sources, done = None, None, [], [], None, None
        for event in events:
            if isinstance(event, ValuationEvent):
                valuation = event
            elif isinstance(event, FactorEvent):
                factors = event
            elif isinstance(event, TokenEvent):
                tokens.append(event)
            elif isinstance(event, WarningEvent):
                warnings.append(event)
            elif isinstance(event, SourcesEvent):
                sources = event
            elif isinstance(event, DoneEvent):
                done = event
        return cls(question=question, valuation=valuation, tokens=tuple(tokens), warnings=tuple(warnings),
                   cited=sources.cited if sources else (), also_retrieved=sources.also_retrieved if sources else (),
                   writer=done.writer if done else "", build_id=done.build_id if done else "",
                   index_version=done.index_version if done else "", factors=factors)

    @property
    def rows(self) -> tuple[ValuationRow, ...]:
        return self.valuation.rows if self.valuation else ()

    @property
    def provenance(self) -> tuple[Provenance, ...]:
        return self.valuation.provenance if self.valuation else ()

    @property
    def text(self) -> str:
        """The prose as the user sees it."""
        return "".join(t.text for t in self.tokens)

    @property
    def released_text(self) -> str:
        """Only the sentences the guard released (no notes)."""
        return "".join(t.text for t in self.tokens if not t.withheld)

    @property
    def withheld(self) -> tuple[TokenEvent, ...]:
        """The notes that replaced withheld sentences, each with its reasons."""
        return tuple(t for t in self.tokens if t.withheld)

    @property
    def sources(self) -> tuple[Source, ...]:
        return self.cited + self.also_retrieved

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the valuation event, the prose, withheld reasons, sources, warnings and writer."""
        return {"question": self.question, "valuation": self.valuation.to_dict() if self.valuation else None,
                "factors": self.factors.to_dict() if self.factors else None,
                "text": self.text, "released_text": self.released_text,
                "withheld": [{"note": t.text, "reasons": list(t.reasons)} for t in self.withheld],
                "warnings": [json_value(w) for w in self.warnings],
                "cited": json_value(self.cited), "also_retrieved": json_value(self.also_retrieved),
                "writer": self.writer, "build_id": self.build_id, "index_version": self.index_version}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)
