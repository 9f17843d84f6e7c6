"""The deterministic writer: an answer written from the decided facts alone, with no language model.

Order (STYLE: answer first): the figure, comparison, trend or total the question asks for (rows and computed
figures, with their labels); what the codes are (the family definition); how CMS valued them (code-cited
paragraphs in CMS's own words, responses and regulatory text before commenters); the proposed → final change
when the retrieved text states it. At most a few short quotes, no near-duplicates, one citation style, the
no-model notice once. Every line is written to pass the output guard; a line that would not is left out.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from typing import Iterator, Sequence

from carenav_core.chat.events import Source, WarningKind
from carenav_core.chat.evidence import Evidence, build_evidence
from carenav_core.chat.factors import (CONVERSION_FACTOR, FACTOR_KIND, GPCI_KIND, anesthesia_summary,
                                       asks_conversion_factor, asks_variant_gap, factor_sentences, gpci_summary,
                                       year_extreme_factor, biggest_step_factor)
from carenav_core.chat.figures import (LIMITING_OF_FEE, MAX_PLACES_COMPARED, MEASURED, NO_COST_SHARING,
                                       NOT_NATIONALLY_PRICED, UNPAID_STATUS, Figure,
                                       FigureKind,
                                       families_compared, left_out_reason, measured_fields, stated)
from carenav_core.chat.glossary import GLOSSARY_KIND
from carenav_core.chat.guard import check_sentence
from carenav_core.chat.indicators import INDICATOR_KIND
from carenav_core.chat.plan import (ASKS_DECISION, ASKS_RULE, COMMENTS, COUNT_WORDS, MOST_CHANGE, RULE_ITEM, Intent,
                                    QuestionPlan, Setting,
                                    asks_biggest_step, asks_when_moved, asks_which_year,
                                    listed)
from carenav_core.chat.prepared import Prepared
from carenav_core.chat.sentences import split_sentences
from carenav_core.chat.speakers import speakers
from carenav_core.codes.detect import detect
from carenav_core.codes.families import load_families
from carenav_core.pfs.pricer import DIAGNOSTIC_NAME
from carenav_core.pfs.rows import ConversionFactor, ValuationRow, newest_rows  # noqa: F401 (newest_rows: used here and by tests)

log = logging.getLogger(__name__)

NO_MODEL_NOTICE = "No language model wrote this answer: it restates the fee schedule data and the retrieved excerpts."
NOTHING_FOUND = "No retrieved excerpt or fee schedule row answers this question."
NO_COMMENTS = "The retrieved excerpts summarise no comment on this."
FIXED_SENTENCES = frozenset({NO_MODEL_NOTICE, NOTHING_FOUND, NO_COMMENTS})     # the product's own words, not claims
DEFINITION_KIND = "code family definition"
# Warnings that say the loaded data do not hold what was asked (a year, a modifier, another payer's amounts): the
# answer's prose says them first too, so an amount shown instead is never read as the asked one.
DATA_NOTE_KINDS = frozenset({WarningKind.YEAR_NOT_FOUND, WarningKind.MODIFIER_NOT_FOUND, WarningKind.NOT_IN_DATA,
                             WarningKind.WEAK_MATCH, WarningKind.COMPUTED})
_ASKS_WHY = re.compile(r"\bwhy\b|\bhow (?:did|does|do) CMS\b|\bbudget[- ]neutral", re.IGNORECASE)
# excerpts made by code, never quoted as rule text
NOT_RULE_TEXT = frozenset({DEFINITION_KIND, FACTOR_KIND, GPCI_KIND, INDICATOR_KIND, GLOSSARY_KIND})
COMMENTERS_HEADING = "What commenters said (CMS's summary of the public comments):"
CMS_DECIDED = "What CMS decided after the comments:"
# Words of CMS's reasoning about RVUs; a paragraph with none of them says nothing about valuation.
VALUATION_WORDS = re.compile(r"\b(?:work RVUs?|RVUs?|valu\w+|crosswalk\w*|practice expense|PE inputs?|"
                             r"direct PE|PE|intra-service|time|survey|RUC|payment rate|priced?|methodolog\w*|equivalent)\b", re.IGNORECASE)
_RESPONSE = re.compile(r"^\s*Response:\s*", re.IGNORECASE)
_COMMENT_MARK = re.compile(r"^\s*Comment:\s*", re.IGNORECASE)
# "services.12 We" -> "services. We"; never the decimals of "0.17 for"
_FOOTNOTE = re.compile(r"(?:(?<=[a-z,;)”\"])|(?<=[a-z)”\"]\.))\d{1,3}(?=\s|$)")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]{2,}")
_STOP = frozenset("what with from that this which have been were will would should could their there about "
                  "into under over more than does much other these those they them also such only how".split())
# Short function words _words keeps (the quote scoring was tuned with them); a decision must match more than these.
_FUNCTION_WORDS = frozenset("the and for are was can has had not its our may did who why all any but per each you "
                            "say said think comment comments commenter commenters".split())
# Words every paragraph of a PFS rule uses: they do not make a sentence about the question.
_GENERIC = frozenset("care management services service payment payments medicare code codes valued value values "
                     "valuation rule final proposed physician practitioner patient patients cms".split())


def _money(value: Decimal) -> str:
    return f"${value:,}"


def _code(row: ValuationRow, described: bool) -> str:
    """'G0556-26 (Adv prim care mgmt lvl 1)', or just the code."""
    code = row.code_with_modifier
    return f"{code} ({row.description})" if described and row.description else code


def _vintage(row: ValuationRow) -> str:
    return f"the CY{row.cy} proposed rule" if row.proposed else f"the CY{row.cy} final fee schedule"


def _rvu_clause(row: ValuationRow) -> str:
    parts = [f"work RVU {row.work_rvu}" if row.work_rvu is not None else "no work RVU"]
    if row.total_nonfac is not None:
        parts.append(f"a non-facility total of {row.total_nonfac} RVUs")
    if row.total_fac is not None:
        parts.append(f"a facility total of {row.total_fac} RVUs")
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


def _na_note(row: ValuationRow, where: str) -> str:
    """What the file's NA indicator of that setting's PE says of an amount stated for it ('' when none)."""
    if where == "non-facility" and row.nonfac_na == "NA":
        return " (the file marks its non-facility PE NA: rarely or never furnished outside a facility)"
    if where == "facility" and row.fac_na == "NA":
        return (" (an incident-to code: the file marks its facility PE NA, and it is not payable to physicians in a "
                "facility setting)" if row.pctc == "5" else
                " (the file marks its facility PE NA: rarely or never furnished in a facility)")
    return ""


def _payment_clause(row: ValuationRow, setting: Setting = Setting.BOTH,
                    dates: tuple[date, date] | None = None, qp: bool = False) -> str:
    if row.cf is None or (row.payment_nonfac is None and row.payment_fac is None):
        return f"no national payment amount is given (status {row.status}: {row.status_meaning})"
    # a year with two CFs by date ("CY2024 Jan 1-Mar 8"): which one, and the amounts at the other (the QP CF of 2026 is
    # answered by the conversion-factor table, not on every row, unless the question asks for a QP's amount); the days
    # of service asked, or a qualifying APM participant asked, lead with theirs
    periods = [paid_at for paid_at in row.other_payments() if qp or not _is_qp(paid_at[0].label)]
    cf, cf_label, nonfac, fac = row.cf, row.cf_label, row.payment_nonfac, row.payment_fac
    asked = next((p for p in periods if (dates and p[0].covers(*dates)) or (qp and _is_qp(p[0].label))), None)
    if asked:
        periods = [p for p in periods if p is not asked] + [
            (ConversionFactor(value=row.cf, label=row.cf_label, reference=""), row.payment_nonfac, row.payment_fac)]
        cf, cf_label, nonfac, fac = asked[0].value, asked[0].label, asked[1], asked[2]
    wanted = [("non-facility", nonfac, Setting.NON_FACILITY), ("facility", fac, Setting.FACILITY)]
    scope = f"{row.locality} (GPCI-adjusted)" if row.locality else "national"
    paid = [f"the {scope} {where} payment is {_money(amount)}{_na_note(row, where)}"
            for where, amount, kind in wanted if amount is not None and setting in (Setting.BOTH, kind)]
    which = cf_label if periods and cf_label else f"CY{row.cy}"
    said = f"at the {which} conversion factor of {_money(cf)} " + (" and ".join(paid) or "no payment is given")
    for cf, nonfac, fac in periods:
        other = [f"{_money(amount)} {where}" for where, amount, kind in (
            ("non-facility", nonfac, Setting.NON_FACILITY), ("facility", fac, Setting.FACILITY))
            if amount is not None and setting in (Setting.BOTH, kind)]
        if other:
            said += f" (at the {cf.label} conversion factor of {_money(cf.value)}: {' and '.join(other)})"
    return said


# The PFS global period codes (CMS PPRRVU file layout): the number of post-operative days, or what the letters mean.
GLOBAL_MEANINGS = {"000": "0 post-operative days", "010": "10 post-operative days", "090": "90 post-operative days",
                   "MMM": "maternity care (global period does not apply in the usual way)",
                   "XXX": "the global period concept does not apply",
                   "YYY": "the contractor sets the global period", "ZZZ": "code related to another service and "
                   "always included in the global period of the other service"}


def _parts_clause(row: ValuationRow, parts: frozenset[str], setting: Setting) -> str:
    said = []
    if "pe" in parts:
        pe = [f"{value} {where}" for where, value, kind in (("non-facility", row.pe_nonfac_rvu, Setting.NON_FACILITY),
                                                              ("facility", row.pe_fac_rvu, Setting.FACILITY))
              if value is not None and setting in (Setting.BOTH, kind)]
        if pe:
            said.append("practice expense (PE) RVU " + " and ".join(pe))
    if "mp" in parts and row.mp_rvu is not None:
        said.append(f"malpractice (MP) RVU {row.mp_rvu}")
    if "global" in parts and row.global_days:
        said.append(f"global period {row.global_days} ({GLOBAL_MEANINGS.get(row.global_days, 'as the file gives it')})")
    return ", ".join(said) + ", " if said else ""



def _is_qp(label: str) -> bool:
    """'CY2026 QP' (the qualifying APM participants' CF), not 'CY2026 non-QP'."""
    return label.endswith(" QP")


def row_sentence(row: ValuationRow, *, described: bool = True, setting: Setting = Setting.BOTH,
                 status: bool = False, parts: frozenset[str] = frozenset(),
                 dates: tuple[date, date] | None = None, qp: bool = False) -> str:
    """One plain sentence per row, ending with the row's label; with `status`, the row's PFS status first;
    with `parts` ("pe", "mp", "global"), those parts of the row too. A code with a status Medicare does not pay under
    the PFS (UNPAID_STATUS: 'Does Medicare pay for 98008?', status I) says so first and states no payment amount."""
    if row.status in UNPAID_STATUS:
        elsewhere = _other_schedule(row) if row.status in ("X", "E") else ""
        return (f"Under {_vintage(row)}, {_code(row, described)} has PFS status {row.status} ({row.status_meaning}), so "
                f"Medicare makes no separate payment for it under the physician fee schedule{elsewhere}; the file lists "
                f"{_parts_clause(row, parts, setting)}{_rvu_clause(row)} {row.label}.")
    if row.status in NOT_NATIONALLY_PRICED:
        return (f"Under {_vintage(row)}, {_code(row, described)} has PFS status {row.status} ({row.status_meaning}): "
                f"{PRICED_ELSEWHERE[row.status]}, so no fee schedule amount is stated; the file lists "
                f"{_parts_clause(row, parts, setting)}{_rvu_clause(row)} {row.label}.")
    meaning = CONDITIONAL.get(row.status, row.status_meaning)
    said = f"PFS status {row.status} ({meaning}), " if (status or row.status in CONDITIONAL) and row.status else ""
    return (f"Under {_vintage(row)}, {_code(row, described)} has {said}{_parts_clause(row, parts, setting)}"
            f"{_rvu_clause(row)}; {_payment_clause(row, setting, dates, qp)} {row.label}.")


def _other_schedule(row: ValuationRow) -> str:
    """Where Medicare pays a code the PFS excludes, by its code range (CMS's payment systems): clinical laboratory
    codes (CPT 80047-89398), ambulance (A0), durable equipment and supplies (E, K, L), Part B drugs (J)."""
    hint = _schedule_of(row.hcpcs)
    return f" ({row.hcpcs}{hint})" if hint else ""


# Statuses paid, but not at a national fee schedule amount (the row's RVUs are 0): how they are paid instead
PRICED_ELSEWHERE = {"C": "the Medicare Administrative Contractor prices it claim by claim",
                    "J": "anesthesia is paid as (base units + time units) times the locality's anesthesia conversion "
                         "factor, not by RVUs"}
# Statuses paid at the amount shown only under a condition: always said, in these words
CONDITIONAL = {"R": "restricted coverage: paid only in the circumstances Medicare's coverage rules allow",
               "T": "paid only when no other fee schedule service is billed for the patient that day; otherwise "
                    "bundled"}


def unpriced_sentence(unpriced: Sequence[str]) -> str:
    codes = ", ".join(unpriced)
    elsewhere = [f"{code}{hint}" for code in unpriced for hint in [_schedule_of(code)] if hint]
    return (f"No fee schedule valuation was found for {codes}, so no RVUs or payment are given for "
            f"{'it' if len(unpriced) == 1 else 'them'}" + (f"; {'; '.join(elsewhere)}" if elsewhere else "") + ".")


def _schedule_of(code: str) -> str:
    """' is a ... code: Medicare pays it under the ... fee schedule, not loaded here', by code range, or ''."""
    if code[:5].isdigit() and "80047" <= code <= "89398":
        return (" is a clinical laboratory code, which Medicare pays under the Clinical Laboratory Fee Schedule, not "
                "loaded here")
    if code.startswith("A0"):
        return " is an ambulance code, which Medicare pays under the ambulance fee schedule, not loaded here"
    if code[:1] in "EKL" and code[1:].isdigit():
        return (" is a durable medical equipment or supply code, which Medicare pays under the DMEPOS fee schedule, "
                "not loaded here")
    if code[:1] == "J" and code[1:].isdigit():
        return " is a drug code, which Medicare Part B pays at its average sales price, not loaded here"
    return ""


def passes_guard(sentence: str, evidence: Evidence) -> bool:
    """Would the output guard release `sentence` whole (as one sentence, with no reasons)?"""
    return split_sentences(sentence + "\n") == [sentence + "\n"] and not check_sentence(sentence, evidence)


# --- the asked figures ----------------------------------------------------------------------------

def _amount(figure: Figure, value: Decimal) -> str:
    """'$66.13', '$64,536.00' (thousands separated), or an RVU as it is."""
    return f"${value:,}" if figure.money else f"{value}"


def _signed(figure: Figure, value: Decimal, percent: Decimal | None) -> str:
    amount = f"{'+' if value >= 0 else '−'}{_amount(figure, abs(value))}"
    down = percent is not None and (percent < 0 or (percent == 0 and value < 0))    # −$0.01 is −0.0%, not +0.0%
    return amount + (f" ({'−' if down else '+'}{abs(percent)}%)" if percent is not None else "")


def _comparison(figure: Figure) -> str:
    first, second = figure.codes
    verb, what = ("pays", f"in the {figure.setting} setting") if figure.money else ("has", f"{figure.setting}s")
    if figure.counts and figure.money:      # at a volume: "1,000 × 99214 at the QP CF brings in $670.00 more ..."
        verb = "brings in"
    if figure.value == 0:
        return (f"{first} and {second} have the same {figure.setting} amount, "
                f"{_amount(figure, figure.inputs[0])} {figure.label}.")
    more = "more" if figure.value > 0 else "less" if figure.money else "more" if figure.value > 0 else "fewer"
    share = f", {abs(figure.percent)}% {more}" if figure.percent is not None else ""
    middle = (f"{verb} {_amount(figure, abs(figure.value))} {more} than {second} {what}" if figure.money
              else f"has {abs(figure.value)} {more} {what} than {second}")
    return (f"{first} {middle} ({_amount(figure, figure.inputs[0])} vs {_amount(figure, figure.inputs[1])}{share}) "
            f"{figure.label}.")


def _payment_words(figure: Figure) -> str:
    """'national non-facility payment', 'WA 02 Seattle (GPCI-adjusted) facility payment', or the RVU measured."""
    if not figure.money:
        return figure.setting
    return f"{figure.place} (GPCI-adjusted) {figure.setting} payment" if figure.place else \
        f"national {figure.setting} payment"


def _change(figure: Figure) -> str:
    years = re.findall(r"CY(\d{4})", figure.label)
    span = f"from CY{years[0]} to CY{years[-1]}" if len(years) >= 2 else ""
    stage = " (proposed)" if "NPRM" in figure.label else ""
    what = _payment_words(figure)
    return (f"{figure.codes[0]}'s {what} went {span}{stage} from {_amount(figure, figure.inputs[0])} "
            f"to {_amount(figure, figure.inputs[1])}, a change of {_signed(figure, figure.value, figure.percent)} "
            f"{figure.label}.")


def _total(figure: Figure) -> str:
    """'Billed together, 99497 and 2 × 99498 pay $243.16 in the non-facility setting ($86.84 + 2 × $78.16)'; one code
    billed several times: '3 × 99439 pay $151.32 in the non-facility setting (3 × $50.44)'."""
    counts = figure.counts or (1,) * len(figure.inputs)
    units = figure.each() or figure.inputs
    amounts = " + ".join(f"{c} × {_amount(figure, u)}" if c > 1 else _amount(figure, u) for c, u in zip(counts, units))
    what = f"pay {_amount(figure, figure.value)} in the {figure.setting} setting" if figure.money else \
        f"have {figure.value} {figure.setting}s"
    lead = "Billed together, " if len(figure.codes) > 1 else ""
    if not figure.together:     # alternatives of one family, or one code's years, added up because asked
        years = all(re.search(r" CY\d{4}$", c) for c in figure.codes)
        lead = "Added up over the years, " if years else "Added up (they are alternatives, not billed together), "
        what = what.replace("pay ", "come to ", 1)
    if figure.how:          # some codes left out of this setting's total (figures._payable_part)
        verb = "pay" if len(figure.codes) > 1 else "pays"
        parts = f" ({amounts})" if len(figure.inputs) > 1 else ""
        return (f"In the {figure.setting} setting only {' and '.join(figure.codes)} {verb} "
                f"{_amount(figure, figure.value)}{parts}; {figure.how} {figure.label}.")
    return f"{lead}{' and '.join(figure.codes)} {what} ({amounts}) {figure.label}."


def _setting_gap(figure: Figure) -> str:
    """'In CY2026, 99214's national non-facility payment is $51.11 more than its facility payment ($135.61 vs
    $84.50, 60.5% more) [computed: ...].'"""
    what = figure.setting.removeprefix("non-facility − facility ")
    year = re.search(r"CY(\d{4})", figure.label)
    where = f"{figure.place} (GPCI-adjusted) " if figure.place else ("national " if figure.money else "")
    more = "more" if figure.value >= 0 else "less"
    share = f", {abs(figure.percent)}% {more}" if figure.percent is not None else ""
    return (f"{'In CY' + year.group(1) + ', ' if year else ''}{figure.codes[0]}'s {where}non-facility {what} is "
            f"{_amount(figure, abs(figure.value))} {more} than its facility {what} ({_amount(figure, figure.inputs[0])} "
            f"vs {_amount(figure, figure.inputs[1])}{share}) {figure.label}.")


def _volume(figure: Figure) -> str:
    """'In CY2026, 1,200 × G0557 (100 a month × 12 months) bring in $64,536.00 at the national non-facility payment
    (1,200 × $53.78) [computed: ...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    stage = " (proposed)" if "NPRM" in figure.label else ""
    services = figure.counts[0]
    how = f" ({figure.how})" if figure.how else ""
    each = _amount(figure, figure.inputs[0])
    if figure.money:
        what = f"bring in ${figure.value:,} at the {_payment_words(figure)}"
    else:
        what = f"add up to {figure.value} {figure.setting}s"
    code = f"({figure.codes[0]})" if " + " in figure.codes[0] else figure.codes[0]
    if figure.how.startswith("one patient over"):       # each code its own count: the arithmetic is in `how`
        return (f"{'In CY' + year.group(1) + stage + ', ' if year else ''}{figure.codes[0]} ({figure.how}) {what} "
                f"{figure.label}.")
    return (f"{'In CY' + year.group(1) + stage + ', ' if year else ''}{services:,} × {code}{how} {what} "
            f"({services:,} × {each}) {figure.label}.")


def _ratio(figure: Figure) -> str:
    """'In CY2026, 27447's work RVU is 14.70 times 99213's (19.11 ÷ 1.30): 14.70 of 99213 equal one 27447 [...]'."""
    year = re.search(r"CY(\d{4})", figure.label)
    top, bottom = figure.codes
    what = _payment_words(figure)
    if figure.how == "across settings":     # a facility-only surgery against an office service
        return (f"{'In CY' + year.group(1) + ', ' if year else ''}{top}'s {_payment_words(figure)} (the file prices "
                f"it only in a facility) is {figure.value} times {bottom}'s national non-facility (office) payment "
                f"({_amount(figure, figure.inputs[0])} ÷ {_amount(figure, figure.inputs[1])}): {figure.value} of "
                f"{bottom} in an office equal one {top} {figure.label}.")
    if figure.how == "percent":     # "what percent of 27447 is 99213": 'is 4.9% of 27447's ($57.45 of $1,159.35)'
        return (f"{'In CY' + year.group(1) + ', ' if year else ''}{top}'s {what} is {figure.percent}% of {bottom}'s "
                f"({_amount(figure, figure.inputs[0])} of {_amount(figure, figure.inputs[1])}) {figure.label}.")
    return (f"{'In CY' + year.group(1) + ', ' if year else ''}{top}'s {what} is {figure.value} times {bottom}'s "
            f"({_amount(figure, figure.inputs[0])} ÷ {_amount(figure, figure.inputs[1])}): {figure.value} of "
            f"{bottom} equal one {top} {figure.label}.")


def _share(figure: Figure) -> str:
    """'In CY2026, practice expense is 49.3% of 99214's non-facility total RVUs (2.00 of 4.06), and so of its
    national non-facility payment [...]'."""
    year = re.search(r"CY(\d{4})", figure.label)
    setting = figure.setting.removesuffix(" total RVU")
    # nationally payment = total RVUs x CF, so the share of the RVUs is the share of the payment; a locality's GPCIs
    # weight the components apart
    payment = "" if figure.place else f", and so the same share of its national {setting} payment"
    return (f"{'In CY' + year.group(1) + ', ' if year else ''}{figure.how} is {figure.value}% of {figure.codes[0]}'s "
            f"{setting} total RVUs ({figure.inputs[0]} of {figure.inputs[1]}){payment} {figure.label}.")


def _stated_check(figure: Figure) -> str:
    """'The $92.03 given is $3.08 more than 99213's national non-facility payment in CY2025 ($92.03 vs $88.95, 3.5%
    more) [...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    given, amount = figure.inputs
    when = f" in CY{year.group(1)}" if year else ""
    if figure.value == 0:
        return (f"The ${given:,} given matches {figure.codes[0]}'s {_payment_words(figure)}{when} exactly "
                f"{figure.label}.")
    more = "more" if figure.value > 0 else "less"
    share = f", {abs(figure.percent)}% {more}" if figure.percent is not None else ""
    national = "" if figure.place else " (a locality's GPCIs, the setting or a payment adjustment move what is paid)"
    return (f"The ${given:,} given is {_money(abs(figure.value))} {more} than {figure.codes[0]}'s "
            f"{_payment_words(figure)}{when} (${given:,} vs {_money(amount)}{share}){national} {figure.label}.")


def _what_if_sentence(figure: Figure) -> str:
    """'In CY2026, at a conversion factor 10% lower ($30.0608), 99214's national non-facility payment would be $122.05
    instead of $135.61 (−$13.56) [...].'; another year's CF asked: 'at the CY2020 conversion factor ($36.0896, 8.1%
    higher)'."""
    year = re.search(r"CY(\d{4})", figure.label.split(", ")[-1])
    way = "lower" if figure.percent < 0 else "higher"
    other = re.search(r"at the (CY\d{4}(?: proposed)?) CF", figure.label)
    supposed = re.search(r"at a CF of (\$[\d.]+)", figure.label)
    at = f"at the {other.group(1)} conversion factor ({figure.how}, {abs(figure.percent)}% {way})" if other else \
        f"at a conversion factor of {figure.how} ({abs(figure.percent)}% {way} than the year's)" if supposed else \
        f"at a conversion factor {abs(figure.percent)}% {way} ({figure.how})"
    when = f"In CY{year.group(1)}, " if year else ""
    if other and "proposed" in other.group(1) and year:     # a later year estimated: that year's CF, these RVUs
        when = f"With the CY{year.group(1)} RVUs, "
    if figure.counts:           # at the volume asked: "600 × 99490 would bring in $38,490.00 ... instead of ..."
        return (f"{when}{at}, {figure.codes[0]} would bring in {_money(figure.inputs[1])} at the "
                f"{_payment_words(figure)} instead of {_money(figure.inputs[0])} "
                f"({_signed(figure, figure.value, None)}) {figure.label}.")
    return (f"{when}{at}, {figure.codes[0]}'s {_payment_words(figure)} would be {_money(figure.inputs[1])} instead of "
            f"{_money(figure.inputs[0])} ({_signed(figure, figure.value, None)}) {figure.label}.")


def _needed_sentence(figure: Figure) -> str:
    """'In CY2026, at 99213's national non-facility payment of $95.19, it takes 106 services to bring in $10,000
    (106 × $95.19 = $10,090.14; 105 bring in $9,994.95) [...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    target, amount, reached, short = figure.inputs
    return (f"{'In CY' + year.group(1) + ', ' if year else ''}at {figure.codes[0]}'s {_payment_words(figure)} of "
            f"{_money(amount)}, it takes {figure.value:,} services to bring in {_money(target)} ({figure.value:,} × "
            f"{_money(amount)} = {_money(reached)}; {figure.counts[1]:,} bring in {_money(short)}) {figure.label}.")


def _statistic_sentence(figure: Figure) -> str:
    """'In CY2026, the mean national non-facility payment of G0556, G0557 and G0558 is $62.46 [...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    return (f"{'In CY' + year.group(1) + ', ' if year else ''}the {figure.how} {_payment_words(figure)} of "
            f"{listed(list(figure.codes))} is {_amount(figure, figure.value)} "
            f"(of {', '.join(_amount(figure, a) for a in figure.inputs)}) {figure.label}.")


def _components_sentence(figure: Figure) -> str:
    """'In CY2026, 71046's professional component (71046-26, $10.02) and technical component (71046-TC, $23.05) add up
    to $33.07 in the national non-facility payment, the same as its global amount ($33.07) [...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    pc, tc, whole = figure.inputs
    gap = whole - figure.value
    against = "the same as its global amount" if gap == 0 else \
        (f"{_amount(figure, abs(gap))} {'less' if gap > 0 else 'more'} than its global amount")
    rounded = " (each amount is rounded on its own)" if 0 < abs(gap) <= Decimal("0.02") and figure.money else ""
    if figure.how and figure.percent is not None:      # the share of the global one component is, asked
        name = "professional" if figure.how == "26" else "technical"
        code, amount = (figure.codes[0], pc) if figure.how == "26" else (figure.codes[1], tc)
        return (f"{'In CY' + year.group(1) + ', ' if year else ''}{figure.codes[2]}'s {name} component ({code}, "
                f"{_amount(figure, amount)}) is {figure.percent}% of its global amount ({_amount(figure, whole)}) in "
                f"the {_payment_words(figure)}; its professional ({_amount(figure, pc)}) and technical "
                f"({_amount(figure, tc)}) components add up to {_amount(figure, figure.value)}{rounded} {figure.label}.")
    return (f"{'In CY' + year.group(1) + ', ' if year else ''}{figure.codes[2]}'s professional component "
            f"({figure.codes[0]}, {_amount(figure, pc)}) and technical component ({figure.codes[1]}, "
            f"{_amount(figure, tc)}) add up to {_amount(figure, figure.value)} in the {_payment_words(figure)}, "
            f"{against} ({_amount(figure, whole)}){rounded} {figure.label}.")


def _extreme_sentence(figure: Figure) -> str:
    """'In CY2026, 99213 pays the most in the non-facility setting in CA 72 San Jose...: $108.30 of 109 localities
    priced, $17.24 (18.9%) more than the national $91.06 [...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    amount, national = figure.inputs
    more = "more" if figure.value >= 0 else "less"
    where = figure.place if ";" not in figure.place else "each of " + listed(figure.place.split("; "))
    share = f" ({abs(figure.percent)}%)" if figure.percent is not None else ""
    return (f"{'In CY' + year.group(1) + ', ' if year else ''}of the {figure.counts[0]} payment localities, "
            f"{figure.codes[0]}'s {figure.setting} payment is {'highest' if figure.how == 'most' else 'lowest'} in "
            f"{where}: {_money(amount)}, {_money(abs(figure.value))}{share} {more} than the national "
            f"{_money(national)} {figure.label}.")


def _coinsurance_sentence(figure: Figure) -> str:
    """'In CY2026, of 99214's national non-facility payment of $135.61 (the allowed amount), Medicare pays 80%, $108.49,
    and the patient's 20% coinsurance is $27.12, once the Part B deductible is met [...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    allowed, patient = figure.inputs
    if figure.how.endswith("preventive"):
        code = figure.codes[0].split("-")[0]
        return (f"{'In CY' + year.group(1) + ', ' if year else ''}of {figure.codes[0]}'s {_payment_words(figure)} of "
                f"{_money(allowed)} (the allowed amount), Medicare pays 100%, {_money(figure.value)}: as "
                f"{NO_COST_SHARING.get(code, 'a preventive service')} it has no coinsurance and no Part B deductible, "
                f"so the patient pays nothing when the practitioner accepts assignment (CMS, Medicare Preventive "
                f"Services) {figure.label}.")
    if " screening (" in figure.how:
        ours, theirs = figure.how.split()[0], figure.how.split()[2]
        return (f"{'In CY' + year.group(1) + ', ' if year else ''}of {figure.codes[0]}'s {_payment_words(figure)} of "
                f"{_money(allowed)} (the allowed amount), when a screening colonoscopy or sigmoidoscopy removes a polyp "
                f"or tissue and is billed as this code, Medicare pays {ours}, {_money(figure.value)}, and the patient's "
                f"{theirs} coinsurance is {_money(patient)}, with no Part B deductible (Consolidated Appropriations "
                f"Act, 2021, section 122: 15% in 2023-2026, 10% in 2027-2029, none from 2030) {figure.label}.")
    return (f"{'In CY' + year.group(1) + ', ' if year else ''}of {figure.codes[0]}'s {_payment_words(figure)} of "
            f"{_money(allowed)} (the allowed amount), Medicare pays 80%, {_money(figure.value)}, and the patient's 20% "
            f"coinsurance is {_money(patient)}, once the yearly Part B deductible is met (some preventive services "
            f"have no coinsurance) {figure.label}.")


def _count_sentence(figure: Figure) -> str:
    """'In CY2026, 2 of the 4 asked codes (99202, 99203, 99204, 99205) pay over $150 at the national non-facility
    payment: 99204 ($177.36) and 99205 ($229.36) [...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    op, asked = figure.how.split(" of ", 1)
    op, limit = op.rsplit(" ", 1)
    found = "none does" if not figure.inputs else \
        listed([f"{c} ({_amount(figure, a)})" for c, a in zip(figure.codes, figure.inputs)])
    verb = "pays" if figure.value == 1 else "pay"
    return (f"{'In CY' + year.group(1) + ', ' if year else ''}{figure.value} of the {figure.counts[0]} asked codes "
            f"({asked}) {verb} {op} {limit} at the {_payment_words(figure)}: {found} {figure.label}.")


def _rate_sentence(figure: Figure) -> str:
    """'In CY2026, 99490's national non-facility payment of $66.13 is $198.39 an hour at its 20 minutes (descriptor
    “Chrnc care mgmt staff 1st 20”; more time on the service lowers it) [computed: 99490 per hour, ...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    unit = "an hour" if "per hour" in figure.label else "a minute"
    amount, minutes = figure.inputs
    time = f"the {minutes} minutes the question gives" if figure.how == "the question gives" else \
        f"its {minutes} minutes ({figure.how})"
    return (f"{'In CY' + year.group(1) + ', ' if year else ''}{figure.codes[0]}'s {_payment_words(figure)} of "
            f"{_amount(figure, amount)} is {_amount(figure, figure.value)} {unit} at {time}; more time on the service "
            f"lowers it {figure.label}.")


def _practitioner_sentence(figure: Figure) -> str:
    """'Billed by a nurse practitioner in CY2026, 99214's national non-facility payment of $135.61 is paid at 85%:
    $115.27 (Social Security Act section 1833(a)(1)(O)) [computed: ...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    who, law = figure.how.split(" | ")[0].rsplit(" ", 1)
    if figure.counts:       # a volume: 'Billed by a nurse practitioner in CY2026, 1,000 × 99214 (...) bring in ...'
        volume = figure.how.split(" | ")[1] if " | " in figure.how else ""
        services = figure.counts[0]
        return (f"Billed by a {who}{' in CY' + year.group(1) if year else ''}, {services:,} × {figure.codes[0]}"
                f"{' (' + volume + ')' if volume else ''} bring in {_money(figure.value)} at {figure.percent:.0f}% of "
                f"the {_payment_words(figure)} ({services:,} × {_money(figure.inputs[1])}, {figure.percent:.0f}% of "
                f"{_money(figure.inputs[0])}; Social Security Act section {law}) {figure.label}.")
    by = f"Furnished in whole or in part by a {who} (modifier {'CQ' if 'physical' in who else 'CO'})" \
        if law == "1834(v)" else f"Billed by a {who}"
    if " | one day " in figure.how:     # the day's units under the multiple-procedure rule, at the share
        units = figure.how.split(" | one day ", 1)[1]
        return (f"{by}{' in CY' + year.group(1) if year else ''}, {units} on one day, paid "
                f"{_money(figure.inputs[0])} at the {_payment_words(figure)} under the multiple-procedure rule, are "
                f"paid at {figure.percent:.0f}%: {_money(figure.value)} (Social Security Act section {law}) "
                f"{figure.label}.")
    return (f"{by}{' in CY' + year.group(1) if year else ''}, {figure.codes[0]}'s "
            f"{_payment_words(figure)} of {_money(figure.inputs[0])} is paid at {figure.percent:.0f}%: "
            f"{_money(figure.value)} (Social Security Act section {law}) {figure.label}.")


def _bilateral_sentence(figure: Figure) -> str:
    """'Billed bilaterally (modifier 50) in CY2026, 27447's national facility payment of $1,159.35 is paid at 150%:
    $1,739.03, under its bilateral surgery indicator 1 [computed: ...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    indicator = figure.how.split()[-1]
    return (f"Billed bilaterally (modifier 50){' in CY' + year.group(1) if year else ''}, {figure.codes[0]}'s "
            f"{_payment_words(figure)} of {_money(figure.inputs[0])} is paid at {figure.percent:.0f}%: "
            f"{_money(figure.value)}, under its bilateral surgery indicator {indicator} {figure.label}.")


def _second_sentence(figure: Figure) -> str:
    """'Billed as a second procedure the same day (modifier 51) in CY2023, 29881's national facility payment of $553.38
    is paid at 50%: $276.69, under its multiple procedure indicator 2 [computed: ...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    indicator = figure.how.split()[-1]
    proviso = (" when the first procedure is not an endoscopy of its family (with one, it is paid its amount less its "
               "ENDO BASE code's)") if indicator == "3" else ""
    return (f"Billed as a second procedure the same day (modifier 51){' in CY' + year.group(1) if year else ''}, "
            f"{figure.codes[0]}'s {_payment_words(figure)} of {_money(figure.inputs[0])} is paid at "
            f"{figure.percent:.0f}%: {_money(figure.value)}, under its multiple procedure indicator {indicator}"
            f"{proviso} {figure.label}.")


def _nonpar_sentence(figure: Figure) -> str:
    """'A non-participating physician is paid 95% of the fee schedule amount: in CY2026, 99214's national non-facility
    payment of $135.61 becomes $128.83 (Social Security Act section 1848(a)(3)) [computed: ...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    return (f"A non-participating physician is paid {figure.percent:.0f}% of the fee schedule amount: "
            f"{'in CY' + year.group(1) + ', ' if year else ''}{figure.codes[0]}'s {_payment_words(figure)} of "
            f"{_money(figure.inputs[0])} becomes {_money(figure.value)} (Social Security Act section 1848(a)(3)) "
            f"{figure.label}.")


def _limiting_sentence(figure: Figure) -> str:
    """'The limiting charge, the most a non-participating physician may charge the patient on a claim it does not
    accept assignment for, is 115% of the non-participating amount: in CY2026, 99214's national non-facility payment
    of $135.61 at 95% is $128.83, and 115% of that (109.25% of the fee, from the unrounded amount) is
    $148.15 (Social Security Act section 1848(g)(2)(C)) [...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    return (f"The limiting charge, the most a non-participating physician may charge the patient on a claim it does "
            f"not accept assignment for, is {figure.percent:.0f}% of the non-participating amount: "
            f"{'in CY' + year.group(1) + ', ' if year else ''}{figure.codes[0]}'s {_payment_words(figure)} of "
            f"{_money(figure.inputs[0])} at 95% is {_money(figure.inputs[1])}, and {figure.percent:.0f}% of that "
            f"({LIMITING_OF_FEE}% of the fee, from the unrounded amount) is {_money(figure.value)} (Social Security Act section 1848(g)(2)(C)) {figure.label}.")


def _assistant_sentence(figure: Figure) -> str:
    """'Billed by an assistant at surgery (modifier 80, 81 or 82) in CY2026, 27447's national facility payment of
    $1,159.35 is paid at 16%: $185.50, under its assistant-at-surgery indicator 2 [computed: ...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    modifier, indicator = figure.how.split()[0], figure.how.split()[-1]
    who = "a non-physician practitioner assisting at surgery (modifier AS)" if modifier == "AS" else \
        "an assistant at surgery (modifier 80, 81 or 82)"
    proviso = " and only with documentation of medical necessity" if indicator == "0" else ""
    return (f"Billed by {who}{' in CY' + year.group(1) if year else ''}, {figure.codes[0]}'s "
            f"{_payment_words(figure)} of {_money(figure.inputs[0])} is paid at {figure.percent.normalize():f}%: "
            f"{_money(figure.value)}, under its assistant-at-surgery indicator {indicator}{proviso} {figure.label}.")


def base_amount_sentences(prepared: Prepared) -> list[str]:
    """"What is 45380's endoscopic base and what does it pay?": the base code's own amounts, from its row of the year
    the indicator was read in (fetched as context when the question did not name it)."""
    said = []
    for fact in prepared.indicators:
        if fact.meaning.key != "endo_base" or not fact.meaning.value or fact.meaning.value in prepared.plan.focus_codes:
            continue
        row = next((r for r in prepared.rows if r.hcpcs == fact.meaning.value and r.cy == fact.cy and not r.mod
                    and not r.locality and not r.proposed), None)
        if row is None or row.payment_nonfac is None or row.payment_fac is None:
            continue
        said.append(f"{fact.code}'s endoscopic base code, {row.hcpcs} ({row.description}), pays "
                    f"${row.payment_nonfac:,} non-facility and ${row.payment_fac:,} facility nationally in CY{row.cy} "
                    f"{row.label}.")
    return list(dict.fromkeys(said))


def setting_gap_reasons(figures: Sequence[Figure], rows: Sequence[ValuationRow], question: str) -> list[str]:
    """"Why is 99213's facility rate lower?": the two settings' amounts differ by their practice expense RVUs alone
    (work and malpractice RVUs are one value), said from the row each setting gap was computed from."""
    if not _ASKS_WHY.search(question):
        return []
    said = []
    for figure in figures:
        if figure.kind is not FigureKind.SETTING_GAP:
            continue
        row = next((r for r in rows if r.label == figure.rows[0] and r.code_with_modifier == figure.codes[0] and
                    r.locality == figure.place), None)
        if row is None or row.pe_nonfac_rvu is None or row.pe_fac_rvu is None:
            continue
        said.append(f"The two settings differ in practice expense only: {figure.codes[0]}'s non-facility PE RVU is "
                    f"{row.pe_nonfac_rvu} against a facility PE RVU of {row.pe_fac_rvu}, while its work RVU "
                    f"({row.work_rvu}) and malpractice RVU ({row.mp_rvu}) are the same in both settings {row.label}.")
    return said


def _periop_sentence(figure: Figure) -> str:
    """'Billed with modifier 54 (surgical care only) in CY2026, 27130's national facility payment of $1,162.02 is paid
    at 79% (pre-operative 10% + intra-operative 69% of the RVU file's split 10% / 69% / 21%): $918.00 [computed: ...].'
    or 'In CY2025, 66984's pre-operative care is 10% of its national facility payment of $521.75 (...): $52.18 [...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    name, parts, split = figure.how.split(" | ")
    basis = f"{parts} of the RVU file's split {split}"
    if name.startswith("modifier"):
        return (f"Billed with {name}{' in CY' + year.group(1) if year else ''}, {figure.codes[0]}'s "
                f"{_payment_words(figure)} of {_money(figure.inputs[0])} is paid at {figure.percent.normalize():f}% "
                f"({basis}): {_money(figure.value)} {figure.label}.")
    return (f"{'In CY' + year.group(1) + ', ' if year else ''}{figure.codes[0]}'s {name} is "
            f"{figure.percent.normalize():f}% of its global surgical package ({basis}): {_money(figure.value)} of its "
            f"{_payment_words(figure)} of {_money(figure.inputs[0])} {figure.label}.")


def _sequestration_sentence(figure: Figure) -> str:
    """'In CY2026, with the 2% sequestration reduction (on claims from July 1, 2022; Budget Control Act of 2011, as
    extended), Medicare's 80% of 99214's national non-facility payment, $108.49, becomes $106.32 [computed: ...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    return (f"{'In CY' + year.group(1) + ', ' if year else ''}with the 2% sequestration reduction (in force on claims "
            f"from July 1, 2022; Budget Control Act of 2011, as extended), Medicare's "
            f"{figure.how.rsplit(' ', 1)[-1]} of {figure.codes[0]}'s "
            f"{_payment_words(figure)}, {_money(figure.inputs[0])}, becomes {_money(figure.value)} {figure.label}.")


def _co_surgery_sentence(figure: Figure) -> str:
    """'Billed by two co-surgeons (modifier 62) in CY2026, 22612's national facility payment of $1,600.00 is paid at
    62.5% to each: $1,000.00, under its co-surgery indicator 2 [computed: ...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    indicator = figure.how.split()[-1]
    proviso = " (with supporting documentation)" if indicator == "1" else ""
    return (f"Billed by two co-surgeons (modifier 62){' in CY' + year.group(1) if year else ''}, {figure.codes[0]}'s "
            f"{_payment_words(figure)} of {_money(figure.inputs[0])} is paid at {figure.percent.normalize():f}% to "
            f"each{proviso}: {_money(figure.value)}, under its co-surgery indicator {indicator} {figure.label}.")


_YES_NO = re.compile(r"\s*(?:can|may|could|is|are|will|would)\b", re.IGNORECASE)
_MULTIPLE_GROUP = re.compile(r"^(\S+) (full|50%|half PE|not applied \S+|none \S+|less-base(?:-50%)? \S+ \S+|"
                             r"tc-cut \S+ \S+ \S+ \S+) (\S+) ind (\S+)$")


def _multiple_sentence(figure: Figure) -> str:
    """'Billed on one day in CY2026, 11042 ($132.60, in full) and 17000 at 50% ($33.24 of $66.47) add up to $165.84 at
    the national non-facility payment under the multiple-procedure rule (the highest-paid procedure at 100%, each
    other at 50%: indicator 2), against $199.07 without it [computed: ...].'"""
    year = re.search(r"CY(\d{4})", figure.label)
    body, without = figure.how.split(" | without ")
    parts, rules = [], []
    for amount, n, group in zip(figure.inputs, figure.counts, body.split("; ")):
        name, rule, got, value = _MULTIPLE_GROUP.match(group).groups()
        many, each = (f"{n} × {name}", " each") if n > 1 else (name, "")
        if rule == "full":
            parts.append(f"{many} ({_money(amount)}{each}, in full)")
        elif rule == "50%":
            parts.append(f"{many} at 50% (${Decimal(got):,}{each} of {_money(amount)})")
            rules.append(f"the highest-paid procedure at 100%, each other at 50%: indicator {value}")
        elif rule.startswith("less-base"):
            _, base, base_amount = rule.split()
            halved = rule.startswith("less-base-50%")
            parts.append(f"{many}, the family's base, at $0.00 (not paid separately beside a member of its family)"
                         if name == base else
                         f"{many} at ${Decimal(got):,}{each} ({_money(amount)} less its endoscopic base {base}'s "
                         f"${Decimal(base_amount):,}{', then at 50%' if halved else ''})")
            rules.append("endoscopies of one family (indicator 3): the highest in full, each other less the base "
                         "code's amount")
            if halved:
                rules.append("the highest-paid procedure at 100%, each other at 50%")
        elif rule == "half PE":
            parts.append(f"{many} at half {'their' if n > 1 else 'its'} practice expense (${Decimal(got):,}{each} of "
                         f"{_money(amount)})")
            rules.append(f"the unit with the highest practice expense in full, 50% of the practice expense of each "
                         f"other unit: indicator {value}")
        elif rule.startswith("tc-cut"):
            _, tc, pc, tc_rate, pc_rate = rule.split()
            cut = [f"${Decimal(tc):,} of its technical component"] if Decimal(tc) else []
            cut += [f"${Decimal(pc):,} of its professional component"] if Decimal(pc) else []
            parts.append(f"{many} at ${Decimal(got):,}{each} ({_money(amount)} less {' and '.join(cut)})")
            rules.append(f"{DIAGNOSTIC_NAME.get(value, 'diagnostic services')}: the technical component of each "
                         f"after the highest at {(100 - Decimal(tc_rate)).normalize():f}%" +
                         (f", the professional component of each after the highest at "
                          f"{(100 - Decimal(pc_rate)).normalize():f}%"
                          if Decimal(pc_rate) else "") + f": indicator {value}")
        elif rule.startswith("not applied"):
            parts.append(f"{many} ({_money(amount)}{each}; its indicator {value} reduction of technical components "
                         f"is not applied here)")
        else:
            parts.append(f"{many} ({_money(amount)}{each}; indicator {value}: no reduction)")
    return (f"Billed on one day{' in CY' + year.group(1) if year else ''}, {listed(parts)} add up to "
            f"{_money(figure.value)} at the {_payment_words(figure)} under the multiple-procedure rule "
            f"({'; '.join(dict.fromkeys(rules))}), against ${Decimal(without.split()[0]):,} without it {figure.label}.")


_SAYS = {FigureKind.DIFFERENCE: _comparison, FigureKind.CHANGE: _change, FigureKind.TOTAL: _total,
         FigureKind.SETTING_GAP: _setting_gap, FigureKind.VOLUME: _volume, FigureKind.RATIO: _ratio,
         FigureKind.SHARE: _share, FigureKind.STATED: _stated_check, FigureKind.WHAT_IF: _what_if_sentence,
         FigureKind.STATISTIC: _statistic_sentence, FigureKind.RATE: _rate_sentence,
         FigureKind.COMPONENTS: _components_sentence, FigureKind.EXTREME: _extreme_sentence,
         FigureKind.COINSURANCE: _coinsurance_sentence, FigureKind.COUNT: _count_sentence,
         FigureKind.BILATERAL: _bilateral_sentence, FigureKind.SECOND: _second_sentence, FigureKind.NEEDED: _needed_sentence, FigureKind.PRACTITIONER: _practitioner_sentence,
         FigureKind.NONPAR: _nonpar_sentence, FigureKind.LIMITING: _limiting_sentence,
         FigureKind.ASSISTANT: _assistant_sentence, FigureKind.MULTIPLE: _multiple_sentence,
         FigureKind.CO_SURGERY: _co_surgery_sentence, FigureKind.SEQUESTRATION: _sequestration_sentence,
         FigureKind.PERIOP: _periop_sentence}


def _unchanged(figure: Figure, steady: bool) -> str:
    """A span that ends where it began: unchanged in every year, or back after changes in between."""
    years = re.findall(r"CY(\d{4})", figure.label)
    what = _payment_words(figure)
    amount = _amount(figure, figure.inputs[0])
    if steady:
        return (f"{figure.codes[0]}'s {what} did not change from CY{years[0]} to CY{years[-1]}: it is {amount} in "
                f"every year {figure.label}.")
    return (f"{figure.codes[0]}'s {what} is {amount} in CY{years[0]} and again in CY{years[-1]}, with changes in "
            f"between {figure.label}.")


def _whole_spans(figures: Sequence[Figure]) -> dict[tuple[str, str, str], Figure]:
    """Each code's, setting's and place's whole-span change (compute_figures lists it before the steps)."""
    spans: dict[tuple[str, str, str], Figure] = {}
    for figure in figures:
        if figure.kind is FigureKind.CHANGE:
            spans.setdefault((figure.codes[0], figure.setting, figure.place), figure)
    return spans


def figure_sentences(figures: Sequence[Figure]) -> list[str]:
    """One sentence per computed figure; of a trend's changes only the whole span (the first → last
    change of each code and setting; year-by-year steps are in the figures table). A span whose every
    year-to-year step is zero says the value did not change ("Has the work RVU of 99487 ever changed?")."""
    spans = _whole_spans(figures)
    steady: dict[tuple[str, str, str], bool] = {}
    for figure in figures:
        if figure.kind is FigureKind.CHANGE and "NPRM" not in figure.label:   # a proposed step changes no final value
            key = (figure.codes[0], figure.setting, figure.place)
            steady[key] = steady.get(key, True) and figure.value == 0
    said = []
    for f in figures:
        key = (f.codes[0], f.setting, f.place) if f.kind is FigureKind.CHANGE else None
        if f.kind is FigureKind.DRIVER:
            continue
        if key is None:
            said.append(_SAYS[f.kind](f))
        elif spans.get(key) is f:
            years = re.findall(r"CY(\d{4})", f.label)
            said.append(_unchanged(f, bool(steady.get(key))) if f.value == 0 and "NPRM" not in f.label and
                        len(set(years)) >= 2 else _change(f))
    return said


def driver_sentences(figures: Sequence[Figure]) -> list[str]:
    """Why a payment changed, per change computed: its total RVUs and the conversion factor before and after
    (payment = total RVUs x conversion factor), e.g. "99490's non-facility total RVUs went from 1.87 to 1.98
    (+5.9%) ... and the conversion factor from $32.3465 to $33.4009 (+3.3%)"."""
    grouped: dict[tuple[str, str], list[Figure]] = {}
    for figure in figures:
        if figure.kind is FigureKind.DRIVER:
            grouped.setdefault((figure.codes[0], figure.label), []).append(figure)
    said = []
    for (code, label), parts in grouped.items():
        years = re.findall(r"CY(\d{4})", label)
        span = f"From CY{years[0]} to CY{years[-1]}" if len(years) >= 2 else "Across the change"

        def moved(f: Figure) -> str:
            first, last = (f"${v}" if f.dollars else f"{v}" for v in f.inputs)
            percent = "unchanged" if f.value == 0 else "new" if f.percent is None else \
                f"{'+' if f.percent > 0 else '−'}{abs(f.percent)}%"
            return f"{'the ' if f.dollars else ''}{f.setting} from {first} to {last} ({percent})"
        first, *rest = [moved(f) for f in parts]
        said.append(f"{span} (payment = total RVUs × conversion factor), {code}'s "
                    f"{first.replace(' from ', ' went from ', 1)}"
                    + (", " if len(rest) > 1 else " and " if rest else "") + listed(rest) + f" {label}.")
    return said


def year_line(row: ValuationRow, setting: Setting, measure: str = "payment") -> str:
    """'CY2024 (final): 99490 pays $62.58 non-facility and $49.60 facility [PFS CY2024 RVU24C].', or for a
    question about RVUs 'CY2024 (final): 99490 has work RVU 1.00 [PFS CY2024 RVU24C].'"""
    stage = "proposed" if row.proposed else "final"
    if measure == "work_rvu":
        return f"CY{row.cy} ({stage}): {_code(row, False)} has {_rvu_clause(row).split(', ')[0]} {row.label}."
    if measure == "mp_rvu":
        return f"CY{row.cy} ({stage}): {_code(row, False)} has malpractice RVU {row.mp_rvu} {row.label}."
    if measure in ("total_rvu", "pe_rvu"):
        what, fields = ("total", (row.total_nonfac, row.total_fac)) if measure == "total_rvu" else \
            ("PE", (row.pe_nonfac_rvu, row.pe_fac_rvu))
        values = [f"a {where} {what} of {value} RVUs" for where, value, kind in
                  zip(("non-facility", "facility"), fields, (Setting.NON_FACILITY, Setting.FACILITY))
                  if value is not None and setting in (Setting.BOTH, kind)]
        return f"CY{row.cy} ({stage}): {_code(row, False)} has {' and '.join(values) or f'no {what} RVUs'} {row.label}."
    if row.status in UNPAID_STATUS | NOT_NATIONALLY_PRICED:     # "98008 pays $47.23" is no payment of status I
        return (f"CY{row.cy} ({stage}): {_code(row, False)} has status {row.status} ({row.status_meaning}): no "
                f"national fee schedule payment {row.label}.")
    # a setting the file marks NA says so, as the row's own sentence does (its change is not computed: `stated`)
    paid = [f"{_money(amount)} {where}{_na_note(row, where)}" for where, amount, kind in (
        ("non-facility", row.payment_nonfac, Setting.NON_FACILITY), ("facility", row.payment_fac, Setting.FACILITY))
        if amount is not None and setting in (Setting.BOTH, kind)]
    return f"CY{row.cy} ({stage}): {_code(row, False)} pays {' and '.join(paid) or 'no national amount'} {row.label}."


_PROPOSED_RVU = (
    re.compile(r"propos\w*\s+(?:a|the)?\s*work RVU\s+(?:for|of)\s+(?:HCPCS\s+|CPT\s+)?(?:code\s+)?(?P<code>[A-Z0-9]{5})"
               r"\s+(?:of|at|to be)\s+(?P<value>\d+\.\d+)"),
    re.compile(r"propos\w*\s+(?:a|the)?\s*work RVU\s+of\s+(?P<value>\d+\.\d+)\s+for\s+(?:HCPCS\s+|CPT\s+)?"
               r"(?:code\s+)?(?P<code>[A-Z0-9]{5})"))


def proposed_to_final(rows: Sequence[ValuationRow], sources: Sequence[Source], codes: Sequence[str]) -> list[str]:
    """'CMS proposed a work RVU of 0.17 for G0556 [89 FR 97898 ¶3]; the CY2025 final fee schedule sets 0.25
    [PFS CY2025 RVU25D].' — when a retrieved paragraph states the proposed value and the final row differs."""
    said = []
    for source in sources:
        for pattern in _PROPOSED_RVU:
            for m in pattern.finditer(source.text):
                code, proposed = m.group("code"), Decimal(m.group("value"))
                year = int(source.published[:4]) + 1 if source.published[:4].isdigit() else None
                final = next((r for r in rows if r.hcpcs == code and not r.proposed and not r.mod and r.cy == year), None)
                if code in codes and final and final.work_rvu is not None and final.work_rvu != proposed and \
                        not any(f"for {code} [" in line for line in said):     # one statement a code
                    said.append(f"CMS proposed a work RVU of {proposed} for {code} {source.label}; the CY{final.cy} "
                                f"final fee schedule sets {final.work_rvu} {final.label}.")
    return list(dict.fromkeys(said))


def _focus_rows(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[ValuationRow]:
    """Rows the answer states: the asked rows without modifier (a code priced only with modifiers keeps
    them); for a trend every asked year, otherwise the newest final and proposed row of each code."""
    focus = [r for r in rows if r.in_focus] or list(rows)
    with_base = {r.hcpcs for r in focus if not r.mod}
    focus = [r for r in focus if not r.mod or r.hcpcs not in with_base]
    if not plan.named_codes:    # a family's codes Medicare pays first ("the prolonged service codes": G2212, not 99417)
        focus.sort(key=lambda r: r.status in UNPAID_STATUS)
    return focus if Intent.TREND in plan.intents else newest_rows(focus)


# "Which APCM level pays the most?": the answer names the code, not only the pairwise differences.
_SUPERLATIVE = re.compile(
    r"\b(?:pays?|paid|payment|valued|worth|RVUs?)\s+(?:the\s+)?"
    r"(?:(?P<top>most|highest|largest)|(?P<bottom>least|lowest))\b|"
    r"(?<!\bat )\b(?:(?P<top2>highest|largest|biggest|most(?! recent| common| likely))|"
    r"(?P<bottom2>lowest|smallest|least))\s+(?:\w+\s+){0,2}?"
    r"(?:payments?|pay|rates?|RVUs?|amounts?|values?|valuation)\b|"
    r"\b(?P<top3>best[- ]paid|most expensive|(?:highest|best|top)[- ]pa(?:ying|id))\b|"
    r"\b(?P<bottom3>cheapest|least expensive|(?:lowest|worst)[- ]pa(?:ying|id))\b", re.IGNORECASE)


_WHICH = re.compile(r"\b(?:which|what (?:code|level|service)s?)\b|"
                    r"\bwhat(?:'s|\s+is|\s+are)\s+the\s+(?:highest|lowest|best|worst|top|most|least)\b", re.IGNORECASE)
_WHICH_MORE = re.compile(r"\bwhich\b.{0,40}?\b(?:(?:pays?|is|are|gets?|has|have)\s+)?(?:(?P<more>more|higher|greater|"
                         r"bigger|larger|better|best)|(?P<less>less|lower|smaller|cheaper))\b(?!\s+than)", re.IGNORECASE)


# "What are the top 3 highest paid CCM codes?", "Rank the BHI codes by 2026 payment"
_RANKING = re.compile(r"\btop\s+(?P<n>\d{1,2}|two|three|four|five)\b|\brank(?:ed|ing|s)?\b|"
                      r"\b(?:order|sort|list)(?:ed)?\b.{0,60}?\bby\b|\b(?:highest|lowest|cheapest)\s+first\b",
                      re.IGNORECASE)
_LOWEST_FIRST = re.compile(r"\b(?:lowest|least|smallest|cheapest)[\s-]+(?:\w+\s+)?first\b|\bascending\b|"
                           r"\b(?:low|lowest)\s+to\s+(?:high|highest)\b", re.IGNORECASE)


def ranking_sentences(rows: Sequence[ValuationRow], plan: QuestionPlan, question: str) -> list[str]:
    """For a question asking to rank the asked codes (or their top N), per setting asked: the codes' newest final rows
    of one year, highest payment (or work RVU) first, each amount with its row's label."""
    m = _RANKING.search(question)
    focus = newest_rows([r for r in rows if r.in_focus and not r.proposed and not r.mod])
    years = {r.cy for r in focus}
    # "top 3" asks a cut of three or more; "rank", "sort by" two codes too
    if not m or len({r.hcpcs for r in focus}) < (3 if m.group("n") else 2) or len(years) != 1:
        return []
    low_first = bool(_LOWEST_FIRST.search(question))
    count = m.group("n")
    top = int(COUNT_WORDS.get(count.lower(), count)) if count else len(focus)
    (year,) = years
    fields = MEASURED["work_rvu"] if plan.measure == "work_rvu" else \
        measured_fields(replace(plan, measure="payment"))
    said = []
    for what, field in fields:
        ordered = sorted((r for r in focus if stated(r, field) is not None), key=lambda r: stated(r, field),
                         reverse=not low_first)
        if not ordered:
            continue
        ranked = ordered[:top]
        ranked += [r for r in ordered[top:] if stated(r, field) == stated(ranked[-1], field)]   # a tie at the cut
        money = field != "work_rvu"
        listed_ = ", ".join(f"{_code(r, False)} {_money(stated(r, field)) if money else stated(r, field)} {r.label}"
                            for r in ranked)
        left = [r for r in focus if stated(r, field) is None and getattr(r, field) is not None]
        out = f" ({listed([_code(r, False) for r in left])} left out: {left_out_reason(left, field)})" if left else ""
        said.append(f"Ranked by CY{year} {what}{' payment' if money else ''}, {'lowest' if low_first else 'highest'} "
                    f"first: {listed_}{out}.")
    return said


_BY_CHANGE = re.compile(r"\b(?:rank|order|sort)\w*\b.{0,80}?\bby\s+(?:the\s+|their\s+|its\s+)?(?:(?:percent(?:age)?|%|dollar)"
                        r"\s+)?(?P<what>change|increase|decrease|growth|cut|drop|decline|rise)", re.IGNORECASE)


PLACES_LISTED = 10         # a place ranking of more places names the three at each end


def place_ranking_sentences(rows: Sequence[ValuationRow], plan: QuestionPlan, question: str = "") -> list[str]:
    """"Compare 99214 in Manhattan, Alaska, rest of Florida and Puerto Rico": four places or more (a state's every
    locality too) get, per asked code and setting asked, the newest final year's locality payments highest first, each
    with its row's label (two or three places are compared pairwise by the figures instead). A state of two or three
    localities whose ranking is asked ("Which Washington locality pays the least?", "sort ... ascending") is ranked
    too, lowest first when asked."""
    asked = bool(_SUPERLATIVE.search(question) or _RANKING.search(question) or _WHICH_MORE.search(question))
    low_first = asked and bool(_LOWEST_FIRST.search(question) or re.search(
        r"\b(?:least|lowest|cheapest|less|lower|smallest)\b", question, re.IGNORECASE))
    fewest = 1 if asked else MAX_PLACES_COMPARED
    said = []
    local = [r for r in rows if r.in_focus and r.locality and not r.proposed and not r.mod]
    for code in plan.focus_codes:
        mine = [r for r in local if r.hcpcs == code]
        if not mine:
            continue
        year = max(r.cy for r in mine)
        by_place = {r.locality: r for r in mine if r.cy == year}
        if len(by_place) <= fewest:
            continue
        for setting, field in measured_fields(replace(plan, measure="payment")):
            priced = sorted((r for r in by_place.values() if stated(r, field) is not None),
                            key=lambda r: stated(r, field), reverse=not low_first)
            if len(priced) <= fewest:
                continue
            shown = priced if len(priced) <= PLACES_LISTED else priced[:3] + priced[-3:]
            items = [f"{r.locality} {_money(stated(r, field))} {r.label}" for r in shown]
            if len(priced) > PLACES_LISTED:
                items.insert(3, "… (the others between them in the table) …")
            said.append(f"In CY{year}, {code}'s {setting} payment in the places asked, "
                        f"{'lowest' if low_first else 'highest'} first: {', '.join(items)}.")
    return said


def change_ranking_sentences(figures: Sequence[Figure], question: str) -> list[str]:
    """"Rank 99221, 99222 and 99223 by percent change since 2022": per setting, each code's change over the widest span
    computed (national, final), ordered by its percent (a decrease asked: most negative first), each with its label."""
    m = _BY_CHANGE.search(question)
    if not m:
        return []
    down = m.group("what").lower() in ("decrease", "cut", "drop", "decline")
    widest: dict[tuple[str, str], Figure] = {}
    for f in figures:
        years = [int(y) for y in re.findall(r"CY(\d{4})", f.label)]
        if f.kind is not FigureKind.CHANGE or f.place or "NPRM" in f.label or len(years) != 2 or f.percent is None:
            continue
        key = (f.codes[0], f.setting)
        if key not in widest or years[1] - years[0] > _span(widest[key]):
            widest[key] = f
    said = []
    for setting in dict.fromkeys(s for _, s in widest):
        ranked = sorted((f for (_, s), f in widest.items() if s == setting), key=lambda f: f.percent, reverse=not down)
        if len(ranked) < 2:
            continue
        years = re.findall(r"CY(\d{4})", ranked[0].label)
        listed_ = ", ".join(f"{f.codes[0]} {_signed(f, f.value, f.percent)} {f.label}" for f in ranked)
        said.append(f"Ranked by percent change of the {_payment_words(ranked[0])} from CY{years[0]} to CY{years[1]}, "
                    f"{'lowest' if down else 'highest'} first: {listed_}.")
    return said


def _span(figure: Figure) -> int:
    years = [int(y) for y in re.findall(r"CY(\d{4})", figure.label)]
    return years[1] - years[0] if len(years) == 2 else 0


_DOWN = ("decrease", "drop", "decline", "cut", "fell", "dropped", "declined", "lost", "lose", "loses", "shed")


def family_addons(rows: Sequence[ValuationRow], plan: QuestionPlan) -> frozenset[str]:
    """The members of another kind (families.toml `ranked_apart`: G2211, an add-on to a visit) that a family question
    brings in without naming them, when at least two other codes are there: "which office visit code rose most" ranks
    the visits. (A family's own add-on units, 99439 among the CCM codes, stay in its rankings.)"""
    apart = {c for f in load_families() if f.key in plan.families for c in f.ranked_apart}
    addons = {r.hcpcs for r in rows if r.in_focus and r.hcpcs in apart and r.hcpcs not in plan.named_codes
              and r.hcpcs in plan.family_codes}
    bases = {r.hcpcs for r in rows if r.in_focus and r.hcpcs not in addons}
    return frozenset(addons) if len(bases) >= 2 else frozenset()


def _yearly_steps(figures: Sequence[Figure]) -> dict[tuple[str, str, str], list[Figure]]:
    """Per code, setting and place, the final year-to-year CHANGE figures (one year apart), in order."""
    steps: dict[tuple[str, str, str], list[Figure]] = {}
    for f in figures:
        years = re.findall(r"CY(\d{4})", f.label)
        if f.kind is FigureKind.CHANGE and "NPRM" not in f.label and len(years) == 2 and \
                int(years[1]) - int(years[0]) == 1:
            steps.setdefault((f.codes[0], f.setting, f.place), []).append(f)
    return steps


def biggest_step_sentences(figures: Sequence[Figure], question: str) -> list[str]:
    """"In which year did 99214 rise the most?": per code and setting, the year-to-year step with the largest rise (or
    fall), in percent (in dollars when asked so), with its change label; none that moved that way is said."""
    way = asks_biggest_step(question)
    if not way:
        return []
    dollars = bool(re.search(r"\bin (?:dollars?|\$)|\bdollar (?:amount|terms)\b", question, re.IGNORECASE))
    said = []
    for series in _yearly_steps(figures).values():
        by = (lambda f: f.value) if dollars or any(f.percent is None for f in series) else (lambda f: f.percent)
        moved = [f for f in series if (by(f) < 0 if way == "down" else by(f) > 0)]
        if not moved:
            continue
        best = (min if way == "down" else max)(moved, key=by)
        a, b = re.findall(r"CY(\d{4})", best.label)
        said.append(f"{best.codes[0]}'s {_payment_words(best)} {'fell' if way == 'down' else 'rose'} the most "
                    f"{'in dollars' if dollars else 'in percent'} from CY{a} to CY{b}: "
                    f"{_signed(best, best.value, best.percent)} {best.label}.")
    return said


def when_moved_sentences(figures: Sequence[Figure], question: str) -> list[str]:
    """"When was 99214 cut?": per code and setting, the year-to-year steps that moved the way asked, each with its
    own change label; none that did is said."""
    way = asks_when_moved(question)
    if not way:
        return []
    said = []
    for series in _yearly_steps(figures).values():
        moved = [f for f in series if (f.value < 0 if way == "down" else f.value > 0)]
        first, verb = series[0], "fell" if way == "down" else "rose"
        if not moved:
            said.append(f"In no year asked did {first.codes[0]}'s {_payment_words(first)} "
                        f"{'fall' if way == 'down' else 'rise'} from the year before "
                        + " ".join(f.label for f in series) + ".")
            continue
        spans = [re.findall(r"CY(\d{4})", f.label) for f in moved]
        each = "; ".join(f"from CY{a} to CY{b}, {_signed(f, f.value, f.percent)} {f.label}"
                         for f, (a, b) in zip(moved, spans))
        said.append(f"{first.codes[0]}'s {_payment_words(first)} {verb} {each}.")
    return said


def year_extreme_sentences(rows: Sequence[ValuationRow], plan: QuestionPlan, question: str) -> list[str]:
    """"In which year from 2020 to 2026 did 99214 pay the most?": per asked code and setting, the final year (of
    three or more asked) with the highest (or lowest) amount, with that year's row label; a tie names every year."""
    end = asks_which_year(question)
    if not end or Intent.TREND not in plan.intents:
        return []
    top = end == "most"
    said = []
    fields = MEASURED["work_rvu"] if plan.measure == "work_rvu" else \
        measured_fields(replace(plan, measure="payment"))
    for code in plan.focus_codes:
        finals = [r for r in rows if r.in_focus and r.hcpcs == code and not r.proposed and not r.mod]
        if len({r.cy for r in finals}) < 3:
            continue
        for what, field in fields:
            priced = [r for r in finals if stated(r, field) is not None]
            if len(priced) < 3:
                continue
            end = (max if top else min)(stated(r, field) for r in priced)
            best = [r for r in priced if stated(r, field) == end]
            money = field != "work_rvu"
            where = f"{best[0].locality} (GPCI-adjusted) " if best[0].locality else ("national " if money else "")
            amount = _money(end) if money else str(end)
            years = listed([f"CY{r.cy}" for r in best])
            said.append(f"Of the years {'asked' if plan.years or plan.since else 'on file'}, {code}'s "
                        f"{where}{what}{' payment' if money else ''} was "
                        f"{'highest' if top else 'lowest'} in {years}: {amount} "
                        + " ".join(r.label for r in best) + ".")
    return said


def most_change_sentences(figures: Sequence[Figure], question: str, addons: frozenset[str] = frozenset()
                          ) -> list[str]:
    """Of several codes' whole-span changes, per setting: the code whose change is the largest in percent (up, or
    down when the question asks for a drop), citing that change's label; a tie names none. `addons` (family_addons)
    are left out of the choice, and said to be."""
    m = MOST_CHANGE.search(question)
    if not m:
        return []
    word = (m.group("way") or m.group("verb") or m.group("verb2") or m.group("way2") or "").lower()
    down = any(word.startswith(w[:4]) for w in _DOWN) or word in ("fall", "go down", "went down")
    # "the biggest percent change", "changed the most": either way, ranked by size; "the smallest increase": the least
    either = word.startswith("chang")
    least = bool(re.search(r"\b(?:smallest|least)\b", m.group(0), re.IGNORECASE))
    spans = {key: f for key, f in _whole_spans(figures).items() if f.percent is not None and "NPRM" not in f.label
             and f.codes[0] not in addons}
    # (the add-ons are not named: a sentence names only the codes its label cites)
    left = " (add-on codes of another kind, billed only with another service, left out)" if addons else ""
    said = []
    for setting in dict.fromkeys(key[1] for key in spans):
        mine = [f for key, f in spans.items() if key[1] == setting]
        codes = list(dict.fromkeys(f.codes[0] for f in mine))
        if len(codes) < 2:
            continue
        # "in dollars" (or RVUs) asks the amount of the change; otherwise its percent
        amount = bool(re.search(r"\bin (?:dollars?|\$|absolute terms|RVUs?)\b|\bdollar (?:amount|terms)\b", question,
                                re.IGNORECASE))
        by = (lambda f: f.value) if amount else (lambda f: f.percent)
        most = ("less" if least else "more") if len(codes) == 2 else ("the least" if least else "the most")
        # (the codes are named by their figures' own sentences: a sentence names only the codes its label cites)
        of = ("Of the two codes asked" if len(codes) == 2 else "Of the codes asked") + left
        measure = ("in dollars" if mine[0].money else "in RVUs") if amount else "in percent"
        if either:                  # a change either way, ranked by its size
            best = (min if least else max)(mine, key=lambda f: abs(by(f)))
            if sum(abs(by(f)) == abs(by(best)) for f in mine) > 1:
                continue            # a tie names no code
            said.append(f"{of}, {best.codes[0]}'s {_payment_words(best)} changed {most} {measure}: "
                        f"{_signed(best, best.value, best.percent)} {best.label}.")
            continue
        # "the smallest increase": of the codes that moved the way asked, the least (none moved so: as below)
        moved = [f for f in mine if (by(f) < 0 if down else by(f) > 0)] if least else []
        mine = moved or mine
        # the biggest drop is the lowest change, the smallest drop the highest (of the drops); rises the other way
        best = ((max if down else min) if moved else (min if down else max))(mine, key=by)
        if sum(by(f) == by(best) for f in mine) > 1:
            continue            # a tie names no code
        if (best.percent < 0) != down or best.percent == 0:     # no code moved the way asked: say so, and the nearest
            moved = "fell" if down else "rose"
            said.append(f"{of}, no {_payment_words(best)} {moved}; {best.codes[0]}'s "
                        f"{'rose' if down else 'fell'} {'less' if len(codes) == 2 else 'the least'}: "
                        f"{_signed(best, best.value, best.percent)} {best.label}.")
            continue
        said.append(f"{of}, {best.codes[0]}'s {_payment_words(best)} {'fell' if down else 'rose'} "
                    f"{most} {measure}: {_signed(best, best.value, best.percent)} {best.label}.")
    return said


def extreme_sentences(rows: Sequence[ValuationRow], plan: QuestionPlan, question: str) -> list[str]:
    """For a question asking which of several codes pays (or has) the most or least: per setting, the code
    with the highest (lowest) amount among the asked codes' newest final rows of one year, with that row's label."""
    m = _SUPERLATIVE.search(question)
    if m and not (_WHICH.search(question) or Intent.COMPARE in plan.intents):
        m = None                    # "What is the most recent payment for 99490 and 99491?" asks no ranking
    focus = newest_rows([r for r in rows if r.in_focus and not r.proposed])
    years = {r.cy for r in focus}
    # "Which pays more: 20605, 20610 or 20611?": a comparative over three or more codes asks which is highest
    comparative = _WHICH_MORE.search(question) if not m and len({r.hcpcs for r in focus}) >= 3 and \
        not (plan.bundles or plan.threshold) else None
    if not (m or comparative) or len({r.hcpcs for r in focus}) < 2 or len(years) != 1:
        return []
    top = bool(m.group("top") or m.group("top2") or m.group("top3")) if m else not comparative.group("less")
    (year,) = years
    said = []
    for where, field, kind in (("non-facility", "payment_nonfac", Setting.NON_FACILITY),
                               ("facility", "payment_fac", Setting.FACILITY)):
        priced = [r for r in focus if stated(r, field) is not None]
        if plan.measure == "work_rvu":
            where, field, priced = "work RVU", "work_rvu", [r for r in focus if r.work_rvu is not None]
        if len(priced) < 2 or plan.setting not in (Setting.BOTH, kind):
            continue
        best = (max if top else min)(priced, key=lambda r: stated(r, field))
        if sum(stated(r, field) == stated(best, field) for r in priced) > 1:
            continue                        # a tie names no single code
        codes = listed([_code(r, False) for r in priced])
        amount = getattr(best, field)
        scope = f" ({best.locality}, GPCI-adjusted)" if best.locality and field != "work_rvu" else ""
        said.append(f"Of {codes}, {_code(best, False)} has the {'highest' if top else 'lowest'} {where} "
                    + (f"payment{scope} in CY{year}, {_money(amount)}" if field != "work_rvu"
                       else f"in CY{year}, {amount}") + f" {best.label}.")
        if field == "work_rvu":
            break
    return said


# --- what the codes are, and how CMS valued them ----------------------------------------------------

def _clean(text: str) -> str:
    """One quotable sentence: no "Response:" prefix, no footnote numbers, brackets as parentheses."""
    text = _COMMENT_MARK.sub("", _RESPONSE.sub("", re.sub(r"\s+", " ", text).strip()))
    text = _FOOTNOTE.sub("", text)
    if text.count("(") > text.count(")"):         # "(see Table 23 and sections II.G.2.b" cut by the splitter
        text = text[:text.rfind("(")].rstrip(" ,;")
    return text.replace("[", "(").replace("]", ")").rstrip(".!?;: ").strip()


def _words(text: str) -> set[str]:
    """The words of `text` that say something, lower case; an acronym's plural also as the acronym ("RHCs": rhcs,
    rhc), so "RHC" in a question matches "RHCs" in the rule."""
    words = {w.lower() for w in _WORD.findall(text)}
    words |= {m.group(1).lower() for m in _ACRONYM.finditer(text) if m.group(2)}
    return words - _STOP


_CONNECTORS = frozenset("of and for the & in".split())
_ACRONYM = re.compile(r"\b([A-Z]{3,6})(s?)\b")


# Who writes the rules, not what they are about: "Why did CMS ..." does not ask about "care management services".
_AUTHORS = frozenset("cms hhs ama pfs cfr".split())


def acronyms(text: str) -> set[str]:
    """The acronyms written in `text` (not the agencies' names), lower case, singular and plural ("RHCs": rhc,
    rhcs)."""
    return {form for m in _ACRONYM.finditer(text) if m.group(1).lower() not in _AUTHORS
            for form in (m.group(1).lower(), m.group(1).lower() + "s")}


def initialisms(text: str) -> set[str]:
    """The acronyms a run of 3-5 words would have, as _words writes them, singular and plural: the rule text
    says "RHCs" where an analyst writes "rural health clinics", or the reverse. Connectors inside a run are
    skipped ("Department of Health and Human Services": DHHS).

    >>> {"rhc", "rhcs", "fqhcs"} <= initialisms("Can rural health clinics or federally qualified health centers bill?")
    True
    """
    words = re.findall(r"[A-Za-z][A-Za-z-]*|&", text)
    found = set()
    for start, first in enumerate(words):
        if first.lower() in _CONNECTORS:
            continue
        letters = ""
        for word in words[start:start + 8]:
            if word.lower() in _CONNECTORS:
                continue
            letters += word[0].lower()
            if 3 <= len(letters) <= 5:
                found |= {letters, letters + "s"}
            if len(letters) == 5:
                break
    return found - _STOP


def _near_duplicate(words: set[str], chosen: list[set[str]]) -> bool:
    return any(len(words & other) / max(1, len(words | other)) > 0.6 for other in chosen)


@dataclass(frozen=True, kw_only=True)
class _Candidate:
    score: float
    position: int
    text: str
    source: Source
    commenters: bool = False


_CMS_VOICE = re.compile(r"\bwe (?:are (?:finalizing|increasing|decreasing|adopting|maintaining)|finalized|proposed|"
                        r"believe|agree)\b", re.IGNORECASE)
# How a value was arrived at: a reference code, a multiplier or unit count, a recommendation or survey.
_BASIS = re.compile(r"\b(?:crosswalk\w*|based (?:the \w+ )?on|equivalent|multipl\w+|divided|units? of|"
                    r"RUC[- ]recommend\w*|survey\w*|recommended|reference code|comparable to|minutes)\b", re.IGNORECASE)
# A rule's procedural boilerplate answers no analyst's question, so it is not quoted: waivers of notice and
# comment, good cause, effective dates, the statutes every rule recites.
_BOILERPLATE = re.compile(r"\b(?:good cause|waive\w* (?:the |such |these )?(?:notice|requirements?)|notice and comment "
                          r"(?:requirements?|procedures?)|delayed effective date|do not make substantive changes|"
                          r"Paperwork Reduction Act|Regulatory Flexibility Act|Congressional Review Act)\b",
                          re.IGNORECASE)
# ... unless the question asks about the procedure itself ("Did CMS waive notice and comment?")
_ASKS_PROCEDURE = re.compile(r"\b(?:waiv\w*|good cause|notice and comment|effective date|procedur\w*|Paperwork|"
                             r"Regulatory Flexibility|Congressional Review)\b", re.IGNORECASE)
# What a correction corrected, for a question asking it ("What did the correction notice fix?")
_ASKS_CORRECTIONS = re.compile(r"\b(?:correction\w*|corrected|corrects|correcting|fix|fixes|errors?|errata|"
                               r"erratum|typo\w*)\b", re.IGNORECASE)
_ERROR_TOLD = re.compile(r"\b(?:inadvertently|(?:typographical|technical) errors?|incorrect(?:ly)?|"
                         r"should have (?:read|been|stated)|we (?:are )?correct(?:ing|ed)?)\b", re.IGNORECASE)
# a correction's summary of one error, by where it was: "On page 97767, we inadvertently made a typographical error"
_ERROR_PLACED = re.compile(r"(?:On|In) pages? \d")
# a footnote printed as its own paragraph: "228 U.S. Department of Health and Human Services, Request for ..."
_FOOTNOTE_ENTRY = re.compile(r"\d{1,3} [A-Z]")
_RVU_VALUE = re.compile(r"\bwork RVUs? (?:of|for|to)\b|\b\d+\.\d{2}\b")


def _basis(text: str, codes: set[str], valuation: bool, named: bool) -> float:
    """How much a sentence says about the basis of a value: the code(s) an asked code was built from (a code
    other than the asked ones, in a sentence that names an asked one), the method words (crosswalk,
    multiplied, RUC-recommended, ...), a stated RVU."""
    if not valuation:
        return 0.0
    others = set(re.findall(r"\b(?:\d{4}[0-9FTU]|[A-Z]\d{4})\b", text)) - codes if named else set()
    return 2.0 * min(2, len(others)) + 2.0 * bool(_BASIS.search(text)) + 1.0 * bool(_RVU_VALUE.search(text))


# An entry of a list of codes ("( 13 ) 99495 and 99496 (codes for transitional care management services)"), as the
# telehealth lists print them: it names codes and says nothing of their value or rules. (A numbered code descriptor,
# "(2) G0023 Principal Illness Navigation services by ...", says what the code is, and stays quotable.)
_CODE_LIST_ITEM = re.compile(r"(?:\(\s*\d+\s*\)|\+\+?)\s*[A-Z0-9]{5}\b[^()]*\(codes? for\b")


_DECIDED = re.compile(r"\bwe are finaliz|\bwe (?:have )?finalized\b|\bafter consideration of (?:the )?public comments\b",
                      re.IGNORECASE)
_PROPOSED_ONLY = re.compile(r"\bwe (?:had )?proposed\b|\bwe are proposing\b", re.IGNORECASE)
# A sentence that recounts an earlier rule ("In the CY 2021 PFS final rule (85 FR 84639), we finalized ...", "For CY
# 2015 (79 FR 67715 through 67730), we ...") is background: what the quoting rule itself did answers first.
_EARLIER_RULE = re.compile(r"^(?:In|For|Beginning (?:in|with)|Since|Starting (?:in|with))\s+(?:the\s+)?CY\s*(\d{4})\b")


def _candidates(sources: Sequence[Source], terms: Terms, codes: set[str], evidence: Evidence,
                want: re.Pattern[str], commenters: bool = False, subject: frozenset[str] = frozenset()
                ) -> list[_Candidate]:
    """Quotable sentences, best first: the question's own words count twice (a family's name once), named
    codes three times, CMS's voice and, for valuation, the basis of the value (`_basis`). CMS's sentences only,
    or with `commenters`, only the commenters' sentences CMS summarised (never one for the other). With a
    `subject` (the codes of the part of the question that asks), only those codes count as asked, and a sentence
    whose first code is one of them gains 4."""
    found = []
    every, own = (terms.asked | terms.family) - _GENERIC, terms.asked - terms.family - _GENERIC
    family = terms.family | {f"{word}s" for word in terms.family}      # "APCMs" is the family's acronym too
    if subject:         # the other asked codes are not what this part of the question is about
        others = {c.lower() for c in codes - subject}
        every, own = every - others, own - others
    for rank, source in enumerate(sources):
        if source.kind in NOT_RULE_TEXT:
            continue
        for position, piece, theirs in speakers(source):
            text = _clean(piece)
            if len(text.split()) < 8 or len(text) > 400 or not want.search(text) or theirs != commenters or \
                    _CODE_LIST_ITEM.search(text) or _FOOTNOTE_ENTRY.match(text):
                continue
            named = codes & set(re.findall(r"\b[A-Z0-9]{5}\b", text))
            words = _words(text)
            # "RHCs" in the rule answers "rural health clinics" in the question, and the reverse (a family's
            # names and acronyms are in the registry already)
            spelled = (acronyms(text) & terms.spelled) - family
            if terms.acronyms:
                spelled |= (initialisms(text) & terms.acronyms) - family
            specific = (every & words) | spelled
            if len(specific & terms.family) > 1:    # a family's name written out is one match, not one a word
                specific = (specific - terms.family) | {min(specific & terms.family)}
            earlier = _EARLIER_RULE.search(text)
            earlier = bool(earlier and source.rule.startswith("CY ") and earlier.group(1) < source.rule[3:7])
            # how an earlier rule valued a code is not the basis of the quoting rule's value
            basis = 0.0 if earlier else _basis(text, codes, want is VALUATION_WORDS, bool(named))
            if not terms.procedure and _BOILERPLATE.search(text):
                continue
            told = 3 * bool(terms.corrections and _ERROR_TOLD.search(text))
            told += 2 * bool(terms.corrections and _ERROR_PLACED.match(text))    # "On page 97767, we inadvertently"
            # what CMS finalized, in words of the question ("... to permit RHCs and FQHCs ..."), answers a rule
            # question even when it names no code and repeats one of its words
            # (for a valuation question, a decision on the values: "we are finalizing the proposed values for the
            # 10 CCM/CCCM/PCM codes" answers "What did the CY2022 rule do for CCM valuation?" naming no code)
            # (a shared "for" or "and" is no match: a decision must share a word that says something)
            content = specific - _FUNCTION_WORDS
            asked = subject or terms.written
            decided = bool(_DECIDED.search(text))
            # "What did CMS finalize for G2211?": a decision about something else (an MSSP assignment provision
            # sharing "for" and "and") is not what was asked
            if terms.decision_asked and decided and not (named & asked or content):
                continue
            decision = source.kind == "final rule" and not commenters and decided and not earlier
            if not (named or len(specific) >= 2 or (specific and (basis or told)) or (content and decision)) or \
                    not passes_guard(_quote(text, source, commenters), evidence):
                continue
            voice = 1.5 if _CMS_VOICE.search(text) else 0
            # in a final rule, what CMS decided answers before what it had proposed
            if source.kind == "final rule" and not commenters and not earlier:
                voice += 2 if decided else -1 if _PROPOSED_ONLY.search(text) else 0
                # "What did the CY2022 rule do for ...?": what that rule decided answers it, when it is about what
                # was asked (names an asked code, or shares a word that says something)
                if decided and (named & asked or content):
                    voice += 4 if terms.decision_asked else 2 if terms.rule_asked else 0
            # A code written in the question weighs 3; members of a named family (the question did not write
            # them) count once, so a list of family codes does not outrank the question's own words.
            coded = 3 * len(named & asked) + min(1, len(named - asked))
            first = min(named, key=text.find) if named else None          # the asked code the sentence names first
            about = 4 if first in subject else 0
            score = len(specific) + len(own & words) + len(spelled) + coded + voice + basis + about + told
            score -= 3 if earlier else 0
            # "What is the hybrid payment RFI about?": the sentences of the RFI's own section answer it
            score += 2 if terms.item and RULE_ITEM.search(source.heading) else 0
            found.append(_Candidate(score=score - 0.1 * rank, position=position, text=text, source=source,
                                    commenters=commenters))
    if terms.rules and terms.rule_asked:    # "... in the CY 2022 rule": that rule answers, when it says anything
        asked = [c for c in found if any(rule in c.source.title for rule in terms.rules)]
        found = asked or found
    elif terms.rules:                       # "... in 2025": that year's rule first
        found = [replace(c, score=c.score + 2) if any(rule in c.source.title for rule in terms.rules) else c
                 for c in found]
    return sorted(found, key=lambda c: (-c.score, c.position))


def _quote(text: str, source: Source, commenters: bool = False) -> str:
    when = source.rule
    if commenters:
        return f"Commenters, as CMS summarised them ({when}): “{text}” {source.label}."
    who = "CMS wrote" if source.kind in ("final rule", "proposed rule", "correction") else f"The {source.kind} says"
    return f"{who} ({when}): “{text}” {source.label}."


def _covering(candidates: list[_Candidate], codes: Sequence[str], limit: int, taken: list[set[str]]
              ) -> list[_Candidate]:
    """"How did CMS value the APCM codes?": each asked code's best sentence naming it, in the codes' order (a family's
    three levels, not three sentences on one of them), then the rest in rank order, up to `limit`."""
    first: list[_Candidate] = []
    seen = list(taken)
    for code in codes:
        naming = re.compile(rf"\b{code}\b")
        mine = [c for c in candidates if naming.search(c.text) and c not in first]
        mine.sort(key=lambda c: not _METHOD.search(c.text))      # how it was valued before that it was finalized
        pick = next((c for c in mine if not _near_duplicate(_words(c.text), seen)), None)
        if pick is not None:
            first.append(pick)
            seen.append(_words(pick.text))
    return _chosen(first + [c for c in candidates if c not in first], limit, taken)


# A sentence saying how a value was set: a crosswalk, a share of another code, a number of RVUs or minutes
_METHOD = re.compile(r"\bcrosswalk\w*|\bbased on\b|\b\d+/\d+\b|\bpercent\b|%|\b\d+\.\d+\b|\b(?:work )?RVUs? of\b|"
                     r"\bminutes\b|\brelative (?:increase|to)\b", re.IGNORECASE)


def _chosen(candidates: list[_Candidate], limit: int, taken: list[set[str]]) -> list[_Candidate]:
    chosen = []
    for candidate in candidates:
        words = _words(candidate.text)
        if len(chosen) == limit or _near_duplicate(words, taken):
            continue
        taken.append(words)
        chosen.append(candidate)
    return chosen


# A decision that points back at the proposal without saying it ("we are finalizing our proposal as proposed")
# ("finalizing our proposal to add APCM services as ..." says what it finalized: not such a decision)
_AS_PROPOSED = re.compile(r"\bfinalizing (?:(?:our|this|these|the) proposals?(?!\s+(?:to|that|for|of|on)\b)|"
                          r"(?:the|these) proposed (?:values|\w+ RVUs?)|(?:them|it|this|these) as proposed\b)",
                          re.IGNORECASE)


# what was proposed, also as "... and proposed the recommended work values"
_PROPOSAL = re.compile(_PROPOSED_ONLY.pattern + r"|\b(?:and|CMS) (?:had )?proposed\b", re.IGNORECASE)


def _with_proposal(chosen: list[_Candidate], candidates: list[_Candidate], limit: int) -> list[_Candidate]:
    """`chosen` with, right after a decision that finalizes "our proposal as proposed", what the same section of the
    rule says was proposed (its best-scored "we proposed ..." sentence), when none is chosen yet: the decision alone
    does not say what was decided."""
    for n, decided in enumerate(chosen[:limit]):
        if not (_DECIDED.search(decided.text) and _AS_PROPOSED.search(decided.text)):
            continue
        def same_section(c: _Candidate) -> bool:      # the proposal the decision refers to is in its section
            return (c.source.title, c.source.heading) == (decided.source.title, decided.source.heading)
        if any(_PROPOSAL.search(c.text) and same_section(c) for c in chosen):
            return chosen
        proposal = next((c for c in candidates if same_section(c) and _PROPOSAL.search(c.text)
                         and not _DECIDED.search(c.text) and c not in chosen), None)
        if proposal is None:
            return chosen
        paired = chosen[:n + 1] + [proposal] + chosen[n + 1:]
        while len(paired) > max(limit, 2):      # the lowest-ranked other sentence makes room for the pair
            paired.remove(next(c for c in reversed(paired) if c is not decided and c is not proposal))
        return paired
    return chosen


# CMS deciding after the comments: "After consideration of the comments, we are finalizing the proposed values ..."
_DECISION = re.compile(r"\bafter (?:consideration|considering|reviewing) (?:of )?(?:the )?(?:public )?comments\b|"
                       r"\bwe are (?:not )?finalizing\b", re.IGNORECASE)


_PLACE = re.compile(r"\[(\d+) FR (\d+) ¶(\d+)\]|\[FR Doc\. ([\d-]+) ¶(\d+)\]")


def _place(label: str) -> tuple[str, str, int] | None:
    """Where a paragraph sits in its document: ('page', volume, page * 100 + paragraph) for '[89 FR 97899 ¶10]',
    ('paragraph', document, paragraph) for '[FR Doc. 2023-24184 ¶646]'."""
    m = _PLACE.match(label)
    if not m:
        return None
    if m.group(1):
        return "page", m.group(1), int(m.group(2)) * 100 + int(m.group(3))
    return "paragraph", m.group(4), int(m.group(5))


# How far after a comment CMS's reply may sit: the next page (page labels), or a dozen paragraphs
_REPLY_WITHIN = {"page": 200, "paragraph": 12}


def _near(here: tuple[str, str, int] | None, there: tuple[str, str, int] | None) -> bool:
    """Within a page or so of rule text after (or at) the quoted comment: CMS answers a comment right after it."""
    if here is None or there is None or here[:2] != there[:2]:
        return False
    return 0 <= here[2] - there[2] <= _REPLY_WITHIN[here[0]]


def _decision(sources: Sequence[Source], said: Sequence[_Candidate], terms: Terms, codes: set[str],
              evidence: Evidence) -> _Candidate | None:
    """CMS's decision on what the quoted commenters said: the first sentence of the same rule that decides
    after the comments ("After consideration of the comments, we are finalizing ...") and names a word, family
    or code of the question."""
    titles = {c.source.title for c in said}
    heard = [_place(c.source.label) for c in said]
    words = (terms.asked | terms.family) - _GENERIC - _FUNCTION_WORDS
    found = []
    for rank, source in enumerate(sources):
        if source.title not in titles or source.kind in NOT_RULE_TEXT:
            continue
        for position, piece, theirs in speakers(source):
            text = _clean(piece)
            if theirs or len(text.split()) < 8 or len(text) > 400 or not _DECISION.search(text):
                continue
            named = codes & set(re.findall(r"\b[A-Z0-9]{5}\b", text))     # a code the question writes weighs 3
            hits = len(words & _words(text)) + 3 * len(named & terms.written) + min(1, len(named - terms.written))
            near = 2 * any(_near(_place(source.label), place) for place in heard)    # the reply to those comments
            if hits and passes_guard(_quote(text, source), evidence):
                found.append(_Candidate(score=hits + near - 0.1 * rank, position=position, text=text, source=source))
    return min(found, key=lambda c: (-c.score, c.position), default=None)


# Where one question asks two things: "How were G0556-G0558 valued, and what did commenters say about G0557?"
_CLAUSES = re.compile(r"[?;]|\.(?:\s|$)|,\s*(?:and|but)\b|\band\s+(?=(?:what|how|did|do|does|why|which|who|were|was)\b)",
                      re.IGNORECASE)


def _comment_clause(question: str) -> str:
    """The part of the question that asks about comments ('' when none does).

    >>> _comment_clause("How was G0556 valued, and what did commenters say about G0557?")
    ' what did commenters say about G0557'
    """
    return next((part for part in _CLAUSES.split(question) if COMMENTS.search(part)), "")


# What a family's definition states about its codes, as a question asks it: "time", "minutes", "conditions".
_DEFINED_ASPECTS = re.compile(r"\b(?:time|minutes?|how long|conditions?|months?|days?)\b", re.IGNORECASE)


def _defined_aspect(prepared: Prepared) -> bool:
    """Does the question ask about something the named family's definition states (the time, the conditions)?"""
    asked = {m.group(0).lower().rstrip("s") for m in _DEFINED_ASPECTS.finditer(prepared.question)}
    defined = " ".join(s.text.lower() for s in prepared.sources if s.kind == DEFINITION_KIND)
    return bool(asked) and any(re.search(rf"\b{re.escape(word)}s?\b", defined) for word in asked)


def _comments_first(prepared: Prepared) -> bool:
    """Does the question ask about comments before anything else ("Did commenters support ...?")?"""
    return prepared.plan.comments and _comment_clause(prepared.question) == \
        next((part for part in _CLAUSES.split(prepared.question) if part.strip()), "")


@dataclass(frozen=True, kw_only=True)
class Terms:
    asked: frozenset[str]       # the question's words
    family: frozenset[str]      # the named families' names and acronyms (as the registry writes them)
    written: frozenset[str] = frozenset()   # codes the question writes out (not added by a family)
    spelled: frozenset[str] = frozenset()   # acronyms the question's word runs would have ("rural health clinics": rhcs)
    acronyms: frozenset[str] = frozenset()  # acronyms the question writes ("RHC": rhc, rhcs)
    rules: frozenset[str] = frozenset()     # the rules of the years the question asks ("CY 2022"), as titles name them
    rule_asked: bool = False                # the question names a rule document ("the CY 2022 rule"), not only a year
    decision_asked: bool = False            # the question asks what CMS decided ("What did CMS finalize for ...?")
    item: bool = False                      # the question asks about a request for information or comment solicitation
    corrections: bool = False               # the question asks what a correction corrected ("What did it fix?")
    procedure: bool = False                 # the question asks about rulemaking procedure (waivers, good cause)


def data_notes(prepared: Prepared) -> tuple[str, ...]:
    """The sentences of the warnings that say the loaded data lack what was asked (DATA_NOTE_KINDS), in order,
    each once: the product's own words, which the deterministic writer leads with; none for a question the rule text
    answers (what commenters said, a rule question) — its warning still shows."""
    plan = prepared.plan
    if plan.comments:
        return ()           # "What did commenters say about the proposed APCM RVUs?": the rule text answers it
    # a rule question with rows ("What did CMS finalize for APCM?") leads with the rule text; what the data computed
    # for it ("Which RTM codes are new in 2026?": the codes each release first holds) still comes first
    kinds = {WarningKind.COMPUTED} if plan.intents == (Intent.POLICY,) and prepared.rows else DATA_NOTE_KINDS
    said = [w.message for w in prepared.warnings if w.kind in kinds]
    return tuple(dict.fromkeys(s.strip() for message in said for s in split_sentences(message) if s.strip()))


def _family_phrases(keys: Sequence[str]) -> re.Pattern | None:
    """The named families' names and acronyms as whole phrases ("chronic care management", "CCM", "CCMs")."""
    families = {f.key: f for f in load_families()}
    names = sorted({s for key in keys for s in families[key].synonyms}, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")s?\b", re.IGNORECASE) if names else None


def _terms(prepared: Prepared) -> Terms:
    families = {f.key: f for f in load_families()}
    family_words = {w for key in prepared.plan.families for s in families[key].synonyms for w in _words(s)}
    return Terms(asked=frozenset(_words(prepared.question)), family=frozenset(family_words),
                 spelled=frozenset(initialisms(prepared.question)), acronyms=frozenset(acronyms(prepared.question)),
                 rules=frozenset(f"CY {year}" for year in prepared.plan.years),
                 rule_asked=bool(ASKS_RULE.search(prepared.question)) or prepared.plan.comments,
                 decision_asked=bool(ASKS_DECISION.search(prepared.question)),
                 item=bool(RULE_ITEM.search(prepared.question)),
                 corrections=bool(_ASKS_CORRECTIONS.search(prepared.question)),
                 procedure=bool(_ASKS_PROCEDURE.search(prepared.question)),
                 written=frozenset(prepared.plan.named_codes))


@dataclass(frozen=True, kw_only=True)
class DeterministicWriter:
    """Writes an answer from the plan, rows, computed figures, definitions and excerpts (no model)."""
    max_quotes: int = 3
    name: str = "deterministic"
    lead_notes: bool = True       # False when the pipeline already showed data_notes (before a model's answer)

    def stream(self, prepared: Prepared) -> Iterator[str]:
        """Yield one line at a time: the notice once, then the answer as short paragraphs and list items."""
        evidence = build_evidence(prepared.rows, prepared.sources, prepared.checked, prepared.unpriced)
        yield NO_MODEL_NOTICE + "\n\n"
        notes = data_notes(prepared) if self.lead_notes else ()
        if notes:                     # "What did 99490 pay in 2019?": say first that CY2019 is not on file
            yield " ".join(notes) + "\n\n"
        for line in self._lines(prepared, evidence):
            if line.strip() not in FIXED_SENTENCES and not passes_guard(line.strip().removeprefix("- "), evidence):
                log.error("deterministic writer skipped a sentence the guard rejects: %r", line)
                continue
            yield line + "\n"

    def _lines(self, prepared: Prepared, evidence: Evidence) -> Iterator[str]:
        # "What is an RVU?": the term's definition (data/glossary.toml) answers it; rule text would only be near it
        defined = [f"- {s.text.rstrip('.')} {s.label}." for s in prepared.sources if s.kind == GLOSSARY_KIND]
        yield from defined
        if defined and not (prepared.rows or prepared.factors or prepared.anesthesia or prepared.gpci):
            return
        if prepared.factors:          # "What is the CY 2026 conversion factor?": the amounts first
            yield from ("- " + s for s in biggest_step_factor(prepared.factors, prepared.question) +
                        year_extreme_factor(prepared.factors, prepared.question) +
                        factor_sentences(prepared.factors, asks_variant_gap(prepared.question)))
        local = anesthesia_summary(prepared.anesthesia)
        if local:                     # "the anesthesia conversion factor in Seattle": the locality amounts first
            yield from ("- " + s for s in local.sentences())
        indices = gpci_summary(prepared.gpci, prepared.question)
        if indices:                   # "What is the GPCI for Seattle?": the locality's indices first
            yield from ("- " + s for s in indices.sentences())
        # "Do 71046-26 and 71046-TC add up to the global?": what they add up to first, the PC/TC indicator after it
        # and so for a payment the indicator decides ("27447 bilateral", "11042 + 17000 on one day"): the amount first
        priced_by = {FigureKind.COMPONENTS: "pctc", FigureKind.MULTIPLE: "mult_proc", FigureKind.SECOND: "mult_proc",
                     FigureKind.BILATERAL: "bilat_surg",
                     FigureKind.ASSISTANT: "asst_surg", FigureKind.CO_SURGERY: "co_surg", FigureKind.PERIOP: "periop"}
        decided = {priced_by[g.kind] for g in prepared.figures if g.kind in priced_by} \
            if not _YES_NO.match(prepared.question) else {"pctc"}       # "Can an assistant be paid?": the rule first
        if "mult_proc" in decided:    # the endoscopic base code decides indicator 3's amounts with it
            decided.add("endo_base")
        late = [f for f in prepared.indicators if f.meaning.key in decided and
                (f.meaning.key != "pctc" or prepared.plan.components)]
        if prepared.indicators:       # "What is the bilateral surgery indicator for 27447?": the file's values first
            yield from ("- " + f.sentence() for f in prepared.indicators if f not in late)
            yield from ("- " + s for s in base_amount_sentences(prepared))
        # a count over the whole file ("How many codes were added for 2024?"), a county's locality: a computed note
        computed = any(w.kind is WarningKind.COMPUTED for w in prepared.warnings)
        if (prepared.factors or local or indices or computed) and not prepared.rows:
            # the data answered it; rule text only when the question asks about the rule or why (the retrieved
            # paragraphs stay under Sources)
            if ASKS_RULE.search(prepared.question) or _ASKS_WHY.search(prepared.question):
                yield from self._how_valued(prepared, evidence)
            return
        plan = prepared.plan
        if Intent.DEFINITION in plan.intents and families_compared(plan):
            # "What is the difference between CCM and PCM?": what each family is; their codes' values are in the
            # table above and are restated only when the question asks for a payment
            yield from self._definitions(prepared)
            if Intent.LOOKUP in plan.intents:
                yield from self._answer(prepared, evidence)
            yield from ("- " + f.sentence() for f in late)
            yield from self._how_valued(prepared, evidence)
            return
        if Intent.POLICY in prepared.plan.intents and _defined_aspect(prepared):
            # "What is the time requirement for principal care management?": the family's definition says it
            yield from self._definitions(prepared)
            yield from self._how_valued(prepared, evidence)
            yield from self._answer(prepared, evidence)
            yield from ("- " + f.sentence() for f in late)
            return
        if Intent.POLICY in prepared.plan.intents or _comments_first(prepared):  # the rule text answers it first
            yield from self._how_valued(prepared, evidence)
            # only the families the question names by their own name: "How do RHCs bill care management after
            # G0511?" (a name five families share) is not asking what APCM, BHI, CCM, PCM and TCM are
            yield from self._definitions(prepared, own_names_only=True)
            yield from self._answer(prepared, evidence)
            yield from ("- " + f.sentence() for f in late)
            return
        yield from self._answer(prepared, evidence)
        yield from ("- " + f.sentence() for f in late)
        yield from self._definitions(prepared)
        yield from self._how_valued(prepared, evidence)

    def _answer(self, prepared: Prepared, evidence: Evidence) -> Iterator[str]:
        plan, rows = prepared.plan, prepared.rows
        addons = family_addons(rows, plan)      # "which office visit code rose most": G2211 is no visit
        ranked = [r for r in rows if r.hcpcs not in addons]
        # "which code has the highest work RVU": the file's ranking; "rank 99221-99223 by percent change": by it;
        # otherwise the asked codes ranked, or the one that pays most
        ordered = [s for s in [prepared.ranking.sentence(rows) if prepared.ranking is not None else ""] if s] + \
            change_ranking_sentences(prepared.figures, prepared.question)
        yield from ("- " + s for s in ordered or ranking_sentences(ranked, plan, prepared.question) or
                    extreme_sentences(ranked, plan, prepared.question))
        yield from ("- " + s for s in place_ranking_sentences(rows, plan, prepared.question))   # places ranked
        yield from ("- " + s for s in year_extreme_sentences(rows, plan, prepared.question))
        yield from ("- " + s for s in when_moved_sentences(prepared.figures, prepared.question))
        yield from ("- " + s for s in biggest_step_sentences(prepared.figures, prepared.question))
        yield from ("- " + s for s in most_change_sentences(prepared.figures, prepared.question, addons))
        yield from ("- " + s for s in figure_sentences(prepared.figures))
        yield from ("- " + s for s in driver_sentences(prepared.figures))
        yield from ("- " + s for s in setting_gap_reasons(prepared.figures, rows, prepared.question))
        if Intent.TREND in plan.intents:
            yield from ("- " + year_line(r, plan.setting, plan.measure) for r in _focus_rows(rows, plan))
        else:
            status, parts = "status" in plan.parts, frozenset(plan.parts)
            for row in _focus_rows(rows, plan):
                sentence = row_sentence(row, setting=plan.setting, status=status, parts=parts, dates=plan.dates,
                                        qp=plan.qp)
                yield "- " + (sentence if passes_guard(sentence, evidence) else
                              row_sentence(row, described=False, setting=plan.setting, status=status, parts=parts,
                                           dates=plan.dates, qp=plan.qp))
        if prepared.unpriced:
            yield "- " + unpriced_sentence(prepared.unpriced)
        if not prepared.sources and not rows:
            yield NOTHING_FOUND

    def _commenters(self, prepared: Prepared, evidence: Evidence, terms: Terms, codes: set[str],
                    taken: list[set[str]]) -> list[_Candidate]:
        """What commenters said, as CMS summarised them, for a question that asks it: up to two of their
        sentences that best match the question (its words and codes), attributed to them."""
        subject = frozenset(c for c in detect(_comment_clause(prepared.question)).explicit if c in codes)
        return _chosen(_candidates(prepared.sources, terms, codes, evidence, re.compile(r"\w"), commenters=True,
                                   subject=subject), 2, taken)

    def _definitions(self, prepared: Prepared, own_names_only: bool = False) -> Iterator[str]:
        """The named families' definitions; with `own_names_only`, of the families the question names by their own
        name or by a member code it writes (not those a shared name such as "care management" adds)."""
        written = set(prepared.plan.named_codes)
        named = {f.name for f in load_families() if written & set(f.codes) or
                 ((phrases := _family_phrases([f.key])) and phrases.search(prepared.question))} \
            if own_names_only else None
        for source in prepared.sources:
            if source.kind == DEFINITION_KIND and (named is None or source.title in named):
                yield f"\n{source.text.rstrip('.')} {source.label}."

    def _how_valued(self, prepared: Prepared, evidence: Evidence) -> Iterator[str]:
        terms, codes = _terms(prepared), set(prepared.plan.focus_codes)
        taken: list[set[str]] = []
        policy = Intent.POLICY in prepared.plan.intents
        changes = [] if policy else proposed_to_final(prepared.rows, prepared.sources, prepared.plan.focus_codes)[:2]
        wanted = CONVERSION_FACTOR if asks_conversion_factor(prepared.question) else \
            VALUATION_WORDS if prepared.rows and not policy else re.compile(r"\w")
        naming = re.compile(r"\b(?:" + "|".join(sorted(codes)) + r")\b") if codes else None
        candidates = _candidates(prepared.sources, terms, codes, evidence, wanted)
        if naming and not {Intent.HOW_VALUED, Intent.DEFINITION, Intent.POLICY} & set(prepared.plan.intents):
            # A figure question ("How much more does 99214 pay than 99213?") did not ask about the rule text:
            # quote only what the rule says of the asked codes themselves.
            candidates = [c for c in candidates if naming.search(c.text)]
        elif naming and Intent.POLICY not in prepared.plan.intents:
            # "What is the global period for 27447?": a sentence about other codes (the CCM codes' values) does
            # not answer it; what the rule says of the asked codes or their families does.
            about = _family_phrases(prepared.plan.families)
            candidates = [c for c in candidates if naming.search(c.text) or (about and about.search(c.text))]
        limit = self.max_quotes - len(changes)
        focus = prepared.plan.focus_codes
        chosen = _covering(candidates, focus, limit, taken) if \
            Intent.HOW_VALUED in prepared.plan.intents and 2 <= len(focus) <= limit else \
            _with_proposal(_chosen(candidates, limit, taken), candidates, limit)
        if not chosen and naming:       # nothing on valuation: what the rule text says of the codes themselves
            chosen = _chosen(_candidates(prepared.sources, Terms(asked=frozenset(), family=frozenset()), codes,
                                         evidence, naming), 2, taken)
        heard = self._commenters(prepared, evidence, terms, codes, taken) if prepared.plan.comments else []
        said = [_quote(c.text, c.source, commenters=True) for c in heard]
        # CMS's decision on what they said: first in what CMS said when the question asks about comments first,
        # else right after their views
        decided = _decision(prepared.sources, heard, terms, codes, evidence) if heard else None
        lead = bool(said) and (policy or _comments_first(prepared))
        if decided and lead:
            chosen = [decided, *(c for c in chosen if c.text != decided.text)][:max(1, len(chosen))]
        elif decided:
            chosen = [c for c in chosen if c.text != decided.text]
        valued = [_quote(c.text, c.source) for c in chosen]
        if lead:            # "What did commenters say ...?": their views first
            yield "\n" + COMMENTERS_HEADING
            yield from ("- " + q for q in said)
        if valued or changes:
            yield "\n" + ("How CMS valued them:" if prepared.rows and not policy else
                          "What CMS said:" if said else "What the rule text says:")
        yield from ("- " + q for q in valued + changes)
        if said and not lead:
            yield "\n" + COMMENTERS_HEADING
            yield from ("- " + q for q in said)
            if decided:
                yield "\n" + CMS_DECIDED
                yield "- " + _quote(decided.text, decided.source)
        if prepared.plan.comments and not said and prepared.sources:
            yield "\n" + NO_COMMENTS
        # nothing quotable: the top sources are pointed to, unless a note already says the question is not answered
        if not valued and not changes and not said and prepared.sources and not prepared.rows \
                and not prepared.factors and not prepared.unpriced and not data_notes(prepared):
            yield from (f"- The {s.kind} published {s.published} is also relevant {s.label}."
                        for s in prepared.sources[:2] if s.kind not in NOT_RULE_TEXT)
