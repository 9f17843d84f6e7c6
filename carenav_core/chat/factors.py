"""Conversion-factor questions ("What is the CY 2026 conversion factor?", "How has the PFS conversion factor changed
since 2020?"): the national Physician Fee Schedule conversion factors of data/pfs_rules.toml as citable rows, their
changes computed here, and the same facts as excerpts (`Source`, kind FACTOR_KIND) that the writer and the model
cite and the output guard checks. Code decides every amount and change; prose only states them."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal

from carenav_core.chat.events import Source
from carenav_core.chat.plan import Intent, QuestionPlan, asks_biggest_step, asks_which_year
from carenav_core.pfs.factors import RVU_FILES_URL, AnesthesiaRow, FactorRow, GpciRow, LocalityFact
from carenav_core.pfs.gpci import STATE_CODES

STATE_NAMES = {code: name.title().replace(" Of ", " of ") for name, code in STATE_CODES.items() if "/" not in name}

FACTOR_KIND = "conversion factor"
GPCI_KIND = "geographic practice cost indices"
CONVERSION_FACTOR = re.compile(r"\bconversion[- ]factors?\b", re.IGNORECASE)
_CF = re.compile(r"\bCFs?\b")
_PFS_WORDS = re.compile(r"\b(?:PFS|fee schedule|physician|Medicare|RVUs?|CY\s?\d{4}|20\d\d|(?:this|last|next) year|"
                        r"current(?:ly)?|now|today|which year|what year|when|cut|cuts|rise|rose|fell|drop\w*|"
                        r"increase\w*|decrease\w*|highest|lowest|peak\w*)\b", re.IGNORECASE)
_ANESTHESIA = re.compile(r"\ban(?:a)?esthesia\b", re.IGNORECASE)


ANESTHESIA_NOTE = ("The loaded data hold no national anesthesia conversion factor (it is not the Physician Fee "
                   "Schedule conversion factor); the anesthesia conversion factors of the CMS ANES file, one per "
                   "payment locality, are shown instead.")
# the ANES file states a national anesthesia CF: it is said first, and the localities' after it
ANESTHESIA_NATIONAL_NOTE = ("The anesthesia conversion factor is not the Physician Fee Schedule conversion factor: the "
                            "CMS ANES file's national figure and its amount for each payment locality are shown.")
NO_ANESTHESIA = ("The loaded data hold no anesthesia conversion factor for this year (no CMS ANES file), and the "
                 "national PFS conversion factor is not an anesthesia amount, so none is stated.")


# "CF" that is cystic fibrosis, not a conversion factor
_NOT_CF = re.compile(r"\bcystic fibrosis\b|\bCF (?:patients?|care|clinics?|cent(?:er|re)s?|screening|carriers?|"
                     r"diagnos\w*|testing|exacerbations?)\b", re.IGNORECASE)
# conversion factors of other Medicare payment systems: not the PFS one, and not in the loaded data
OTHER_SYSTEMS = re.compile(r"\b(?:OPPS|hospital outpatient|ASCs?|ambulatory surgical|home health|HH PPS|ESRD|dialysis|"
                           r"ambulance|IPPS|SNF|skilled nursing|hospice|IRF|LTCH|ACOs?|Shared Savings|clinical lab\w*|"
                           r"CLFS|DMEPOS)\b", re.IGNORECASE)


# "How much does Medicare pay per RVU?", "the dollar value of an RVU": the conversion factor is that amount
_PER_RVU = re.compile(r"\b(?:pay|pays|paid|payment|dollars?|\$|amount|worth)\s+(?:per|a|for each|for one|each)\s+"
                      r"(?:total\s+)?RVU\b|\b(?:dollar|dollars|\$)\s+(?:value|amount)\s+(?:of|per)\s+(?:an?|one|each)\s+"
                      r"(?:total\s+)?RVU\b|\bvalue of (?:an?|one|each) RVU\b|\bRVU(?:'s)? (?:dollar )?(?:value|worth) in "
                      r"dollars\b", re.IGNORECASE)


def asks_conversion_factor(text: str, codes: bool = False) -> bool:
    """The question asks about a conversion factor: "conversion factor" written out, or "CF" beside a fee-schedule
    word, a year ("the 2026 CF", "the CF this year") or a code ("the CF for 99213"); "CF" as cystic fibrosis
    ("CF care", "cystic fibrosis (CF)") is not one."""
    if CONVERSION_FACTOR.search(text) or _PER_RVU.search(text):
        return True
    return bool(_CF.search(text) and not _NOT_CF.search(text) and (codes or _PFS_WORDS.search(text)))


# Payers and payment systems whose amount for a code is not the Physician Fee Schedule's ("the OPPS payment for
# 99213", "what Medicare Advantage plans pay for 99490"); shared-savings programs pay no amount per code.
OTHER_PAYERS = re.compile(OTHER_SYSTEMS.pattern.replace(r"ACOs?|Shared Savings|", "") +
                          r"|\bMedicare Advantage\b|\bMA plans?\b|\bPart [CD]\b|\bDRGs?\b|\bMS-DRG\b"
                          r"|\b(?-i:[A-Z][a-z]+\s+)?Medicaid\b|\bMedi-Cal\b|\bTRICARE\b|\bworkers'?\s*comp\w*"
                          r"|\b(?:commercial|private)\s+(?:insurance|insurers?|payers?|plans?)\b"
                          r"|\bBlue\s+Cross(?:\s+Blue\s+Shield)?\b|\bBCBS\b|\bAetna\b|\bCigna\b|\bHumana\b"
                          r"|\bUnited\s?Health\s?care\b|\bUHC\b|\bAnthem\b|\bKaiser\b|\bthe VA\b"
                          r"|\bVeterans\s+(?:Affairs|Health Administration)\b|\bVHA\b|\bCHAMPVA\b"
                          r"|\b(?:hospital\s+)?facility\s+fees?\b",
                          re.IGNORECASE)


def other_payer(text: str) -> str:
    """The other payer or payment system a payment question names ("OPPS", "Medicare Advantage"), else ''."""
    found = OTHER_PAYERS.search(text)
    return found.group(0) if found else ""


def other_system(text: str) -> str:
    """The other payment system a conversion-factor question names ("OPPS", "home health"), else ''."""
    found = OTHER_SYSTEMS.search(text)
    return found.group(0) if found else ""


_GPCI = re.compile(r"\bGPCIs?\b|\bgeographic practice cost ind\w*|\bgeographic (?:adjustment|index|indices)\b",
                   re.IGNORECASE)


def asks_gpci(text: str) -> bool:
    """The question asks about geographic practice cost indices ("the GPCI for Seattle")."""
    return bool(_GPCI.search(text)) or asks_locality_count(text) or asks_gaf(text)


# "How many payment localities does California have?", "the number of localities in Texas", "Which state has the most
# localities?": the GPCI file's localities counted
_LOCALITY_COUNT = re.compile(r"\bhow\s+many\b[^?.]{0,40}\blocalit(?:y|ies)\b|\bnumber\s+of\b[^?.]{0,30}\blocalities\b|"
                             r"\b(?:most|fewest|least|more|fewer)\b[^?.]{0,30}\blocalities\b|"
                             r"\blocalities\b[^?.]{0,30}\b(?:most|fewest)\b|\bcount\b[^?.]{0,30}\blocalities\b",
                             re.IGNORECASE)
# "the GAF for Miami": the geographic adjustment factor, which the loaded files do not hold
_GAF = re.compile(r"\bGAFs?\b|\bgeographic\s+adjustment\s+factors?\b", re.IGNORECASE)
GAF_NOTE = ("The loaded CMS files hold the three GPCIs of each locality, not its geographic adjustment factor (GAF: "
            "the GPCIs weighted by the shares of work, practice expense and malpractice in the fee schedule, which CMS "
            "publishes in the rule's Addendum D), so no GAF is stated; the GPCIs are shown.")


def asks_locality_count(text: str) -> bool:
    """
    >>> asks_locality_count("How many payment localities does California have?"), asks_locality_count("GPCI Seattle")
    (True, False)
    >>> asks_locality_count("Which state has the most Medicare localities?")
    True
    """
    return bool(_LOCALITY_COUNT.search(text))


def asks_gaf(text: str) -> bool:
    return bool(_GAF.search(text))


def asks_anesthesia(text: str) -> bool:
    return bool(_ANESTHESIA.search(text))


# "the anesthesia payment per unit in Chicago", "anesthesia unit rate": the anesthesia CF is a dollar amount a unit
_PER_UNIT = re.compile(r"\bper\s+(?:base\s+|time\s+)?unit\b|\bunit\s+(?:rate|value|price|amount|dollars?)\b|"
                       r"\b(?:a|each)\s+unit\b", re.IGNORECASE)


def asks_anesthesia_unit(text: str) -> bool:
    """An anesthesia amount a unit asked without "conversion factor" (the ANES file's CF is that amount).

    >>> asks_anesthesia_unit("What is the anesthesia payment per unit in Chicago?"), asks_anesthesia_unit("anesthesia")
    (True, False)
    """
    return asks_anesthesia(text) and bool(_PER_UNIT.search(text))


# "Has the conversion factor gone down every year?", "the CF over time": every year, as a trend
_OVER_YEARS = re.compile(r"\b(?:every|each) year\b|\bover (?:the )?(?:years|time)\b|\bhistor(?:y|ical)\b|\btrend|"
                         r"\bsince\b|\byear[- ]over[- ]year\b|\bgone (?:up|down)\b", re.IGNORECASE)


_PROPOSED = re.compile(r"\bpropos(?:e|es|ed|al|ing)\b", re.IGNORECASE)
_FINAL = re.compile(r"\bfinal(?:i[sz]ed?|i[sz]ing)?\b", re.IGNORECASE)


def in_focus(rows: tuple[FactorRow, ...], plan: QuestionPlan, text: str = "") -> tuple[FactorRow, ...]:
    """Mark the rows the question asks about: the years asked (a proposed rule only when asked for one, or when
    the asked year has no final rule), every year from "since", every year for a trend; else the newest final
    rule and the newest proposed rule."""
    proposed = plan.proposed or bool(_PROPOSED.search(text))       # "What CF did CMS propose for 2027?"
    both = proposed and bool(_FINAL.search(text))       # "proposed for 2026 and what was finalized": both stages
    finals = {r.cy for r in rows if not r.proposed}
    newest_final = max(finals, default=0)
    newest_proposed = max((r.cy for r in rows if r.proposed), default=0)

    def asked(row: FactorRow) -> bool:
        if plan.since is not None:
            return row.cy >= plan.since and (not row.proposed or row.cy not in finals)
        if plan.years:
            return row.cy in plan.years and (both or row.proposed == proposed or
                                             (row.proposed and row.cy not in finals))
        if proposed:
            return row.proposed and row.cy == newest_proposed
        if asks_which_year(text) or asks_biggest_step(text):   # "In which year was the CF highest?", "cut most"
            return not row.proposed
        if Intent.TREND in plan.intents or _OVER_YEARS.search(text):
            return not row.proposed or row.cy not in finals
        return (row.cy == newest_final and not row.proposed) or (row.proposed and row.cy == newest_proposed)

    return tuple(replace(r, in_focus=asked(r)) for r in rows)


@dataclass(frozen=True, kw_only=True)
class Span:
    """The change across the asked final years ('since 2020'), first to last, computed here."""
    first: FactorRow
    last: FactorRow

    @property
    def change(self) -> Decimal:
        return self.last.amount - self.first.amount

    @property
    def percent(self) -> Decimal:
        return (self.change / self.first.amount * 100).quantize(Decimal("0.01"))

    @property
    def label(self) -> str:
        return f"[CF {self.first.name}-{self.last.name}]"

    def numbers(self) -> tuple[Decimal, ...]:
        return (self.first.amount, self.last.amount, self.change, abs(self.change), self.percent, abs(self.percent),
                Decimal(self.first.cy), Decimal(self.last.cy))

    def words(self) -> str:
        return (f"national PFS conversion factor change from {self.first.name} to {self.last.name} rose fell "
                f"{self.first.cy} {self.last.cy} since between")

    def title(self) -> str:
        return f"Change in the PFS conversion factor, {self.first.name} to {self.last.name}"

    def text(self) -> str:
        return (f"From the {_spaced(self.first)} conversion factor of ${self.first.amount} to the {_spaced(self.last)} "
                f"conversion factor of ${self.last.amount}, the national PFS conversion factor changed by "
                f"{self.change:+.4f} ({self.percent:+.2f}%), computed from the rows {self.first.label} and "
                f"{self.last.label}.")

    def source(self) -> Source:
        return Source(label=self.label, title=self.title(), kind=FACTOR_KIND, published="", text=self.text(),
                      url=self.last.fr_url)


@dataclass(frozen=True, kw_only=True)
class VariantGap(Span):
    """One year's two conversion factors side by side: the QP one minus the non-QP one ('How much higher is the 2026
    QP conversion factor than the non-QP one?'), computed here under its own label."""

    @property
    def label(self) -> str:
        return f"[CF {self.last.name} vs non-QP]"

    def words(self) -> str:
        return (f"national PFS conversion factor {self.first.name} {self.last.name} QP non-QP difference higher more "
                f"than {self.first.cy}")

    def sentence(self) -> str:
        return (f"The {_spaced(self.last)} conversion factor (${self.last.amount}) is ${self.change} ({self.percent}%) "
                f"higher than the non-QP one (${self.first.amount}) {self.label}.")

    def title(self) -> str:
        return f"{self.last.name} vs {self.first.name} conversion factor"

    def text(self) -> str:
        """One CF minus another of the same year (QP minus non-QP; final minus proposed), as excerpt text."""
        return (f"The {_spaced(self.last)} conversion factor of ${self.last.amount} minus the {_spaced(self.first)} "
                f"conversion factor of ${self.first.amount} is {self.change:+.4f} ({self.percent:+.2f}%), computed from "
                f"the rows {self.last.label} and {self.first.label}.")


@dataclass(frozen=True, kw_only=True)
class StageGap(VariantGap):
    """One year's final conversion factor against the proposed one of the same kind ('How did the 2026 proposed CF
    compare with what was finalized?'): final minus proposed, under its own label."""

    @property
    def label(self) -> str:
        return f"[CF {self.last.name} vs proposed]"

    def words(self) -> str:
        return (f"national PFS conversion factor {self.first.name} {self.last.name} final finalized proposed proposal "
                f"difference higher lower more less than the one {self.first.cy} same")

    def sentence(self) -> str:
        if not self.change:
            return (f"The final {_spaced(self.last)} conversion factor (${self.last.amount}) is the same as the proposed one "
                    f"{self.label}.")
        way = "higher" if self.change > 0 else "lower"
        return (f"The final {_spaced(self.last)} conversion factor (${self.last.amount}) is ${abs(self.change)} "
                f"({abs(self.percent)}%) {way} than the proposed one (${self.first.amount}) {self.label}.")


def stage_gaps(rows: tuple[FactorRow, ...]) -> tuple[StageGap, ...]:
    """Each asked year with both a proposed and a final conversion factor of the same kind: final minus proposed."""
    asked = [r for r in rows if r.in_focus]
    return tuple(StageGap(first=proposed, last=final) for final in asked if not final.proposed
                 for proposed in asked if proposed.proposed and proposed.cy == final.cy and
                 proposed.variant == final.variant)


def variant_gaps(rows: tuple[FactorRow, ...]) -> tuple[VariantGap, ...]:
    """Each asked year with both a QP and a non-QP conversion factor (from CY 2026): QP minus non-QP."""
    asked = [r for r in rows if r.in_focus and not r.proposed]
    return tuple(VariantGap(first=non, last=qp) for non in asked if non.variant == "non-QP"
                 for qp in asked if qp.variant == "QP" and qp.cy == non.cy and qp.amount > non.amount)


@dataclass(frozen=True, kw_only=True)
class FactorChange:
    """A conversion factor's change from the previous CY's final one, under its own label for the guard."""
    row: FactorRow

    @property
    def label(self) -> str:
        return self.row.change_label

    def numbers(self) -> tuple[Decimal, ...]:
        return self.row.change_numbers()

    def words(self) -> str:
        return self.row.change_words()

    def source(self) -> Source:
        return Source(label=self.label, title=f"{self.row.rule}: change in the conversion factor", kind=FACTOR_KIND,
                      published="", text=self.row.change_text(), url=self.row.fr_url)


def _changes(rows) -> tuple[FactorChange, ...]:
    return tuple(FactorChange(row=r) for r in rows if r.in_focus and r.prior is not None)


def _spaced(row: FactorRow) -> str:
    return row.name.replace("CY", "CY ", 1)


def span(rows: tuple[FactorRow, ...]) -> Span | None:
    """First and last asked final conversion factor (the single one or non-QP), when the question spans years."""
    finals = [r for r in rows if r.in_focus and not r.proposed and r.variant in ("", "non-QP")]
    if len({r.cy for r in finals}) < 2:
        return None
    first_cy = min(r.cy for r in finals)          # of a split first year its last period, as factor_rows compares
    return Span(first=max((r for r in finals if r.cy == first_cy), key=lambda r: r.effective),
                last=max(finals, key=lambda r: r.effective))


def factor_sources(rows: tuple[FactorRow, ...]) -> tuple[Source, ...]:
    """The asked rows as excerpts (the writer and the model cite these labels), then the span across them."""
    asked = tuple(Source(label=r.label, title=f"{r.rule}: conversion factor", kind=FACTOR_KIND,
                         published="", text=r.text(), url=r.fr_url)
                  for r in rows if r.in_focus)
    across = span(rows)
    return (asked + tuple(c.source() for c in _changes(rows)) + ((across.source(),) if across else ())
            + tuple(g.source() for g in variant_gaps(rows)) + tuple(g.source() for g in stage_gaps(rows)))


def _moved(row: FactorRow) -> str:
    """', up 3.26% from the CY 2025 conversion factor of $32.3465' ('' without a previous year on file)."""
    if row.prior is None or row.percent is None:
        return ""
    if row.change == 0:
        return f", unchanged from the {row.prior_label} conversion factor {row.change_label}"
    way = "up" if row.change > 0 else "down"           # "How much did the CF drop in 2025?": dollars and percent
    return (f", {way} ${abs(row.change)} ({abs(row.percent)}%) from the {row.prior_label} conversion factor of "
            f"${row.prior} {row.change_label}")


def _rule_sentence(group: list[FactorRow]) -> str:
    """One rule's conversion factors in one sentence, each amount with its label."""
    first = group[0]
    stage = "proposed" if first.proposed else "final"
    verb = "proposes" if first.proposed else "sets"
    if len(group) == 1:
        return (f"The CY {first.cy} {stage} rule ({first.rule_id}) {verb} a national PFS conversion factor of "
                f"${first.amount} {first.label}{_moved(first)}.")
    if all(r.variant for r in group):
        parts = [f"${r.amount} for {r.who} {r.label}{_moved(r)}" for r in group]
        count = {2: "two", 3: "three"}.get(len(group), "several")
        return (f"The CY {first.cy} {stage} rule ({first.rule_id}) {verb} {count} national PFS conversion factors: "
                + "; ".join(parts) + ".")
    parts = [f"${r.amount} from {r.effective:%B %-d} to {r.until:%B %-d, %Y}" + (f" ({r.note})" if r.note else "")
             + f" {r.label}{_moved(r)}" for r in group]
    return f"The CY {first.cy} {stage} rule ({first.rule_id}) {verb} " + " and ".join(parts) + "."


_BOTH_VARIANTS = (re.compile(r"\bnon[\s-]?QP\b|\bnon[\s-]?qualifying\b", re.IGNORECASE),
                  re.compile(r"(?<![\w-])(?<!non )QP\b|(?<!non-)(?<!non )\bqualifying APM\b", re.IGNORECASE))


def asks_variant_gap(question: str) -> bool:
    """The question sets the QP and the non-QP conversion factor side by side ('How much higher is the QP CF than the
    non-QP one?')."""
    return all(p.search(question) for p in _BOTH_VARIANTS)


def year_extreme_factor(rows: tuple[FactorRow, ...], text: str) -> list[str]:
    """"In which year was the conversion factor highest?": of the final CFs in focus, the highest (lowest), with its
    row's label; a tie names every row tied."""
    end = asks_which_year(text)
    finals = [r for r in rows if r.in_focus and not r.proposed]
    if not end or len({r.cy for r in finals}) < 3:
        return []
    amount = (max if end == "most" else min)(r.amount for r in finals)
    best = [r for r in finals if r.amount == amount]
    scope = "asked" if re.search(r"\b(?:19|20)\d\d\b", text) else "on file"
    return [f"Of the years {scope}, the national PFS conversion factor was {'highest' if end == 'most' else 'lowest'} "
            f"in " + " and ".join(_spaced(r) for r in best) + f": ${amount} " + " ".join(r.label for r in best) + "."]


def biggest_step_factor(rows: tuple[FactorRow, ...], text: str) -> list[str]:
    """"When was the largest CF cut?": of the final CFs in focus, the one whose change from the year before is the
    largest fall (rise) in percent, with its change label; a tie names every row tied."""
    way = asks_biggest_step(text)
    moved = [r for r in rows if r.in_focus and not r.proposed and r.percent is not None and r.variant != "QP" and
             (r.percent < 0 if way == "down" else r.percent > 0)]     # the QP CF beside its year's non-QP one
    if not way or not moved:
        return []
    end = (min if way == "down" else max)(r.percent for r in moved)
    best = [r for r in moved if r.percent == end]
    scope = "asked" if re.search(r"\b(?:19|20)\d\d\b", text) else "on file"
    each = "; ".join(f"{_spaced(r)}, {'−' if r.change < 0 else '+'}${abs(r.change)} ({r.percent:+}%) from the "
                     f"{r.prior_label} conversion factor {r.change_label}" for r in best)
    return [f"Of the years {scope}, the national PFS conversion factor {'fell' if way == 'down' else 'rose'} the most "
            f"in {each}."]


def factor_sentences(rows: tuple[FactorRow, ...], gap_first: bool = False) -> list[str]:
    """The asked conversion factors stated as list items: a sentence per rule, or a line per year when the question
    spans more than two years, then the change across them, the QP minus non-QP difference of a year with both (first
    with `gap_first`: the question asks it) and a caveat for amounts not read from a CMS file."""
    asked = [r for r in rows if r.in_focus]
    groups: dict[tuple[int, bool, str], list[FactorRow]] = {}
    for row in asked:
        groups.setdefault((row.cy, row.proposed, row.rule_id), []).append(row)
    if len(groups) > 2:
        lines = [f"CY {row.cy}{' proposed' if row.proposed else ''}"
                 + (f" {row.variant}" if row.variant else "")
                 + (f" ({row.effective:%b %-d}-{row.until:%b %-d})" if row.several and not row.variant else "")
                 + f": ${row.amount} {row.label}"
                 + (f" ({row.percent:+}% from {row.prior_label} {row.change_label})" if row.percent is not None else "")
                 for row in asked]
    else:
        lines = [_rule_sentence(group) for group in groups.values()]
    why = next((r for r in asked if "law sets two conversion factors" in r.note), None)
    if why is not None:         # the note on file says why a year has two
        lines.append("From CY 2026 the law sets two conversion factors, one for qualifying APM participants (QP) and "
                     f"one for other clinicians (non-QP) {why.label}.")
    across = span(rows)
    if across is not None and across.change:
        way = "rose" if across.change > 0 else "fell"
        change = (f"from {_spaced(across.first)} to {_spaced(across.last)} the national PFS conversion factor {way} "
                  f"${abs(across.change)}, from ${across.first.amount} to ${across.last.amount} ({across.percent:+}%) "
                  f"{across.label}.")
        # "By how much did the CF change from 2025 to 2026?": the change asked comes first, not the older year's own
        if len(groups) == 2:
            lines.insert(0, change[0].upper() + change[1:])
        else:
            lines.append(change[0].upper() + change[1:])
    gaps = [g.sentence() for g in variant_gaps(rows)] if len(groups) <= 2 else []   # one or two years, not a trend
    lines = gaps + lines if gap_first else lines + gaps
    lines = [g.sentence() for g in stage_gaps(rows)] + lines     # a year's final and proposed CFs asked: the gap leads
    doubtful = [r for r in asked if r.tag != "O"]
    if doubtful:
        lines.append("Not read from a CMS file or rule text, so check before relying on "
                     + ("it" if len(doubtful) == 1 else "them") + ": "
                     + ", ".join(f"{r.name} (${r.amount}, {_tag_word(r)}) {r.label}" for r in doubtful)
                     + ".")
    return lines


def _tag_word(row: FactorRow) -> str:
    """'secondary source', 'unverified', 'derived'."""
    return "secondary source" if row.confirmed == "secondary" else row.confirmed


def _place(row: LocalityFact) -> str:
    """'SEATTLE (KING CNTY) (WA, locality 02402:02)'."""
    return f"{row.name.strip()} ({row.state}, locality {row.key})"


def _excerpt(sentence: str, label: str) -> str:
    """A writer's sentence as excerpt text: without its own label."""
    return sentence.replace(f" {label}", "")


def checked_facts(rows: tuple[FactorRow, ...], anesthesia: tuple[AnesthesiaRow, ...] = (),
                  gpci: tuple[GpciRow, ...] = ()) -> tuple:
    """The asked rows, the span across them, the anesthesia and GPCI summaries, for the output guard: their labels
    carry amounts as a valuation row's label does (a sentence stating a conversion factor must cite one of them)."""
    across, local, indices = span(rows), anesthesia_summary(anesthesia), gpci_summary(gpci)
    return (tuple(r for r in rows if r.in_focus) + _changes(rows) + ((across,) if across else ()) + variant_gaps(rows)
            + stage_gaps(rows)
            + ((local,) if local else ()) + (indices.facts() if indices else ()))


@dataclass(frozen=True, kw_only=True)
class AnesthesiaSummary:
    """The anesthesia conversion factors of one CY across payment localities, and those of the places asked."""
    rows: tuple[AnesthesiaRow, ...]      # cheapest first (pfs.factors.anesthesia_rows)

    @property
    def label(self) -> str:
        return self.rows[0].label

    @property
    def median(self) -> Decimal:
        amounts = [r.amount for r in self.rows]
        middle = len(amounts) // 2
        return amounts[middle] if len(amounts) % 2 else (amounts[middle - 1] + amounts[middle]) / 2

    @property
    def asked(self) -> tuple[AnesthesiaRow, ...]:
        return tuple(r for r in self.rows if r.asked)

    @property
    def national(self) -> Decimal | None:
        return self.rows[0].national

    def numbers(self) -> tuple[Decimal, ...]:
        return (self.rows[0].amount, self.rows[-1].amount, self.median, Decimal(len(self.rows)),
                Decimal(self.rows[0].cy), Decimal(self.rows[0].file_cy), *(r.amount for r in self.asked),
                *((self.national,) if self.national is not None else ()))

    def words(self) -> str:
        return ("anesthesia conversion factor CF payment locality localities range lowest highest median from to "
                "national states gives its header changed during year apply not ask date service those "
                f"across ANES file CY{self.rows[0].file_cy} {self.rows[0].cy} loaded no file " +
                " ".join(f"{r.name} {r.state} {r.key}" for r in (self.rows[0], self.rows[-1], *self.asked)))

    def sentences(self) -> list[str]:
        low, high, cy, file_cy = self.rows[0], self.rows[-1], self.rows[0].cy, self.rows[0].file_cy
        # a year with no ANES file of its own says so first, and every amount is the file's year's
        lead = [f"No CY {cy} ANES file is loaded: the amounts below are the CY {file_cy} file's {self.label}."] \
            if file_cy != cy else []
        if self.rows[0].period:     # the year's amounts changed mid-year: which days these are
            lead.append(f"CY {cy}'s anesthesia conversion factors changed during the year: the amounts below apply "
                        f"{self.rows[0].period}, not {self.rows[0].other_period} (ask with a date of service for "
                        f"those) {self.label}.")
        if self.national is not None:
            lead.append(f"The CY {file_cy} ANES file states a national anesthesia conversion factor of "
                        f"${self.national} {self.label}.")
        said = lead + [f"CY {file_cy} anesthesia conversion factors range from ${low.amount} in {_place(low)} to "
                       f"${high.amount} in {_place(high)} across {len(self.rows)} payment localities, with a median of "
                       f"${self.median} {self.label}."]
        said += [f"In {_place(r)} it is ${r.amount} {self.label}." for r in self.asked]
        return said

    def source(self) -> Source:
        text = " ".join(_excerpt(s, self.label) for s in self.sentences())
        return Source(label=self.label, title=f"CMS anesthesia conversion factors by locality (ANES file, CY "
                      f"{self.rows[0].file_cy})", kind=FACTOR_KIND, published="", text=text, url=RVU_FILES_URL)


def anesthesia_summary(rows: tuple[AnesthesiaRow, ...]) -> AnesthesiaSummary | None:
    return AnesthesiaSummary(rows=rows) if rows else None


def asked_places(rows: tuple[LocalityFact, ...], keys: set[str]) -> tuple[LocalityFact, ...]:
    """The rows with the localities the question names marked."""
    return tuple(replace(r, asked=r.key in keys) for r in rows)


def missing_years_note(rows: tuple[FactorRow, ...], plan: QuestionPlan) -> str:
    """A year asked that has no conversion factor on file, said with the years that have one ('' when none)."""
    on_file = {r.cy for r in rows}
    if plan.years and rows and not any(r.in_focus for r in rows) and not set(plan.years) - on_file:
        # "What was the proposed 2025 conversion factor?": the year has a final CF, not the stage asked
        stage = "proposed-rule" if plan.proposed else "final-rule"
        held = sorted({r.cy for r in rows if r.proposed == plan.proposed})
        return (f"No {stage} conversion factor on file for CY {', CY '.join(map(str, plan.years))}: "
                + (f"{stage.replace('-rule', ' rules')} hold CY {held[0]} to CY {held[-1]} (data/pfs_rules.toml)." if held else
                   "none is loaded (data/pfs_rules.toml)."))
    missing = [y for y in plan.years if y not in on_file]
    if plan.since is not None and plan.since < min(on_file, default=plan.since):
        missing.append(plan.since)
    if not missing:
        return ""
    finals = sorted({r.cy for r in rows if not r.proposed})
    proposed = sorted({r.cy for r in rows if r.proposed})
    return (f"No conversion factor on file for CY {', CY '.join(map(str, sorted(set(missing))))}: final rules hold "
            f"CY {finals[0]} to CY {finals[-1]} and proposed rules CY {proposed[0]} to CY {proposed[-1]} "
            "(data/pfs_rules.toml).")


@dataclass(frozen=True, kw_only=True)
class _GpciFact:
    """One label's numbers for the guard: a named locality's three GPCIs, or the ranges across localities."""
    label: str
    values: tuple[Decimal, ...]
    said: str

    def numbers(self) -> tuple[Decimal, ...]:
        return self.values

    def words(self) -> str:
        return self.said


_COMPONENTS = (("work", "work"), ("pe", "practice expense (PE)"), ("mp", "malpractice (MP)"))


def _signed_index(change: Decimal) -> str:
    """'+0.003', '−0.012', 'no change'."""
    return "no change" if change == 0 else f"{'+' if change > 0 else '−'}{abs(change)}"


@dataclass(frozen=True, kw_only=True)
class GpciSummary:
    """The GPCIs of one CY across payment localities, and those of the places asked; `counted`: the question counts
    localities ("How many localities does California have?"), answered first."""
    rows: tuple[GpciRow, ...]
    counted: bool = False
    fewest: bool = False        # "Which states have the fewest localities?": those of one locality named

    def _by_state(self) -> dict[str, int]:
        """State -> its number of localities, most first (ties by state)."""
        counts: dict[str, int] = {}
        for r in self.rows:
            counts[r.state] = counts.get(r.state, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def _row_sentences(self) -> list[str]:
        return [f"In CY {r.cy}, {_place(r)} has a work GPCI of {r.work}, a practice expense (PE) GPCI of {r.pe} "
                f"and a malpractice (MP) GPCI of {r.mp} {r.label}." for r in self.rows if r.asked]

    def _ones(self) -> str:
        return " (one statewide locality: " + ", ".join(st for st, n in self._by_state().items() if n == 1) + ")"

    def count_sentences(self) -> list[str]:
        """'California (CA) has 32 of the 109 payment localities of the CY 2026 GPCI file: ...'; with no state asked,
        the states with the most localities and how many have one."""
        cy, total, by_state = self.rows[0].cy, len(self.rows), self._by_state()
        asked = [st for st in by_state if any(r.asked and r.state == st for r in self.rows)]
        said = []
        for st in asked:
            mine = [r for r in self.rows if r.state == st]
            named = "; ".join(f"{r.place.locality} {r.name.strip().title()}" for r in mine) if len(mine) <= 8 else ""
            said.append(f"{STATE_NAMES.get(st, st)} ({st}) has {len(mine)} of the {total} payment localities of the "
                        f"CY {cy} GPCI file{': ' + named if named else ''} {self.label}.")
        if not asked:
            top = [(st, n) for st, n in by_state.items() if n > 1]
            ones = sum(1 for n in by_state.values() if n == 1)
            listed = ", ".join(f"{STATE_NAMES.get(st, st)} ({st}) {n}" for st, n in top[:6])
            said.append(f"The CY {cy} GPCI file has {total} payment localities in {len(by_state)} states and "
                        f"territories; the most are in {listed}"
                        f"{', then ' + ', '.join(f'{st} {n}' for st, n in top[6:]) if top[6:] else ''}; {ones} have "
                        f"one locality each{self._ones() if self.fewest else ''} {self.label}.")
        return said

    @property
    def label(self) -> str:
        return f"[GPCI{self.rows[0].cy}]"

    def _range(self, part: str) -> tuple[Decimal, Decimal]:
        values = [getattr(r, part) for r in self.rows]
        return min(values), max(values)

    def _at(self, part: str, value: Decimal) -> str:
        """The localities whose `part` index is `value` ("SAN JOSE (CA)", "ALASKA (AK) and 2 others")."""
        found = [f"{r.name.strip()} ({r.state})" for r in self.rows if getattr(r, part) == value]
        more = len(found) - 1
        return found[0] if not more else f"{found[0]} and {more} other{'s' if more > 1 else ''}"

    def _change(self, row: GpciRow) -> str:
        """'From CY 2025 to CY 2026, SEATTLE (WA, locality 02402:02)'s work GPCI went from 1.047 to 1.050 (+0.003), ...'"""
        before = row.earlier
        parts = [f"{name} GPCI {'went ' if i == 0 else ''}from {old} to {new} ({_signed_index(new - old)})"
                 for i, ((part, name), old, new) in enumerate(zip(
                     _COMPONENTS, (before.gpci_work, before.gpci_pe, before.gpci_mp), (row.work, row.pe, row.mp)))]
        return (f"From CY {before.cy} to CY {row.cy}, the {_place(row)} locality's {parts[0]}, its {parts[1]} and its "
                f"{parts[2]} {row.earlier_label} {row.label}.")

    def sentences(self) -> list[str]:
        cy = self.rows[0].cy
        said = self.count_sentences() if self.counted else []
        said += [self._change(r) for r in self.rows if r.asked and r.earlier is not None]
        if not self.counted or sum(r.asked for r in self.rows) <= 3:    # a state's 29 are in the table, not 29 sentences
            said += self._row_sentences()
        # each range with the localities at its ends: "which locality has the highest PE GPCI?" is answered by it
        ranges = ", ".join(f"{name} {low} ({self._at(part, low)}) to {high} ({self._at(part, high)})"
                           for (part, name), (low, high) in zip(_COMPONENTS, (self._range(p) for p, _ in _COMPONENTS)))
        said.append(f"Across the {len(self.rows)} payment localities of the CY {cy} GPCI file the indices range: "
                    f"{ranges} {self.label}.")
        return said

    def facts(self) -> tuple[_GpciFact, ...]:
        words = ("GPCI GPCIs geographic practice cost index indices work practice expense PE malpractice MP "
                 "locality localities range across file has a of and to")
        found = [_GpciFact(label=r.label, values=(r.work, r.pe, r.mp, Decimal(r.cy)) + (
                               (*r.changes(), *(abs(c) for c in r.changes())) if r.earlier is not None else ()),
                           said=f"{words} {r.name} {r.state} {r.key} CY {r.cy}" + (
                               " from to went change changed its" if r.earlier is not None else ""))
                 for r in self.rows if r.asked]
        found += [_GpciFact(label=r.earlier_label, values=(r.earlier.gpci_work, r.earlier.gpci_pe, r.earlier.gpci_mp,
                                                            Decimal(r.earlier.cy)),
                            said=f"{words} {r.name} {r.state} {r.key} CY {r.earlier.cy} from to went change changed its")
                  for r in self.rows if r.asked and r.earlier is not None]
        ranges = tuple(v for p, _ in _COMPONENTS for v in self._range(p))
        ends = " ".join(self._at(p, v) for p, _ in _COMPONENTS for v in self._range(p))
        counts = tuple(Decimal(n) for n in re.findall(r"(\d+) others?", ends))
        by_state = self._by_state()
        tally = tuple(Decimal(n) for n in dict.fromkeys(by_state.values())) + (
            Decimal(len(by_state)), Decimal(sum(1 for n in by_state.values() if n == 1)))
        named = " ".join(f"{STATE_NAMES.get(st, st)} {st}" for st in by_state) + " " + " ".join(
            f"{r.place.locality} {r.name.strip().title()}" for r in self.rows)
        found.append(_GpciFact(label=self.label, values=ranges + counts + tally + (Decimal(len(self.rows)),
                                                                                     Decimal(self.rows[0].cy)),
                               said=f"{words} CY {self.rows[0].cy} payment {ends} other others states territories "
                                    f"most then one each {named}"))
        return tuple(found)

    def sources(self) -> tuple[Source, ...]:
        said = self.sentences() + self._row_sentences()      # a locality not said one by one is cited from its row
        return tuple(Source(label=fact.label, title=f"CMS GPCI file (Addendum E), CY {fact.label[5:9]}",
                            kind=GPCI_KIND, published="", url=RVU_FILES_URL,
                            text=_excerpt(next(s for s in said if fact.label in s), fact.label))
                     for fact in self.facts())


def gpci_summary(rows: tuple[GpciRow, ...], question: str = "") -> GpciSummary | None:
    return GpciSummary(rows=rows, counted=asks_locality_count(question),
                       fewest=bool(re.search(r"\b(?:fewest|least|fewer|one locality|single locality)\b", question,
                                             re.IGNORECASE))) if rows else None
