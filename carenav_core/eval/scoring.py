"""Scoring one answer of the chat harness against the golden question, the oracle and the script.

The readers here are the harness's own (money and decimals, bracketed citations, label keys), not
the output guard's, so a guard bug cannot hide itself.
"""
from __future__ import annotations

import re
from datetime import date
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Sequence

from carenav_core.chat.answer import Answer
from carenav_core.chat.events import ValuationEvent
from carenav_core.eval.golden import GoldenQuestion
from carenav_core.eval.oracle import ExpectedRow, Oracle
from carenav_core.eval.scripted_model import ScriptedAnswer
from carenav_core.pfs.rows import ValuationRow

_LABEL = re.compile(r"\[([^\[\]\n]*)\]")
_FACT = re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?|(?<![\d.])\d+\.\d+(?![\d.])")
ROW_FIELDS = ("hcpcs", "cy", "status", "work_rvu", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu", "total_nonfac",
              "total_fac", "cf", "payment_nonfac", "payment_fac", "label")
_RVU_NUMBERS = ("work_rvu", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu", "total_nonfac", "total_fac", "cf",
                "payment_nonfac", "payment_fac")


def key(label: str) -> str:
    """How citations are compared: brackets, spaces and case ignored.

    >>> key("[PFS CY2025  rvu25d]") == key("PFS CY2025 RVU25D")
    True
    """
    return re.sub(r"\s+", "", label.strip().strip("[]")).casefold()


def facts(text: str) -> list[Decimal]:
    """Money amounts and decimals stated outside bracketed labels.

    >>> facts("G0556 pays $15.20 [PFS CY2025 RVU25D], 0.47 RVUs, 19,090 rows, $1,234")
    [Decimal('15.20'), Decimal('0.47'), Decimal('1234')]
    """
    bare = _LABEL.sub(" ", text)
    return [Decimal(m.replace("$", "").replace(",", "").strip()) for m in _FACT.findall(bare)]


def citations(text: str) -> list[str]:
    """Every bracketed citation; "[A; B]" counts as two."""
    return [part.strip() for m in _LABEL.finditer(text) for part in m.group(1).split(";") if part.strip()]


def _row_tuple(row: ValuationRow | ExpectedRow) -> tuple:
    release = row.vintage if isinstance(row, ValuationRow) else row.release
    return (*(getattr(row, f) for f in ROW_FIELDS), release)


def _row_numbers(rows: Sequence[ValuationRow]) -> set[Decimal]:
    numbers = {getattr(r, f) for r in rows for f in _RVU_NUMBERS} | {c.value for r in rows for c in r.other_cfs}
    return {n for n in numbers if n is not None} | derived_numbers(rows)


def computed_from_rows(citation: str, rows: Sequence[ValuationRow]) -> bool:
    """Is `citation` a computed figure's label whose codes and row labels are all rows of the answer?

    >>> from types import SimpleNamespace as R
    >>> rows = [R(hcpcs="99490", label="[PFS CY2026 RVU26C]"), R(hcpcs="99439", label="[PFS CY2026 RVU26C]")]
    >>> computed_from_rows("computed: 99490 − 99439, PFS CY2026 RVU26C", rows)
    True
    >>> computed_from_rows("computed: 99490, PFS CY2019 RVU19A → PFS CY2026 RVU26C", rows)
    False
    >>> computed_from_rows("computed: 1200 × 99490, PFS CY2026 RVU26C", rows)
    True
    """
    text = citation.strip().strip("[]")
    if not text.startswith("computed:"):
        return False
    codes_part, _, labels_part = text.removeprefix("computed:").partition(",")
    codes_part = re.sub(r"\b\d+\s*×\s*", " ", codes_part)        # a count billed ("1200 × G0557"), not a code
    codes = set(re.findall(r"[A-Z0-9]{5}", codes_part))
    labels = {key(part) for part in re.split(r"\s*→\s*", labels_part) if part.strip()}
    return bool(codes and labels) and codes <= {r.hcpcs for r in rows} and labels <= {key(r.label) for r in rows}


def volume_numbers(question: str, rows: Sequence[ValuationRow]) -> set[Decimal]:
    """What a volume the question writes may bill (this harness's own reading): the counts it writes (not codes or
    years), 12 months for a year and 52 weeks for a year of weeks, their products, and each row payment times each
    (cents half-up).

    >>> from types import SimpleNamespace as R
    >>> found = volume_numbers("G0557 for 100 patients a month for a year", [R(payment_nonfac=Decimal("53.78"),
    ...                                                                        payment_fac=None)])
    >>> Decimal("1200") in found and Decimal("64536.00") in found
    True
    """
    written = re.findall(r"(?<![\w.$])\d{1,3}(?:,\d{3})+(?![\d.])|(?<![\w.$,])\d{1,6}(?![\w.,])", question)
    counts = {Decimal(n.replace(",", "")) for n in written if "," in n or len(n) != 5}     # 99490 is a code
    counts = {c for c in counts if c > 1 and not (1900 <= c <= 2099)}
    if re.search(r"\b(?:year|annual|yearly|annually|yr)\b", question, re.IGNORECASE):
        counts |= {Decimal(12)} | ({Decimal(52)} if re.search(r"\bweek", question, re.IGNORECASE) else set())
    months = re.search(r"\b(\d{1,2})\s+months?\b", question)
    counts |= {Decimal(months.group(1))} if months else set()
    products = counts | {a * b for a in counts for b in counts if a is not b}
    found = set(products)
    for setting in ("payment_nonfac", "payment_fac"):
        amounts = [a for a in (getattr(row, setting, None) for row in rows) if a is not None]
        amounts += [a + b for i, a in enumerate(amounts) for b in amounts[i + 1:]]      # two codes billed together
        found |= {(a * n).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP) for a in amounts for n in products}
        # a volume in two years or billed with two codes: the gap between two such amounts and its percent
        billed = [a * n for a in amounts for n in products]
        for a in billed:
            for b in billed:
                if a != b:
                    found.add(abs(a - b).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
                    if b:
                        found.add(abs((a - b) / b * 100).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
    return found


def stated_numbers(question: str, rows: Sequence[ValuationRow]) -> set[Decimal]:
    """An amount the question gives to be checked ("Does Q4150 really pay $1,234.50?"), this harness's own reading:
    the amount, and its difference from each row payment with that difference's percent of the payment.

    >>> from types import SimpleNamespace as R
    >>> sorted(stated_numbers("Did 99213 pay $92.03?", [R(payment_nonfac=Decimal("88.95"), payment_fac=None)]))
    [Decimal('3.08'), Decimal('3.5'), Decimal('92.03')]
    """
    given = {Decimal(n.replace(",", "")) for n in re.findall(r"\$\s?(\d[\d,]*(?:\.\d{1,2})?)", question)}
    found = set(given)
    for setting in ("payment_nonfac", "payment_fac"):
        for amount in (getattr(r, setting) for r in rows):
            if amount is None:
                continue
            for g in given:
                found.add(abs(g - amount))
                if amount:
                    found.add(abs((g - amount) / amount * 100).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
    return found


def derived_numbers(rows: Sequence[ValuationRow]) -> set[Decimal]:
    """What may be computed from two rows' payments in the same setting: the difference, the sum and the
    percent difference (one decimal, half-up) — this harness's own arithmetic, to trace computed figures.

    >>> from types import SimpleNamespace as R
    >>> sorted(derived_numbers([R(payment_nonfac=Decimal("66.13"), payment_fac=None),
    ...                         R(payment_nonfac=Decimal("50.44"), payment_fac=None)]))[:3]
    [Decimal('15.69'), Decimal('23.7'), Decimal('31.1')]
    """
    found: set[Decimal] = set()
    for setting in ("payment_nonfac", "payment_fac"):
        amounts = [getattr(r, setting) for r in rows if getattr(r, setting) is not None]
        for a in amounts:
            for b in amounts:
                if a is b:
                    continue
                found |= {abs(a - b), a + b}
                if b:
                    found.add(abs((a - b) / b * 100).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
    return found


@dataclass(kw_only=True)
class QuestionScore:
    """Everything the harness measured about one answer."""
    index: int
    category: str
    mode: str
    text: str
    expected_codes: tuple[str, ...]
    detected_codes: tuple[str, ...] = ()
    valuation_block: bool = False
    rows_expected: int = 0
    rows_exact: int = 0
    row_mismatches: list[dict[str, Any]] = field(default_factory=list)
    unpriced_agrees: bool = True
    numbers: int = 0
    untraced: list[str] = field(default_factory=list)
    citations: int = 0
    invalid_citations: list[str] = field(default_factory=list)
    hostile_sent: int = 0
    hostile_released: list[str] = field(default_factory=list)
    good_sent: int = 0
    good_released: int = 0
    model_called: bool = False
    writer: str = ""
    withheld: int = 0
    warnings: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        return dict(self.__dict__)


_ASKED_YEAR = re.compile(r"(?<![\w.$,-])(?:CY\s?)?(20[1-3]\d)(?![\w]|[.,]\d|-\d)", re.IGNORECASE)


def years_expected(question: str, configured: int, this_year: int) -> int:
    """How many recent final CYs a table should hold: the configured number, or back to the earliest
    calendar year the question writes out (this harness's own reading of that rule).

    >>> years_expected("How did 99490 change since 2021?", 4, 2026), years_expected("G0556 in 2025", 4, 2026)
    (6, 4)
    """
    asked = [int(y) for y in _ASKED_YEAR.findall(question)]
    return min(20, max(configured, this_year - min(asked) + 1)) if asked else configured


def _score_valuation(score: QuestionScore, valuation: ValuationEvent | None, oracle: Oracle, years: int) -> None:
    """Rows of the codes the product detected against the oracle's rows of the same codes."""
    if valuation is None:
        return
    years = years_expected(score.text, years, date.today().year)
    actual = {(r.hcpcs, r.cy): _row_tuple(r) for r in valuation.rows if not r.mod and not r.proposed}
    expected = {(r.hcpcs, r.cy): _row_tuple(r) for r in oracle.rows(valuation.codes, years)}
    score.rows_expected = len(expected.keys() | actual.keys())
    score.rows_exact = sum(1 for k, v in expected.items() if actual.get(k) == v)
    score.row_mismatches = [{"code": k[0], "cy": k[1], "expected": _text(expected.get(k)), "actual": _text(actual.get(k))}
                            for k in sorted(expected.keys() | actual.keys()) if expected.get(k) != actual.get(k)]
    score.unpriced_agrees = list(valuation.unpriced) == oracle.unpriced(valuation.codes)


def _text(row: tuple | None) -> list[str] | None:
    return None if row is None else [None if v is None else str(v) for v in row]


def _score_prose(score: QuestionScore, done: Answer) -> None:
    prose, rows = done.released_text, done.rows
    cited_text = " ".join(s.text for s in done.cited)
    allowed = _row_numbers(rows) | volume_numbers(score.text, rows) | stated_numbers(score.text, rows) | \
        set(facts(cited_text)) | {
        Decimal(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", cited_text)}
    stated = facts(prose)
    score.numbers = len(stated)
    score.untraced = [str(n) for n in stated if n not in allowed]
    known = {key(r.label) for r in rows} | {key(s.label) for s in done.sources}
    found = citations(prose)
    score.citations = len(found)
    score.invalid_citations = [c for c in found if key(c) not in known and not computed_from_rows(c, rows)]


def _score_script(score: QuestionScore, prose: str, answers: Sequence[ScriptedAnswer]) -> None:
    score.model_called = bool(answers)
    hostile = [s for a in answers for s in a.hostile]
    good = [s for a in answers for s in a.good]
    score.hostile_sent, score.good_sent = len(hostile), len(good)
    score.hostile_released = [s for s in hostile if s.strip() in prose]
    score.good_released = sum(1 for s in good if s.strip() in prose)


def score_answer(question: GoldenQuestion, done: Answer, answers: Sequence[ScriptedAnswer],
                 oracle: Oracle, years: int) -> QuestionScore:
    """Score one folded answer."""
    valuation = done.valuation
    score = QuestionScore(index=question.index, category=question.category, mode=question.reply_mode,
                          text=question.text, expected_codes=question.expected_codes,
                          detected_codes=tuple(valuation.codes) if valuation else (),
                          valuation_block=valuation is not None, writer=done.writer,
                          withheld=len(done.withheld), warnings=[str(w.kind) for w in done.warnings])
    _score_valuation(score, valuation, oracle, years)
    _score_prose(score, done)
    _score_script(score, done.released_text, answers)
    return score
