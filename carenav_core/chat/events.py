"""Events one chat answer emits, in order: valuation, tokens (and warnings), sources, done.

Each event has a ``type`` string and ``to_json()`` (one JSON line for ``carenav ask --json``).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from carenav_core.pfs.rows import ValuationRow


def _json_value(value: Any) -> Any:
    """Decimals as strings (exact), tuples as lists, dataclasses as dicts."""
    if isinstance(value, Decimal):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [_json_value(v) for v in value]
    return value


class _Event:
    """Shared serialisation: ``{"type": ..., <fields>}``."""
    type: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        """The event as JSON-safe values (Decimals become exact strings)."""
        return {"type": self.type, **_json_value(self)}

    def to_json(self) -> str:
        """The event as one compact JSON line."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, kw_only=True)
class Source:
    """One retrieved excerpt. ``label`` is the key the model must copy, e.g. "[89 FR 97860 ¶4]"."""
    label: str
    title: str
    kind: str                      # "final rule", "proposed rule", "correction", ...
    published: str                 # ISO date
    text: str                      # the excerpt shown to the model (numbers in it may be quoted)
    url: str
    codes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Provenance:
    """Where one vintage's numbers come from: its rule, FR citation and conversion factor."""
    label: str
    rule_id: str
    fr_citation: str
    fr_url: str
    cf: Decimal | None
    cf_label: str


def provenance_for(rows: tuple[ValuationRow, ...]) -> tuple[Provenance, ...]:
    """One Provenance line per distinct row label, in first-seen order."""
    seen: dict[str, Provenance] = {}
    for row in rows:
        seen.setdefault(row.label, Provenance(label=row.label, rule_id=row.rule_id, fr_citation=row.fr_citation,
                                              fr_url=row.fr_url, cf=row.cf, cf_label=row.cf_label))
    return tuple(seen.values())


@dataclass(frozen=True, kw_only=True)
class ValuationEvent(_Event):
    """The deterministic valuation table, computed before any prose."""
    type: ClassVar[str] = "valuation"
    codes: tuple[str, ...]
    families: tuple[str, ...]
    rows: tuple[ValuationRow, ...]
    provenance: tuple[Provenance, ...]
    unpriced: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class TokenEvent(_Event):
    """Prose that passed the output guard (or a visible note replacing a withheld sentence)."""
    type: ClassVar[str] = "token"
    text: str


@dataclass(frozen=True, kw_only=True)
class SourcesEvent(_Event):
    """Sources the released prose cited, then the other retrieved ones."""
    type: ClassVar[str] = "sources"
    cited: tuple[Source, ...]
    also_retrieved: tuple[Source, ...]


@dataclass(frozen=True, kw_only=True)
class WarningEvent(_Event):
    """Something the user should know: ``kind`` is e.g. "withheld", "model_error", "fallback"."""
    type: ClassVar[str] = "warning"
    message: str
    kind: str


@dataclass(frozen=True, kw_only=True)
class DoneEvent(_Event):
    """End of the answer: who wrote the prose ("ollama:llama3.2" or "deterministic")."""
    type: ClassVar[str] = "done"
    writer: str
    withheld: int


ChatEvent = ValuationEvent | TokenEvent | SourcesEvent | WarningEvent | DoneEvent
