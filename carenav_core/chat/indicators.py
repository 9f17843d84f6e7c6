"""Payment policy indicators a question asks about ("What is the bilateral surgery indicator for 27447?", "the PC/TC
indicator of 71046"): the RVU file's value in each asked code's newest final row, what it means and where the rule
is written (data/indicators.toml). Each is an excerpt made by code (never quoted as rule text), stated first by the
deterministic writer and checked by the output guard like any excerpt (never as a row: its label does not let a
sentence state an amount)."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from decimal import Decimal

import duckdb

from carenav_core.chat.events import Source
from carenav_core.chat.glossary import GLOSSARY_KIND
from carenav_core.chat.plan import QuestionPlan, asked_indicators
from carenav_core.errors import NotBuiltError
from carenav_core.pfs.indicators import IndicatorBook, IndicatorMeaning, indicator_values, load_indicators
from carenav_core.pfs.rows import ValuationRow

log = logging.getLogger(__name__)
INDICATOR_KIND = "payment policy indicator"


@dataclass(frozen=True, kw_only=True)
class IndicatorFact:
    """One indicator of one code's row: its value, meaning and the rule's citation."""
    code: str                # "27447", or "71046-26"
    cy: int
    row_label: str           # the valuation row's label, "[PFS CY2026 RVU26C]"
    meaning: IndicatorMeaning
    recalled: bool = False   # the manual section is as recalled, not checked against a copy (data/indicators.toml)

    @property
    def label(self) -> str:
        return f"[{self.row_label.strip('[]')} · {self.code} {self.meaning.label.lower()}]"

    def sentence(self) -> str:
        """'In the CY2026 RVU file, 27447's bilateral surgery indicator is 1: the 150% ... (Medicare Claims
        Processing Manual ch.12 §40.7) [PFS CY2026 RVU26C · 27447 bilateral surgery] [PFS CY2026 RVU26C].' It is an
        excerpt (its numbers are the excerpt's, as any rule text's), and cites the row it was read from, as a
        sentence stating a value must."""
        meaning = self.meaning.meaning.rstrip(".")
        meaning = meaning[:1].lower() + meaning[1:] if meaning[:2] != meaning[:2].upper() else meaning
        return (f"In the CY{self.cy} RVU file, {self.code}'s {self.meaning.label.lower()} indicator is "
                f"{self.meaning.value or 'blank'}: {meaning} ({self.meaning.citation}"
                f"{', section not checked against the manual' if self.recalled else ''}) {self.label} {self.row_label}.")

    def source(self) -> Source:
        return Source(label=self.label, title=f"CMS RVU file CY{self.cy}: {self.meaning.label} indicator",
                      kind=INDICATOR_KIND, published="", text=self.sentence(), url=self.meaning.href,
                      codes=(self.code.split("-")[0],))


def indicator_facts(fee_db: duckdb.DuckDBPyConnection | None, rows: tuple[ValuationRow, ...],
                    plan: QuestionPlan) -> tuple[IndicatorFact, ...]:
    """The asked indicators of each asked code's newest final national row (of the asked modifier if any);
    () when none is asked, or the database has no indicator table (said in the log; the rows still answer)."""
    if not plan.indicators or fee_db is None:
        return ()
    newest: dict[tuple[str, str], ValuationRow] = {}
    # the national rows of the years in focus (a place asked puts its locality rows in focus, not these)
    years = {r.cy for r in rows if r.in_focus and not r.proposed}
    for row in rows:
        if (row.in_focus or (row.cy in years and row.hcpcs in plan.focus_codes)) and not row.proposed and \
                not row.locality and (not plan.modifier or row.mod == plan.modifier):
            key = (row.hcpcs, row.mod)
            if key not in newest or row.cy > newest[key].cy:
                newest[key] = row
    if not newest:
        return ()
    try:
        values = indicator_values(fee_db, [(r.cy, r.hcpcs, r.mod) for r in newest.values()])
    except (NotBuiltError, duckdb.Error) as exc:
        log.warning("no policy indicators for the answer: %s", exc)
        return ()
    book = load_indicators()
    facts = []
    for row in newest.values():
        found = values.get((row.cy, row.hcpcs, row.mod))
        if found is None:
            continue
        code = row.code_with_modifier
        facts += [IndicatorFact(code=code, cy=row.cy, row_label=row.label, meaning=book.explain(key, found.get(key)),
                                recalled=book.indicators[key].confirmed == "recalled")
                  for key in plan.indicators if key in book.indicators]
        if PERIOP in plan.indicators and (split := periop_meaning(book, found)) is not None:
            facts.append(IndicatorFact(code=code, cy=row.cy, row_label=row.label, meaning=split))
    return tuple(facts)


PERIOP = "periop"      # the PRE OP / INTRA OP / POST OP columns: the global package's split shares


def periop_meaning(book: IndicatorBook, found: dict) -> IndicatorMeaning | None:
    """A row's pre-, intra- and post-operative shares of its global surgical package (the RVU file's PRE OP, INTRA OP
    and POST OP columns, as the record layout defines them), in words; None when the file has none for the row."""
    try:
        shares = [Decimal(found.get(k) or "") for k in ("pre_op", "intra_op", "post_op")]
    except ArithmeticError:
        return None
    if not any(shares):
        value, meaning = "0% / 0% / 0%", "The global surgical package is not split for this code (no pre-, intra- " \
            "or post-operative share in the file)."
    else:
        value = " / ".join(f"{(s * 100).normalize():f}%" for s in shares)
        meaning = ("The shares of the global surgical package for the care before the procedure, the procedure "
                   "itself and the care after it; when that care is split between practitioners (modifiers 56, 54 and "
                   "55) each is paid its share of the global amount.")
    return IndicatorMeaning(key=PERIOP, label="Pre-, intra- and post-operative shares", value=value, meaning=meaning,
                            citation=book.layout.title, href=book.layout.href)


# "What does a 090 global period mean?", "global period XXX": the RVU file's global-days values written out
_GLOBAL_VALUE = re.compile(r"\b(000|010|090|XXX|YYY|ZZZ|MMM)\b(?:[- ]day)?\s*global|\bglobal\s+(?:period|days|"
                           r"surgery(?:\s+days)?|indicator)\s*(?:of|is|=|:)?\s*(000|010|090|XXX|YYY|ZZZ|MMM)\b",
                           re.IGNORECASE)
# "PC/TC indicator 1", "multiple procedure indicator of 3", "bilateral surgery indicator = 2"
_INDICATOR_VALUE = re.compile(r"\bindicators?\s*(?:of|is|=|:|value)?\s*\"?([0-9])\"?(?![\w.])", re.IGNORECASE)
# "What does modifier 51 do?": the indicator that decides what the modifier does, and its rule
_MODIFIER_RULE = {"50": ("bilat_surg", "1"), "51": ("mult_proc", "2"), "62": ("co_surg", "2"), "66": ("team_surg", "2"),
                  "80": ("asst_surg", "2"), "82": ("asst_surg", "2"), "AS": ("asst_surg", "2")}
_MODIFIER_ASKED = re.compile(r"\bmodifier\s*-?\s*(50|51|62|66|80|82|AS)\b", re.IGNORECASE)


def meaning_sources(text: str, named_codes: bool) -> tuple[Source, ...]:
    """A question about what an indicator value means, with no code ("What does PC/TC indicator 1 mean?", "What does
    a 090 global period mean?", "What does modifier 51 do?"): the value's meaning from the RVU file record layout
    (data/indicators.toml), as a citable definition made by code; () when a code is named (its row's value is then
    read from the file) or no value is written.

    >>> [s.label for s in meaning_sources("What does global period XXX mean?", False)]
    ['[Definition: Global surgery days indicator XXX]']
    >>> [s.label for s in meaning_sources("What does multiple procedure indicator 3 mean?", False)]
    ['[Definition: Multiple procedure indicator 3]']
    """
    if named_codes:
        return ()
    book = load_indicators()
    asked: list[tuple[str, str]] = []
    if m := _GLOBAL_VALUE.search(text):
        asked.append(("global_days", (m.group(1) or m.group(2)).upper()))
    value = _INDICATOR_VALUE.search(text)
    for key in asked_indicators(text):
        if value and key in book.indicators and key != "periop":
            asked.append((key, value.group(1)))
    modifier = ""
    if not asked and (m := _MODIFIER_ASKED.search(text)):
        modifier = m.group(1).upper()
        asked.append(_MODIFIER_RULE[modifier])
    sources = []
    for key, shown in dict.fromkeys(asked):
        meaning = book.explain(key, shown)
        if meaning.meaning.startswith("Value "):        # not a value the record layout defines
            continue
        # the value is written in the label only: a number beside the rule's payment words would read to the output
        # guard as an amount stated without a valuation row
        indicator = f"{meaning.label.lower()} indicator {meaning.value}"
        if modifier:
            label = f"modifier {modifier} ({indicator})"
            said = (f"This modifier follows each code's {meaning.label.lower()} indicator in the fee schedule file; "
                    f"under its usual value: {meaning.meaning}")
        else:
            label = f"{meaning.label} indicator {meaning.value}"
            said = f"What the fee schedule file's record layout says this {meaning.label.lower()} value means: " \
                f"{meaning.meaning}"
        sources.append(Source(label=f"[Definition: {label}]",
                              title=f"{meaning.label} indicator {meaning.value} ({meaning.citation})",
                              kind=GLOSSARY_KIND, published="", text=said, url=meaning.href))
    return tuple(sources)
