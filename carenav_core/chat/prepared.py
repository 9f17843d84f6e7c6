"""Everything decided about one question before any prose is written."""
from __future__ import annotations

from dataclasses import dataclass

from carenav_core.chat.events import Source, WarningEvent
from carenav_core.chat.factors import checked_facts
from carenav_core.chat.figures import Figure
from carenav_core.chat.indicators import IndicatorFact
from carenav_core.chat.plan import QuestionPlan
from carenav_core.chat.schedule_rank import ScheduleRanking, StatusExamples
from carenav_core.codes import Detection
from carenav_core.pfs.factors import AnesthesiaRow, FactorRow, GpciRow
from carenav_core.pfs.rows import ValuationRow


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """The evidence (rows, sources) and the exact prompt; a writer turns it into prose."""
    question: str
    detection: Detection
    plan: QuestionPlan
    rows: tuple[ValuationRow, ...]
    figures: tuple[Figure, ...]
    unpriced: tuple[str, ...]
    sources: tuple[Source, ...]
    messages: list[dict[str, str]]
    warnings: tuple[WarningEvent, ...]
    dropped_excerpts: int = 0            # excerpts left out of the model's prompt to fit its context
    dropped_rows: int = 0                # other rows (family members, other years) left out of the prompt
    factors: tuple[FactorRow, ...] = ()  # national conversion factors, when the question asks about them
    anesthesia: tuple[AnesthesiaRow, ...] = ()   # anesthesia CFs by locality, when the question asks for them
    gpci: tuple[GpciRow, ...] = ()       # GPCIs by locality, when the question asks for them
    indicators: tuple[IndicatorFact, ...] = ()   # payment policy indicators of the asked codes, when asked
    ranking: ScheduleRanking | StatusExamples | None = None    # "which code has the highest work RVU": the file's
    # ranking; "what does status R mean": its meaning and example codes

    @property
    def checked(self) -> tuple:
        """Everything computed that the output guard treats like a valuation row: the figures, and the asked
        conversion factors with the change across them (payment policy indicators are excerpts, not rows)."""
        return self.figures + checked_facts(self.factors, self.anesthesia, self.gpci)
