"""Events one chat answer emits, in order: valuation, tokens (and warnings), sources, done.

Each event has a ``type`` (an `EventType`) and ``to_json()`` (one JSON line for ``carenav ask --json``).
`Answer.from_events` (chat/answer.py) folds a stream of them into one typed answer.
"""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from enum import StrEnum
from typing import Any, ClassVar

from carenav_core.chat.figures import Figure
from carenav_core.chat.plan import QuestionPlan
from carenav_core.pfs.factors import AnesthesiaRow, FactorRow, GpciRow
from carenav_core.pfs.rows import ValuationRow


class EventType(StrEnum):
    """Every kind of event an answer emits."""
    VALUATION = "valuation"
    FACTORS = "factors"
    TOKEN = "token"
    WARNING = "warning"
    SOURCES = "sources"
    DONE = "done"
    PROGRESS = "progress"


class WarningKind(StrEnum):
    """Why an answer was degraded. A withheld sentence is not a warning: it is a TokenEvent with
    ``withheld=True`` and its reasons."""
    TRUNCATED = "truncated"          # the question was cut to the length cap
    DATABASE = "database"            # the fee-schedule database is missing or failed
    RETRIEVAL = "retrieval"          # the rule-text store is down, empty or built by another embedder
    MODEL_DOWN = "model_down"        # a model server is configured but did not answer the probe
    MODEL_ERROR = "model_error"      # the model failed mid-answer; the deterministic writer continued
    PROMPT_TRIMMED = "prompt_trimmed"    # excerpts or other rows were left out of the model's prompt to fit its context
    INDEXING = "indexing"            # the rule-text index is still being built: answers use what is indexed so far
    OTHER_RULES = "other_rules"      # the question names a year's rule and no retrieved excerpt is from it
    YEAR_NOT_FOUND = "year_not_found"    # an asked code has no fee-schedule row in an asked year: other years shown
    MODIFIER_NOT_FOUND = "modifier_not_found"   # an asked code has no row of the asked modifier: its base rows shown
    NOT_IN_DATA = "not_in_data"      # the question asks for a figure the loaded data do not hold (said, not replaced)
    READ_AS = "read_as"              # a code or family name was read as written another way ("G-2211" as G2211)
    WEAK_MATCH = "weak_match"        # a rule-text question no indexed paragraph matches closely: the nearest are shown
    COMPUTED = "computed"            # a whole-file figure computed by code with no code named ("how many codes were cut")


def json_value(value: Any) -> Any:
    """Decimals as strings (exact), dates in ISO form, tuples as lists, dataclasses as dicts, enums as their values."""
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, (Decimal, date)):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [json_value(v) for v in value]
    return value


class _Event:
    """Shared serialisation: ``{"type": ..., <fields>}``."""
    type: ClassVar[EventType]

    def to_dict(self) -> dict[str, Any]:
        """The event as JSON-safe values (Decimals become exact strings)."""
        return {"type": self.type.value, **json_value(self)}

    def to_json(self) -> str:
        """The event as one compact JSON line."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))


_CY = re.compile(r"\bCY (\d{4})\b")


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
    role: str = ""                 # rule text: cms_text | cms_response | comment_summary (retrieval/chunk.py)
    heading: str = ""              # rule text: the section headings above the paragraph ("G. ... > 3. Request for ...")

    @property
    def rule(self) -> str:
        """The document as analysts name it: by the calendar year it governs ("CY 2022 final rule", published in
        2021), else by the year it was published ("2024 correction")."""
        year = _CY.search(self.title)
        return f"CY {year.group(1)} {self.kind}" if year else f"{self.published[:4] or 'undated'} {self.kind}"

    @property
    def speaker(self) -> str:
        """Whose words the excerpt gives: CMS's, or commenters' as CMS summarised them ('' when unknown). A
        response that opens with the comment it answers says so."""
        if self.role == RESPONSE_ROLE and "Comment:" in self.text:
            return "commenters' views as CMS summarised them, then CMS's response"
        return SPEAKERS.get(self.role, "")


# Who speaks in a rule-text paragraph (the roles of carenav_core/retrieval/chunk.py), as a reader is told.
CMS_ROLE, RESPONSE_ROLE, COMMENT_ROLE = "cms_text", "cms_response", "comment_summary"
SPEAKERS = {CMS_ROLE: "CMS's text", RESPONSE_ROLE: "CMS's response to comments",
            COMMENT_ROLE: "commenters' views as CMS summarised them"}


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
    """The deterministic valuation table, computed before any prose: rows (those the question asks about
    carry ``in_focus``), figures computed from them, and how the question was understood."""
    type: ClassVar[EventType] = EventType.VALUATION
    codes: tuple[str, ...]
    families: tuple[str, ...]
    rows: tuple[ValuationRow, ...]
    provenance: tuple[Provenance, ...]
    unpriced: tuple[str, ...]
    figures: tuple[Figure, ...] = ()
    plan: QuestionPlan | None = None


@dataclass(frozen=True, kw_only=True)
class FactorEvent(_Event):
    """The national PFS conversion factors, computed before any prose for a question that asks about them (those
    it asks about carry ``in_focus``; the others are shown for context)."""
    type: ClassVar[EventType] = EventType.FACTORS
    rows: tuple[FactorRow, ...]
    trend: bool = False            # the question spans years: a chart of the amounts helps
    anesthesia: tuple[AnesthesiaRow, ...] = ()   # anesthesia CFs by locality (an anesthesia CF question)
    gpci: tuple[GpciRow, ...] = ()       # GPCIs by locality (a GPCI question)

    def to_dict(self) -> dict[str, Any]:
        """As every event, plus each row's citable labels and its change (computed properties, not fields), so the
        JSON joins to the prose's citations."""
        out = super().to_dict()
        for row, shown in zip(self.rows, out["rows"]):
            shown.update(label=row.label, change_label=row.change_label if row.prior is not None else None,
                         change=json_value(row.change), percent=json_value(row.percent))
        for row, shown in zip((*self.anesthesia, *self.gpci), (*out["anesthesia"], *out["gpci"])):
            shown.update(label=row.label)
        return out


@dataclass(frozen=True, kw_only=True)
class TokenEvent(_Event):
    """One sentence of prose as the user sees it: released by the output guard, or (``withheld``) the
    visible note that replaces a withheld sentence, with the guard's reasons."""
    type: ClassVar[EventType] = EventType.TOKEN
    text: str
    withheld: bool = False
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class SourcesEvent(_Event):
    """Sources the released prose cited, then the other retrieved ones."""
    type: ClassVar[EventType] = EventType.SOURCES
    cited: tuple[Source, ...]
    also_retrieved: tuple[Source, ...]


@dataclass(frozen=True, kw_only=True)
class WarningEvent(_Event):
    """Something the user should know about how the answer was degraded."""
    type: ClassVar[EventType] = EventType.WARNING
    message: str
    kind: WarningKind


@dataclass(frozen=True, kw_only=True)
class ProgressEvent(_Event):
    """The model is still writing: seconds since it was asked, sentences shown so far (for a status line)."""
    type: ClassVar[EventType] = EventType.PROGRESS
    seconds: float
    sentences: int


@dataclass(frozen=True, kw_only=True)
class DoneEvent(_Event):
    """End of the answer: who wrote the prose ("ollama:llama3.2" or "deterministic") and which data it
    was computed from (fee-schedule build id, rule-text index version; "" when unknown)."""
    type: ClassVar[EventType] = EventType.DONE
    writer: str
    withheld: int
    build_id: str = ""
    index_version: str = ""


ChatEvent = ValuationEvent | FactorEvent | TokenEvent | SourcesEvent | WarningEvent | ProgressEvent | DoneEvent
