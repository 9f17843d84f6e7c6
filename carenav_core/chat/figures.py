"""Figures computed by code from the valuation rows the question is about: differences between codes,
changes across years, totals of codes billed together. Decimal throughout, cents half-up, percents to one
decimal half-up. Each figure carries a label naming the rows it came from; the output guard accepts a
computed number only in a sentence citing that label. The model computes nothing.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal
from enum import StrEnum
from itertools import combinations, pairwise
from typing import Sequence

from carenav_core.chat.plan import THERAPY_ASSISTANT_FROM, Intent, QuestionPlan, Setting
from carenav_core.codes.families import ONCE_PER_EPISODE, PERIODIC_UNITS, load_families, payment_unit
from carenav_core.pfs.pricer import DIAGNOSTIC_MPPR, diagnostic_cuts, surgical_blocks
from carenav_core.pfs.rows import UNPAID_STATUS, ValuationRow, modifier_rows, payment  # noqa: F401 (UNPAID_STATUS re-exported)

CENT = Decimal("0.01")
CF_SETTING = "conversion factor"
TENTH = Decimal("0.1")


class FigureKind(StrEnum):
    DIFFERENCE = "difference"      # code A minus code B, same vintage
    CHANGE = "change"              # one code, earlier vintage to later vintage
    TOTAL = "total"                # codes billed together, same vintage
    DRIVER = "driver"              # what moved a change: total RVUs and conversion factor (payment = RVUs x CF)
    SETTING_GAP = "setting gap"    # one row: its non-facility amount minus its facility amount
    VOLUME = "volume"              # one row's amount times the payments a volume bills ("100 patients a month")
    RATIO = "ratio"                # code A's amount divided by code B's, same vintage ("how many 99213 equal a 27447")
    SHARE = "share"                # one row: an RVU component's percent of its total RVUs (and so of its payment)
    STATED = "stated"              # an amount the question gives minus the row's amount ("my MAC paid $92.03")
    WHAT_IF = "what if"            # one row's payment at a conversion factor changed by the percent the question supposes
    STATISTIC = "statistic"        # the mean or median of the asked codes' amounts in one vintage
    COMPONENTS = "components"      # one code's professional (26) plus technical (TC) component against its global
    COUNT = "count"                # how many of the asked codes pay over (under) an amount the question gives
    COINSURANCE = "coinsurance"    # one row's amount split: Medicare's 80% and the patient's 20% coinsurance
    EXTREME = "extreme"            # the locality where one row pays the most (or least), against the national amount
    RATE = "rate"                  # one row's amount per hour or per minute of the code's time ("99490 per hour")
    BILATERAL = "bilateral"        # one row's amount billed bilaterally, at the share its bilateral indicator gives
    PRACTITIONER = "practitioner"  # one row's amount billed by a practitioner paid a share of the fee (an NP's 85%)
    NONPAR = "non-participating"   # one row's amount paid to a non-participating physician (95%)
    LIMITING = "limiting charge"   # the most a non-participating physician may charge: 115% of the 95%
    ASSISTANT = "assistant"        # one row's amount paid to an assistant at surgery (16%; 13.6% for modifier AS)
    MULTIPLE = "multiple procedure"   # procedures (units) on one day after the multiple-procedure reduction
    CO_SURGERY = "co-surgery"      # one row's amount paid to each of two co-surgeons (62.5%, modifier 62)
    SEQUESTRATION = "sequestration"    # Medicare's 80% less the 2% sequestration reduction
    PERIOP = "global surgery part"     # one row's amount for a part of its global package (modifier 54/55/56, pre-op)
    SECOND = "second procedure"    # one row's amount as a second procedure of the day (modifier 51): 50% (MULT PROC 1-3)
    NEEDED = "needed"              # how many services of one row reach an amount the question gives ("to earn $10,000")


@dataclass(frozen=True, kw_only=True)
class Figure:
    """One computed payment figure in one setting."""
    kind: FigureKind
    label: str                     # "[computed: 99490 − 99439, PFS CY2026 RVU26C]"
    codes: tuple[str, ...]
    rows: tuple[str, ...]          # labels of the rows used, in order
    setting: str                   # "non-facility" or "facility"
    inputs: tuple[Decimal, ...]    # the payments used, in the order of `codes` / `rows`
    value: Decimal                 # dollars: difference, change or total
    percent: Decimal | None        # percent difference / change (None for totals or a zero base)
    place: str = ""                # the payment locality of the rows ("" national)
    counts: tuple[int, ...] = ()   # a total's count per input ("2 × 99498"; () = one of each); a volume's payments
    how: str = ""                  # a volume's arithmetic in words ("100 a month × 12 months")
    together: bool = True          # a total of codes billed together; False: alternatives added up because asked

    @property
    def money(self) -> bool:
        """A payment (in dollars), not RVUs or a conversion factor."""
        return "RVU" not in self.setting and self.setting != CF_SETTING

    @property
    def dollars(self) -> bool:
        """Shown in dollars: a payment or a conversion factor."""
        return self.money or self.setting == CF_SETTING

    def numbers(self) -> tuple[Decimal, ...]:
        """Every number a sentence citing this figure may state."""
        found = [self.value, abs(self.value), *self.inputs, *self.counts, *self.each(), *self.written()]
        found += [Decimal(n) for n in re.findall(r"\b\d+\b", self.place)]      # a locality's number ("AK 01")
        if self.kind is FigureKind.COMPONENTS:
            found += [self.inputs[2] - self.value, abs(self.inputs[2] - self.value)]     # global − (26 + TC)
        if self.kind is FigureKind.RATE and "per hour" in self.label:
            found.append(Decimal(60))           # "$66.13 × 60 ÷ 20 minutes"
        if self.kind is FigureKind.LIMITING:
            found += [Decimal(95), LIMITING_OF_FEE]     # "at 95% is ...", "(109.25% of the fee ...)"
        if self.percent is not None:
            found += [self.percent, abs(self.percent)]
        return tuple(found)

    def each(self) -> tuple[Decimal, ...]:
        """A counted total's amount of one unit per input (its input divided by its count)."""
        return tuple(a / c for a, c in zip(self.inputs, self.counts)) if self.counts and \
            self.kind is FigureKind.TOTAL else ()

    def written(self) -> tuple[Decimal, ...]:
        """The numbers a figure's arithmetic states: a volume's counts ("100 a month × 12 months"), a what-if's changed
        conversion factor ("$30.0608")."""
        return tuple(Decimal(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", self.how))

    def words(self) -> str:
        """What the figure says, in words a sentence citing it may use (for the support test)."""
        what = {FigureKind.DIFFERENCE: "difference more less than higher lower compared pays brings in",
                FigureKind.CHANGE: "change changed increase increased decrease decreased rose fell from to since "
                                   "add-on codes of another kind billed only with another service left out",
                FigureKind.TOTAL: "total together combined billed with plus pays setting only left out no national "
                                  "fee schedule status",
                FigureKind.DRIVER: "change changed because moved drove went rose fell from to total RVUs relative "
                                   "value units conversion factor payment times",
                FigureKind.SETTING_GAP: "difference gap more less than higher lower compared between non-facility "
                                        "facility office setting",
                FigureKind.VOLUME: "volume billed bills brings brought earn earns revenue total times each patients "
                                   "month months year a week weeks services payments once calendar",
                FigureKind.RATIO: "ratio times divided equal equals one of many as much more",
                FigureKind.SHARE: "share percent of total RVUs relative value units payment work practice expense PE "
                                  "malpractice MP component same",
                FigureKind.STATED: "given amount more less than higher lower match matches same difference paid "
                                   "locality GPCIs setting",
                FigureKind.WHAT_IF: "conversion factor cut increase lower higher would be instead of change percent "
                                    "if at",
                FigureKind.STATISTIC: "mean average median middle of codes amounts payment",
                FigureKind.COMPONENTS: "professional technical component components add up adds sum global "
                                       "together same as than more less rounded cents each",
                FigureKind.COUNT: "of how many which pay over under above below more less than at least at most "
                                  "codes none all",
                FigureKind.COINSURANCE: "Medicare pays patient coinsurance share percent of allowed amount "
                                        "deductible Part B met once after preventive services no when a screening "
                                        "colonoscopy sigmoidoscopy removes polyp or tissue and is billed as this code "
                                        "with Consolidated Appropriations Act section in none from",
                FigureKind.EXTREME: "locality localities highest lowest most least pays paid where which of "
                                    "national than more less among payment",
                FigureKind.RATE: "per hour minute minutes an a hourly rate time worth pays descriptor gives "
                                 "question at its of",
                FigureKind.BILATERAL: "billed bilaterally bilateral both sides modifier paid at of its surgery "
                                      "indicator under",
                FigureKind.PRACTITIONER: "billed by a an nurse practitioner physician assistant clinical nurse "
                                         "specialist social worker paid at of the fee schedule amount under "
                                         "bring in brings each times services "
                                         "Social Security Act section",
                FigureKind.NONPAR: "non-participating nonparticipating physician provider paid at of the fee schedule "
                                   "amount participating Social Security Act section assignment accept",
                FigureKind.LIMITING: "limiting charge most may charge bill the patient non-participating physician "
                                     "of that amount fee schedule Social Security Act section assignment accept claim "
                                     "on it does not",
                FigureKind.SEQUESTRATION: "with the sequestration reduction Medicare's 80% of payment becomes in force "
                                          "on claims from July 1 since Budget Control Act of 2011 as extended after",
                FigureKind.CO_SURGERY: "co-surgeon co-surgeons co-surgery each of two surgeons modifier paid at of "
                                       "its indicator fee documentation with supporting",
                FigureKind.MULTIPLE: "billed on one day same session together multiple-procedure multiple procedure "
                                     "rule reduction indicator highest-paid procedure each other at of add up to "
                                     "against without it unit units practice expense therapy full in paid pay",
                FigureKind.ASSISTANT: "assistant at surgery surgeon's fee modifier paid at of its indicator "
                                      "non-physician practitioner Claims Processing Manual chapter section",
                FigureKind.SECOND: "billed as a second later procedure the same day modifier paid at of its "
                                   "multiple procedure indicator when first procedure is not an endoscopy family with "
                                   "one it amount less base code's ENDO BASE",
                FigureKind.NEEDED: "it takes services to bring in reach earn make how many fewest one fewer at "
                                   "payment of",
                FigureKind.PERIOP: "pre-operative intra-operative post-operative care share shares global surgical "
                                   "package modifier surgical care only postoperative management preoperative "
                                   "paid at of is RVU file split between practitioners"}[self.kind]
        place = f" {self.place} locality GPCI-adjusted GPCI adjusted" if self.place else ""
        return f"{' '.join(self.codes)} {self.setting} payment percent {what} {self.describe()}{place}"

    def describe(self) -> str:
        """'99490 − 99439' / '99490 CY2023 → CY2026' / 'G2211 + 99213', for tables."""
        return self.label.removeprefix("[computed: ").removesuffix("]")


def _cents(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def _percent(delta: Decimal, base: Decimal) -> Decimal | None:
    return None if not base else (delta / base * 100).quantize(TENTH, rounding=ROUND_HALF_UP)


# What each measure a question can ask about (QuestionPlan.measure) compares: (name, row field) per setting; one
# pair when the measure has no setting. Figures, the ranking sentence and the chat page's trend chart read it.
MEASURED = {"payment": (("non-facility", "payment_nonfac"), ("facility", "payment_fac")),
            "work_rvu": (("work RVU", "work_rvu"),),
            "mp_rvu": (("malpractice RVU", "mp_rvu"),),
            "pe_rvu": (("non-facility PE RVU", "pe_nonfac_rvu"), ("facility PE RVU", "pe_fac_rvu")),
            "total_rvu": (("non-facility total RVU", "total_nonfac"), ("facility total RVU", "total_fac"))}


# Statuses whose rows carry no national amount to compute with: C (the contractor prices it) and J (anesthesia: base
# and time units times the anesthesia CF); their RVUs are 0 and the file's payment is not a payment
NOT_NATIONALLY_PRICED = frozenset("CJ")
_SETTING_NA = {"payment_nonfac": "nonfac_na", "total_nonfac": "nonfac_na", "pe_nonfac_rvu": "nonfac_na",
               "payment_fac": "fac_na", "total_fac": "fac_na", "pe_fac_rvu": "fac_na"}


def stated(row: ValuationRow, field: str) -> Decimal | None:
    """The amount of `field` a figure may compute with: none for a payment Medicare does not make under the fee
    schedule (UNPAID_STATUS) or does not price nationally (status C, J), nor for a setting the file marks NA (rarely
    or never furnished there: 99454 in a facility, 27447 in an office), whose amount is computed but not paid."""
    if field.startswith("payment") and row.status in UNPAID_STATUS | NOT_NATIONALLY_PRICED:
        return None
    flag = _SETTING_NA.get(field)
    if flag and getattr(row, flag) == "NA":
        return None
    return getattr(row, field)


def left_out_reason(rows: Sequence[ValuationRow], field: str) -> str:
    """Why rows with an amount of `field` in the file have none to compute with (see `stated`): no national payment
    (their statuses), or the setting marked NA."""
    setting = "non-facility" if "nonfac" in field else "facility"
    unpaid = [r for r in rows if field.startswith("payment") and r.status in UNPAID_STATUS | NOT_NATIONALLY_PRICED]
    if unpaid and len(unpaid) < len(rows):      # both reasons: each said of its codes ("93000 ... 36415 ...")
        na = [r for r in rows if r not in unpaid]
        unpaid_codes, na_codes = (" and ".join(dict.fromkeys(r.code_with_modifier for r in group))
                                  for group in (unpaid, na))
        return (f"{unpaid_codes} {'have' if len(unpaid) > 1 else 'has'} no national fee schedule payment (status "
                + ", ".join(sorted({r.status for r in unpaid})) + f"), and the file marks {na_codes}'s {setting} PE NA")
    if unpaid:
        return "no national fee schedule payment (status " + ", ".join(sorted({r.status for r in rows})) + ")"
    return f"the file marks {'their' if len(rows) > 1 else 'its'} {setting} PE NA"


def measured_fields(plan: QuestionPlan) -> tuple[tuple[str, str], ...]:
    """(what, row field) pairs the figures compare: payments by setting, or an RVU the question names."""
    both = MEASURED.get(plan.measure, MEASURED["payment"])
    if len(both) == 1 or plan.setting is Setting.BOTH:
        return both
    return both[:1] if plan.setting is Setting.NON_FACILITY else both[1:]


def _short(label: str) -> str:
    return label.strip("[]")


def _pair(kind: FigureKind, label: str, codes: tuple[str, ...], rows: tuple[ValuationRow, ...],
          plan: QuestionPlan) -> list[Figure]:
    figures = []
    for setting, field in measured_fields(plan):
        amounts = tuple(stated(r, field) for r in rows)
        if any(a is None for a in amounts):
            continue
        if kind is FigureKind.TOTAL:
            value, percent = _cents(sum(amounts, Decimal(0))), None
        elif kind is FigureKind.CHANGE:          # rows: (earlier, later)
            value = _cents(amounts[1] - amounts[0])
            percent = _percent(value, amounts[0])
        else:                                    # rows: (code A, code B); A − B relative to B
            value = _cents(amounts[0] - amounts[1])
            percent = _percent(value, amounts[1])
        places = {r.locality for r in rows}
        figures.append(Figure(kind=kind, label=label, codes=codes, rows=tuple(r.label for r in rows),
                              setting=setting, inputs=amounts, value=value, percent=percent,
                              place=places.pop() if len(places) == 1 else ""))
    return figures


def _name(row: ValuationRow) -> str:
    return row.code_with_modifier


def _by_code_and_vintage(rows: Sequence[ValuationRow], plan: QuestionPlan) -> dict[tuple[str, str], ValuationRow]:
    return {(r.hcpcs, r.label): r for r in modifier_rows(rows, plan.modifier)}


def _differences(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """First focus code minus each other focus code, in every vintage both have and the plan asks for; three codes
    written out ("Compare 99424, 99426 and 99490"), every pair of them."""
    codes = plan.focus_codes
    index = _by_code_and_vintage([r for r in rows if r.in_focus], plan)
    figures = []
    pairs = combinations(codes, 2) if len(codes) == 3 and plan.named_codes else ((codes[0], o) for o in codes[1:])
    for first_code, other in pairs:
        for (code, label), row in index.items():
            if code == first_code and (other, label) in index:
                pair = (row, index[(other, label)])
                first, second = (_name(r) for r in pair)
                text = f"[computed: {first} − {second}, {_short(label)}]"
                figures += _pair(FigureKind.DIFFERENCE, text, (first, second), pair, plan)
    return figures


def _crossed(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """The first code in its year minus the second code in its year (final rows, the same place)."""
    (a, ya), (b, yb) = plan.crossed
    finals = [r for r in modifier_rows(rows, plan.modifier) if not r.proposed and r.in_focus]
    figures = []
    for place in dict.fromkeys(r.locality for r in finals):
        first = next((r for r in finals if r.hcpcs == a and r.cy == ya and r.locality == place), None)
        second = next((r for r in finals if r.hcpcs == b and r.cy == yb and r.locality == place), None)
        if first and second:
            text = f"[computed: {_name(first)} CY{ya} − {_name(second)} CY{yb}, {_short(first.label)} · " \
                   f"{_short(second.label)}]"
            figures += _pair(FigureKind.DIFFERENCE, text, (f"{_name(first)} in CY{ya}", f"{_name(second)} in CY{yb}"),
                             (first, second), plan)
    return figures


def _changes(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """Per focus code: first asked final year to last, each consecutive step, and final → proposed."""
    figures = []
    priced = modifier_rows(rows, plan.modifier)      # "71046-26": that modifier's rows, else the whole code's
    for code in plan.focus_codes:
        by_place: dict[str, list[ValuationRow]] = {}        # a place asked: each locality's own years, never mixed
        for r in priced:
            if r.hcpcs == code and r.in_focus and not r.proposed:
                by_place.setdefault(r.locality, []).append(r)
        steps = []
        for finals in by_place.values():
            finals.sort(key=lambda r: r.cy)
            if len(finals) > 2:
                steps.append((finals[0], finals[-1]))
            steps += pairwise(finals)
        proposed = [r for r in priced if r.hcpcs == code and r.proposed and r.in_focus and not r.locality]
        newest = [r for r in priced if r.hcpcs == code and not r.proposed and not r.locality]
        if proposed and newest:
            steps.append((max(newest, key=lambda r: r.cy), proposed[0]))
        for before, after in steps:
            text = f"[computed: {_name(after)}, {_short(before.label)} → {_short(after.label)}]"
            figures += _pair(FigureKind.CHANGE, text, (_name(after),), (before, after), plan)
            if plan.reasons and plan.measure == "payment":
                drivers = f"[computed: {_name(after)} drivers, {_short(before.label)} → {_short(after.label)}]"
                figures += _drivers(drivers, _name(after), (before, after), plan)
    return figures


def _drivers(label: str, code: str, rows: tuple[ValuationRow, ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """What moved a payment change: each setting's total RVUs and the conversion factor, before and after (payment
    = total RVUs x CF, so these two explain all of it), under a label of their own (a CF is never accepted as the
    payment change)."""
    before, after = rows
    parts = [(f"{setting} total RVUs", getattr(before, field), getattr(after, field))
             for setting, field in (("non-facility", "total_nonfac"), ("facility", "total_fac"))
             if any(setting == s for s, _ in measured_fields(plan))]
    parts.append((CF_SETTING, before.cf, after.cf))
    return [Figure(kind=FigureKind.DRIVER, label=label, codes=(code,), rows=(before.label, after.label),
                   setting=setting, inputs=(first, last), value=last - first, percent=_percent(last - first, first))
            for setting, first, last in parts if first is not None and last is not None]


def _totals(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """The codes billed together, per vintage all have; a code billed more than once ("two units of 99498") counts
    that many times: its input is its amount times the count ("2 × 99498")."""
    codes = plan.focus_codes
    counts = dict(plan.units)
    index = _by_code_and_vintage([r for r in rows if r.in_focus], plan)
    figures = []
    for label in dict.fromkeys(lbl for (code, lbl) in index if code == codes[0]):
        chosen = tuple(index.get((c, label)) for c in codes)
        if all(chosen) and not (_alternatives(chosen) and not counts and not plan.summed):
            names = tuple(f"{counts[r.hcpcs]} × {_name(r)}" if r.hcpcs in counts else _name(r) for r in chosen)
            text = f"[computed: {' + '.join(names)}, {_short(label)}]"
            found = _pair(FigureKind.TOTAL, text, names, chosen, plan)
            if _alternatives(chosen) and not counts:        # "the total of G0556, G0557 and G0558", asked
                found = [replace(f, together=False) for f in found]
            if counts:
                found = [_counted(f, chosen, counts) for f in found]
            figures += found + _payable_part(chosen, names, text, plan, {f.setting for f in found}, counts)
    return figures


def _payable_part(chosen: tuple[ValuationRow, ...], names: tuple[str, ...], text: str, plan: QuestionPlan,
                  done: set[str], counts: dict[str, int]) -> list[Figure]:
    """A setting where some codes billed together have no amount to add (the file marks their PE NA there, or they
    have no national payment): the total of the others, saying which were left out (`how`)."""
    figures = []
    for setting, field in measured_fields(plan):
        if setting in done:
            continue
        kept = [(r, n) for r, n in zip(chosen, names) if stated(r, field) is not None]
        left = [(r, n) for r, n in zip(chosen, names) if stated(r, field) is None and getattr(r, field) is not None]
        if not kept or not left:
            continue
        amounts = tuple(stated(r, field) * counts.get(r.hcpcs, 1) for r, _ in kept)
        figures.append(Figure(kind=FigureKind.TOTAL, label=text, codes=tuple(n for _, n in kept),
                              rows=tuple(r.label for r, _ in kept), setting=setting, inputs=amounts,
                              value=_cents(sum(amounts, Decimal(0))), percent=None, place=kept[0][0].locality,
                              counts=tuple(counts.get(r.hcpcs, 1) for r, _ in kept) if counts else (),
                              how=f"{' and '.join(n for _, n in left)} {'is' if len(left) == 1 else 'are'} left "
                                  f"out: {left_out_reason([r for r, _ in left], field)}"))
    return figures


def _alternatives(rows: Sequence[ValuationRow]) -> bool:
    """Two of the rows are base codes (not add-ons: global period ZZZ) of one family whose base codes are alternatives
    (data/families.toml `alternatives`): a practice bills one of them ("99495 and 99496", "99490 and 99491"), never
    their sum; RPM's device and management codes are billed together."""
    bases = {r.hcpcs for r in rows if r.global_days != "ZZZ"}
    return any(len(bases & set(f.codes)) > 1 for f in load_families() if f.alternatives)


def _bundles(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"Which pays more, 99491 alone or 99490 plus one 99439?": per vintage every code has, the first side minus the
    second, relative to the second (what was asked, first), then each side's total (a side of several codes)."""
    first, second = plan.bundles
    index = _by_code_and_vintage([r for r in rows if r.in_focus], plan)
    differences, totals = [], []
    for label in dict.fromkeys(lbl for (code, lbl) in index if code == first[0]):
        sides = [tuple(index.get((c, label)) for c in side) for side in (first, second)]
        if not all(all(side) for side in sides):
            continue
        names = [" + ".join(_name(r) for r in side) for side in sides]
        shown = [f"({name})" if len(side) > 1 else name for name, side in zip(names, sides)]
        for side, name in zip(sides, names):
            if len(side) > 1:
                totals += _pair(FigureKind.TOTAL, f"[computed: {name}, {_short(label)}]", tuple(_name(r) for r in side),
                                side, plan)
        text = f"[computed: {shown[0]} − {shown[1]}, {_short(label)}]"
        for setting, field in measured_fields(plan):
            amounts = [[stated(r, field) for r in side] for side in sides]
            if any(a is None for side in amounts for a in side):
                continue
            both = [sum(side, Decimal(0)) for side in amounts]
            value = both[0] - both[1]
            value = _cents(value) if "RVU" not in setting else value
            differences.append(Figure(kind=FigureKind.DIFFERENCE, label=text, codes=tuple(names),
                                      rows=tuple(r.label for side in sides for r in side), setting=setting,
                                      inputs=tuple(both), value=value, percent=_percent(value, both[1]),
                                      place=sides[0][0].locality))
    return differences + totals


def _counted(figure: Figure, rows: tuple[ValuationRow, ...], counts: dict[str, int]) -> Figure:
    """A total with each row's amount times its count (cents half-up for payments)."""
    inputs = tuple(a * counts.get(r.hcpcs, 1) for a, r in zip(figure.inputs, rows))
    inputs = tuple(_cents(a) for a in inputs) if figure.money else inputs
    return replace(figure, inputs=inputs, counts=tuple(counts.get(r.hcpcs, 1) for r in rows),
                   value=_cents(sum(inputs, Decimal(0))) if figure.money else sum(inputs, Decimal(0)))


MAX_FAMILY_DIFFERENCES = 3     # a family of more members, unnamed, gets no first-member-minus-each differences


def families_compared(plan: QuestionPlan) -> bool:
    """The question sets families side by side without writing a code ("the difference between CCM and PCM")."""
    return not plan.named_codes and len(plan.families) > 1


def _code_by_code(plan: QuestionPlan) -> bool:
    """Differences answer the question: codes written out, or one small family ("Compare the APCM levels"). Of a
    larger family named without a code ("Which CCM code pays the most?", six codes) the first member minus every
    other member answers nothing; the superlative sentence and the rows do."""
    if plan.named_codes:
        return True
    return not families_compared(plan) and len(plan.focus_codes) <= MAX_FAMILY_DIFFERENCES


MAX_PLACES_COMPARED = 3     # "Miami compared to Seattle": two or three places; a state's every locality is a table


def _place_differences(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """Two or three places asked ("What does 99214 pay in Miami compared to Seattle?"): per code, in the newest final
    year priced in every place, the first place's payment minus each other place's."""
    figures = []
    local = [r for r in modifier_rows(rows, plan.modifier) if r.in_focus and r.locality and not r.proposed]
    for code in plan.focus_codes:
        mine = [r for r in local if r.hcpcs == code]
        places = list(dict.fromkeys(r.locality for r in mine))
        common = set.intersection(*({r.cy for r in mine if r.locality == p} for p in places)) if places else set()
        if not 2 <= len(places) <= MAX_PLACES_COMPARED or not common:
            continue
        year = max(common)
        by_place = {r.locality: r for r in mine if r.cy == year}
        first = by_place[places[0]]
        for other in places[1:]:
            pair = (first, by_place[other])
            names = tuple(f"{_name(r)} in {r.locality}" for r in pair)
            text = f"[computed: {_name(first)}, {_short(first.label)} − {_short(by_place[other].label)}]"
            figures += _pair(FigureKind.DIFFERENCE, text, names, pair, plan)
    return figures


def _national_differences(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"How much is 99214 in Alaska compared to national in 2024?": per locality row in focus, its amount minus the
    national amount of the same code, vintage and modifier, relative to the national one."""
    national = {(r.hcpcs, r.mod, r.label): r for r in rows if not r.locality}
    figures = []
    for row in modifier_rows(rows, plan.modifier):
        base = national.get((row.hcpcs, row.mod, row.label.split(" · ")[0] + "]"))
        if not row.in_focus or not row.locality or row.proposed or base is None:
            continue
        text = f"[computed: {_name(row)}, {_short(row.label)} − {_short(base.label)}]"
        figures += _pair(FigureKind.DIFFERENCE, text, (f"{_name(row)} in {row.locality}", f"{_name(row)} nationally"),
                         (row, base), plan)
    return figures


def _setting_gaps(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"What is the difference between the facility and non-facility payment for 99214 in 2026?": per asked code
    and row in focus, the non-facility amount minus the facility amount of the measure asked (payment, PE RVU or
    total RVU; work and malpractice RVUs have one value), relative to the facility amount."""
    pair = MEASURED.get(plan.measure, ())
    (name, nonfac), (_, fac) = pair if len(pair) == 2 else MEASURED["payment"]
    what = name.removeprefix("non-facility").strip() or "payment"         # "PE RVU", "total RVU" or "payment"
    figures = []
    for row in modifier_rows(rows, plan.modifier):
        if not row.in_focus or row.hcpcs not in plan.focus_codes:
            continue
        amounts = (getattr(row, nonfac), getattr(row, fac))
        if any(a is None for a in amounts):
            continue
        value = _cents(amounts[0] - amounts[1]) if what == "payment" else amounts[0] - amounts[1]
        text = f"[computed: {_name(row)} non-facility − facility {what}, {_short(row.label)}]"
        figures.append(Figure(kind=FigureKind.SETTING_GAP, label=text, codes=(_name(row),), rows=(row.label,),
                              setting=f"non-facility − facility {what}", inputs=amounts, value=value,
                              percent=_percent(value, amounts[1]), place=row.locality))
    return figures


def _volumes(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"What would G0557 bring in for 100 patients a month for a year?": per row in focus of an asked code (a code
    written out, else the family's members), its amount times the payments the volume bills (`Volume.services`: a
    code paid per calendar month is billed once per patient per month when a yearly panel is asked). Of a family
    asked by name, its add-on codes (global period ZZZ) are left out: a volume of patients bills a base code."""
    volume = plan.volume
    if volume is None:
        return []
    figures = []
    for row in modifier_rows(rows, plan.modifier):
        if not row.in_focus or row.hcpcs not in plan.focus_codes or row.status in UNPAID_STATUS or \
                (not plan.named_codes and row.global_days == "ZZZ"):
            continue
        services, how = volume.services(payment_unit(row.hcpcs) in PERIODIC_UNITS,
                                        payment_unit(row.hcpcs) == ONCE_PER_EPISODE)
        units = dict(plan.units).get(row.hcpcs, 1)        # "plus 2 units of 99439 each": each patient bills two
        if units > 1:
            services, how = services * units, f"{how + ' × ' if how else ''}{units} units each"
        amounts: dict[Decimal, list[str]] = {}          # one figure for both settings when they pay the same
        for setting, field in measured_fields(plan):
            if stated(row, field) is not None:
                amounts.setdefault(stated(row, field), []).append(setting)
        for amount, settings in amounts.items():
            setting = " and ".join(settings)
            value = amount * services
            figures.append(Figure(kind=FigureKind.VOLUME, setting=setting, codes=(_name(row),), rows=(row.label,),
                                  label=f"[computed: {services} × {_name(row)}, {_short(row.label)}]",
                                  inputs=(amount,), value=value if "RVU" in setting else _cents(value),
                                  percent=None, place=row.locality, counts=(services,), how=how))
    if plan.switched:           # billing one code instead of the other: the difference first, what was asked
        return _volume_switch(figures, plan) + figures
    together = _volume_totals(figures, rows, plan)
    return _volume_changes(together or figures) + together + figures     # the codes together first: what was asked


def _volume_changes(figures: list[Figure]) -> list[Figure]:
    """"What's 1,000 units of 99214 worth in 2026 vs 2020?": per code (or codes together), place and setting, the
    volume's amount in the first asked final year to the last."""
    by_key: dict[tuple[str, str, str], list[Figure]] = {}
    for f in figures:
        if "NPRM" not in f.rows[0]:
            by_key.setdefault((f.codes[0], f.place, f.setting), []).append(f)
    found = []
    for (code, place, setting), series in by_key.items():
        series.sort(key=lambda f: f.rows[0])
        first, last = series[0], series[-1]
        if first is last or first.counts != last.counts:
            continue
        value = last.value - first.value
        found.append(Figure(kind=FigureKind.CHANGE, setting=setting, codes=(f"{first.counts[0]:,} × {code}",),
                            rows=(first.rows[0], last.rows[0]), inputs=(first.value, last.value), value=value,
                            percent=_percent(value, first.value), place=place, counts=first.counts, how=first.how,
                            label=f"[computed: {first.counts[0]} × {code}, {_short(first.rows[0])} → "
                                  f"{_short(last.rows[0])}]"))
    return found


def _year_sums(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """One code's amounts in the final years in focus added up, per place and setting asked ("the sum of 99495's 2025
    payment and its 2026 payment")."""
    figures = []
    by_place: dict[str, list[ValuationRow]] = {}
    for row in modifier_rows(rows, plan.modifier):
        if row.in_focus and not row.proposed and row.hcpcs in plan.focus_codes:
            by_place.setdefault(row.locality, []).append(row)
    for place, series in by_place.items():
        series.sort(key=lambda r: r.cy)
        if len(series) < 2:
            continue
        names = tuple(f"{_name(r)} CY{r.cy}" for r in series)
        label = f"[computed: {' + '.join(names)}]"
        figures += [replace(f, together=False) for f in _pair(FigureKind.TOTAL, label, names, tuple(series), plan)]
    return figures


def _total_changes(totals: list[Figure]) -> list[Figure]:
    """"The combined payment of G0556, G0557 and G0558 in 2025 versus 2026": per place and setting, the whole sum in
    the first vintage to the last (final years; a total that leaves a code out is not compared)."""
    by_key: dict[tuple[tuple[str, ...], str, str], list[Figure]] = {}
    for f in totals:
        if not f.how and "NPRM" not in f.label:
            by_key.setdefault((f.codes, f.place, f.setting), []).append(f)
    found = []
    for (codes, place, setting), series in by_key.items():
        first, last = series[0], series[-1]
        if first is last:
            continue
        value = last.value - first.value
        before, after = (f.label.rsplit(", ", 1)[1].rstrip("]") for f in (first, last))
        found.append(Figure(kind=FigureKind.CHANGE, setting=setting, codes=(" + ".join(codes),),
                            rows=(first.rows[0], last.rows[0]), inputs=(first.value, last.value), value=value,
                            percent=_percent(value, first.value), place=place,
                            label=f"[computed: {' + '.join(codes)}, {before} → {after}]"))
    return found


def _base_how(parts: list[Figure], units: dict[str, int]) -> str:
    """A total's arithmetic in words: the volume's own ("60 a month × 12 months"), then the units billed per patient
    ("2 units of 99439 each")."""
    plain = next((f.how for f in parts if units.get(f.codes[0], 1) == 1), parts[0].how.rsplit(" × ", 1)[0])
    extra = [f"{units[f.codes[0]]} units of {f.codes[0]} each" for f in parts if units.get(f.codes[0], 1) > 1]
    return ", ".join(part for part in (plain, *extra) if part)


def _by_row_and_setting(figures: list[Figure]) -> dict[tuple[str, str, str], list[Figure]]:
    """Volume figures by (row label, place, setting); a figure standing for both settings (the same amount) is in
    both."""
    by_key: dict[tuple[str, str, str], list[Figure]] = {}
    for f in figures:
        for setting in f.setting.split(" and "):
            by_key.setdefault((f.rows[0], f.place, setting), []).append(f)
    return by_key


def _volume_switch(figures: list[Figure], plan: QuestionPlan) -> list[Figure]:
    """"How much more would we make a year moving 300 CCM patients from 99490 to G0557?": per vintage, place and
    setting, the volume billed with the new code minus the same volume billed with the old one."""
    before, after = plan.switched
    found = []
    for (label, place, setting), parts in _by_row_and_setting(figures).items():
        pair = {f.codes[0]: f for f in parts}
        if before not in pair or after not in pair or pair[before].counts != pair[after].counts:
            continue
        old, new = pair[before], pair[after]
        services = new.counts[0]
        value = new.value - old.value
        found.append(Figure(kind=FigureKind.DIFFERENCE, setting=setting, rows=(label, label),
                            codes=(f"{services:,} × {after}", f"{services:,} × {before}"),
                            label=f"[computed: {services} × {after} − {services} × {before}, {_short(label)}]",
                            inputs=(new.value, old.value), value=value, percent=_percent(value, old.value),
                            place=place, counts=(services,), how=new.how))
    return found


def _volume_totals(figures: list[Figure], rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """Codes written out and billed together at one volume ("150 RPM patients billing 99457 and 99454 monthly"): per
    vintage, place and setting, the sum of their volume figures, when each bills the same number of payments and they
    are not alternatives (two base codes of one family)."""
    if len(plan.named_codes) < 2 or plan.bundles:
        return []
    chosen = {r.hcpcs: r for r in rows if r.in_focus}
    units = dict(plan.units)
    totals = []
    for (label, place, setting), parts in _by_row_and_setting(figures).items():
        codes = tuple(f.codes[0] for f in parts)
        base = {f.counts[0] // units.get(f.codes[0], 1) for f in parts}     # the payments each code bills per unit
        if set(codes) != set(plan.named_codes) or _alternatives([chosen[c] for c in codes if c in chosen]):
            continue
        if len(base) != 1:
            # one patient's span of codes billed on different units ("a year of RPM: 99453, 99454, 99457": the set-up
            # once, the others each period): each code's own count, added up
            if plan.volume is None or plan.volume.noun not in ("patients",) or plan.volume.count != 1 or units:
                continue
            names = [f"{f.counts[0]} × {f.codes[0]}" if f.counts[0] > 1 else f.codes[0] for f in parts]
            amounts = " + ".join(f"{f.counts[0]} × ${f.inputs[0]:,}" if f.counts[0] > 1 else f"${f.inputs[0]:,}"
                                 for f in parts)
            value = sum((f.value for f in parts), Decimal(0))
            totals.append(Figure(kind=FigureKind.VOLUME, setting=setting, codes=(" + ".join(names),), rows=(label,),
                                 label=f"[computed: {' + '.join(names)}, {_short(label)}]", inputs=(value,),
                                 value=value, percent=None, place=place, counts=(1,),
                                 how=f"one patient over {plan.volume.months} months, each code as often as it is "
                                     f"billed: {amounts}"))
            continue
        services = base.pop()
        names = [f"{units[c]} × {c}" if units.get(c, 1) > 1 else c for c in codes]
        each = sum((f.inputs[0] * units.get(f.codes[0], 1) for f in parts), Decimal(0))
        totals.append(Figure(kind=FigureKind.VOLUME, setting=setting, codes=(" + ".join(names),), rows=(label,),
                             label=f"[computed: {services} × ({' + '.join(names)}), {_short(label)}]",
                             inputs=(each,), value=sum((f.value for f in parts), Decimal(0)), percent=None,
                             place=place, counts=(services,), how=_base_how(parts, units)))
    return totals


# PFS status codes under which Medicare makes no payment for the code under the fee schedule (bundled, deleted,
# excluded, not valid for Medicare, measurement only, non-covered): RVUs times the CF is no payment for them (nor a
# volume of them). A, R, T are paid; C is priced by the contractor; J (anesthesia) is paid by the anesthesia formula.
RATIO_PLACES = Decimal("0.01")
COMPONENTS = {"work": ("work", "work_rvu", "work_rvu"), "pe": ("practice expense", "pe_nonfac_rvu", "pe_fac_rvu"),
              "mp": ("malpractice", "mp_rvu", "mp_rvu")}


def _ratios(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"How many 99213 visits equal one 27447 in work RVUs?": per vintage both asked codes have, the first code's
    amount divided by the second's, in each measure asked (payment by setting, or the RVU named), to 2 decimals."""
    top, bottom = plan.ratio
    index = _by_code_and_vintage([r for r in rows if r.in_focus], plan)
    figures = []
    for (code, label), upper in index.items():
        lower = index.get((bottom, label))
        if code != top or lower is None:
            continue
        for setting, field in measured_fields(plan):
            a, b = stated(upper, field), stated(lower, field)
            if a is None or not b:
                continue
            # "what percent of 27447 is 99213": the same division, said as a percent to a tenth
            percent = (a / b * 100).quantize(TENTH, rounding=ROUND_HALF_UP) if plan.ratio_percent else None
            figures.append(Figure(kind=FigureKind.RATIO, label=f"[computed: {_name(upper)} ÷ {_name(lower)}, "
                                  f"{_short(label)}]", codes=(_name(upper), _name(lower)),
                                  rows=(upper.label, lower.label), setting=setting, inputs=(a, b),
                                  value=(a / b).quantize(RATIO_PLACES, rounding=ROUND_HALF_UP), percent=percent,
                                  place=upper.locality, how="percent" if plan.ratio_percent else ""))
        # "How many 99213 visits equal one 27447?": a surgery the file prices only in a facility (non-facility PE NA)
        # against an office service: the facility amount over the office (non-facility) one, said as such
        a, b = stated(upper, "payment_fac"), stated(lower, "payment_nonfac")
        if plan.measure == "payment" and a and b and upper.nonfac_na == "NA" and plan.setting is Setting.BOTH:
            figures.append(Figure(kind=FigureKind.RATIO, label=f"[computed: {_name(upper)} facility ÷ {_name(lower)} "
                                  f"non-facility, {_short(label)}]", codes=(_name(upper), _name(lower)),
                                  rows=(upper.label, lower.label), setting="facility", inputs=(a, b),
                                  value=(a / b).quantize(RATIO_PLACES, rounding=ROUND_HALF_UP), percent=None,
                                  place=upper.locality, how="across settings"))
    return figures


def _shares(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"What percent of 99214's total RVUs is practice expense?": per row in focus, the component's RVUs as a percent of
    the total RVUs of each setting asked (the same share of the payment: payment = total RVUs x CF, GPCIs aside)."""
    name, nonfac, fac = COMPONENTS[plan.share]
    settings = [("non-facility", nonfac, "total_nonfac"), ("facility", fac, "total_fac")]
    settings = [s for s in settings if plan.setting is Setting.BOTH or
                (s[0] == "facility") == (plan.setting is Setting.FACILITY)]
    figures = []
    for row in modifier_rows(rows, plan.modifier):
        if not row.in_focus or row.hcpcs not in plan.focus_codes:
            continue
        for setting, part_field, total_field in settings:
            part, total = stated(row, part_field), stated(row, total_field)
            if part is None or not total:
                continue
            share = _percent(part, total)
            figures.append(Figure(kind=FigureKind.SHARE, label=f"[computed: {_name(row)} {name} share, "
                                  f"{_short(row.label)}]", codes=(_name(row),), rows=(row.label,),
                                  setting=f"{setting} total RVU", inputs=(part, total), value=share, percent=share,
                                  how=name, place=row.locality))
    return figures


def _stated(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"My MAC paid $92.03 for 99213 in 2025 - does that match?": the amount given minus the asked code's newest row in
    focus, per setting asked (percent of the row's amount)."""
    focus = [r for r in modifier_rows(rows, plan.modifier) if r.in_focus and not r.proposed and
             r.hcpcs in plan.focus_codes]
    if not focus or plan.stated is None:
        return []
    row = max(focus, key=lambda r: r.cy)
    figures = []
    for setting, field in measured_fields(replace(plan, measure="payment")):
        amount = stated(row, field)
        if amount is None:
            continue
        value = _cents(plan.stated - amount)
        figures.append(Figure(kind=FigureKind.STATED, label=f"[computed: ${plan.stated} given − {_name(row)}, "
                              f"{_short(row.label)}]", codes=(_name(row),), rows=(row.label,), setting=setting,
                              inputs=(plan.stated, amount), value=value, percent=_percent(value, amount),
                              place=row.locality))
    return figures


def _what_if(rows: Sequence[ValuationRow], plan: QuestionPlan, volumes: Sequence[Figure] = ()) -> list[Figure]:
    """"What would a 10% conversion factor cut mean for 99214?": each final row in focus of an asked code, its
    payment at the CF changed by that percent (total RVUs x the changed CF, cents half-up; a locality row scales by
    the same share, its GPCIs unchanged), against its payment now; at the volume the question prices ("50 patients a
    month ... per year": `volumes`, one row's VOLUME figures), that many times."""
    focus = [r for r in modifier_rows(rows, plan.modifier) if r.in_focus and not r.proposed and
             r.hcpcs in plan.focus_codes and r.cf]
    billed = {(f.rows[0], setting): f.counts[0] for f in volumes if len(f.rows) == 1
              for setting in f.setting.split(" and ")}
    figures = []
    other = _year_cf(plan.cf_year) if plan.cf_year else plan.cf_value
    if (plan.cf_year and other is None) or (plan.cf_change is not None and plan.cf_change <= -100):
        return []                   # no conversion factor to pay with (the pipeline says so)
    for row in focus:
        cf = other or (row.cf * (1 + plan.cf_change / 100)).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
        change = plan.cf_change if not other else ((other / row.cf - 1) * 100).quantize(TENTH, rounding=ROUND_HALF_UP)
        for setting, field in measured_fields(replace(plan, measure="payment")):
            now = stated(row, field)
            if now is None:
                continue
            total = getattr(row, "total_nonfac" if field == "payment_nonfac" else "total_fac")
            # nationally total RVUs x the changed CF, as the file's payments are; a locality's amount scales alike
            then = payment(total, cf) if not row.locality and total is not None else _cents(now * cf / row.cf)
            count = billed.get((row.label, setting))
            name = f"{count:,} × {_name(row)}" if count else _name(row)
            now, then = (now * count, then * count) if count else (now, then)
            at = f"the CY{plan.cf_year}{' proposed' * year_cf_is_proposed(plan.cf_year)} CF" if plan.cf_year else \
                f"a CF of ${other}" if other else f"a CF {abs(change)}% {'lower' if change < 0 else 'higher'}"
            figures.append(Figure(kind=FigureKind.WHAT_IF, label=f"[computed: {name} at {at}, "
                                  f"{_short(row.label)}]", codes=(name,), rows=(row.label,), setting=setting,
                                  inputs=(now, then), value=_cents(then - now), percent=change,
                                  place=row.locality, how=f"${cf}", counts=(count,) if count else ()))
    return figures


def _needed(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"How many 99213 visits a month does it take to earn $10,000?": per setting asked, the newest final row of the one
    asked code, the fewest services whose payments reach the amount (the amount over the payment, rounded up), with
    what that many and one fewer bring in."""
    target = plan.target
    focus = [r for r in modifier_rows(rows, plan.modifier) if r.in_focus and not r.proposed and not r.locality
             and r.hcpcs in plan.focus_codes]
    if target is None or len(plan.focus_codes) != 1 or not focus:
        return []
    newest = max(r.cy for r in focus)
    figures = []
    for row in [r for r in focus if r.cy == newest]:
        for setting, field in measured_fields(replace(plan, measure="payment")):
            amount = stated(row, field)
            if not amount:
                continue
            n = int((target / amount).to_integral_value(rounding=ROUND_CEILING))     # rounded up
            figures.append(Figure(kind=FigureKind.NEEDED, label=f"[computed: {_name(row)} services to reach "
                                  f"${target:,}, {_short(row.label)}]", codes=(_name(row),), rows=(row.label,),
                                  setting=setting, inputs=(target, amount, amount * n, amount * (n - 1)), value=n,
                                  percent=None, place=row.locality, counts=(n, n - 1)))
    return figures


def _priced_together(rows: Sequence[ValuationRow], plan: QuestionPlan, finals: bool = False):
    """(vintage label, setting, [(row, amount), ...]) for each vintage in focus (final ones only with `finals`) and
    measure asked in which two asked codes or more have an amount to compute with."""
    by_label: dict[str, list[ValuationRow]] = {}
    for row in modifier_rows(rows, plan.modifier):
        if row.in_focus and row.hcpcs in plan.focus_codes and not (finals and row.proposed):
            by_label.setdefault(row.label, []).append(row)
    for label, group in by_label.items():
        for setting, field in measured_fields(plan):
            priced = [(r, stated(r, field)) for r in group if stated(r, field) is not None]
            if len(priced) >= 2:
                yield label, setting, priced


def _year_cf(cy: int) -> Decimal | None:
    """A final rule's national CF of `cy` (of a year with two, the later period's; of QP and non-QP, the non-QP); of a
    year with only a proposed rule (CY2027), its proposed CF (year_cf_is_proposed says which)."""
    from carenav_core.pfs.factors import factor_rows
    found = [r for r in factor_rows() if r.cy == cy and not r.proposed and r.variant != "QP"]
    if not found:
        found = [r for r in factor_rows() if r.cy == cy and r.proposed and r.variant != "QP"]
    return max(found, key=lambda r: r.effective).amount if found else None


def year_cf_is_proposed(cy: int) -> bool:
    """The CY has a proposed conversion factor on file and no final one ("what will 99213 pay in 2027?")."""
    from carenav_core.pfs.factors import factor_rows
    rows = [r for r in factor_rows() if r.cy == cy]
    return bool(rows) and all(r.proposed for r in rows)


def _statistics(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"What is the average APCM payment?": per vintage in focus, the mean (cents half-up) or median of the asked
    codes' amounts in each measure, over the codes that have one (a setting marked NA is left out)."""
    figures = []
    for label, setting, priced in _priced_together(rows, plan):
        amounts = [a for _, a in priced]
        if plan.statistic == "median":
            ordered = sorted(amounts)
            middle = len(ordered) // 2
            value = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
        else:
            value = sum(amounts, Decimal(0)) / len(amounts)
        value = _cents(value) if "RVU" not in setting else value.quantize(CENT, rounding=ROUND_HALF_UP)
        names = tuple(_name(r) for r, _ in priced)
        figures.append(Figure(kind=FigureKind.STATISTIC, label=f"[computed: {plan.statistic} of "
                              f"{', '.join(names)}, {_short(label)}]", codes=names,
                              rows=tuple(r.label for r, _ in priced), setting=setting, inputs=tuple(amounts),
                              value=value, percent=None, place=priced[0][0].locality, how=plan.statistic))
    return figures


def _components(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"Do 71046-26 and 71046-TC add up to the global?": per asked code and vintage in focus with both component
    rows and a global row, the two components' amounts added, beside the global amount, in each measure asked."""
    index = {(r.hcpcs, r.mod, r.label, r.locality): r for r in rows if r.in_focus and r.hcpcs in plan.focus_codes}
    figures = []
    for (code, mod, label, place), whole in index.items():
        pc, tc = index.get((code, "26", label, place)), index.get((code, "TC", label, place))
        if mod or pc is None or tc is None:
            continue
        for setting, field in measured_fields(plan):
            amounts = (stated(pc, field), stated(tc, field), stated(whole, field))
            if any(a is None for a in amounts):
                continue
            # "what share of the global is the professional component": that part's percent of the global amount
            part = {"26": amounts[0], "TC": amounts[1]}.get(plan.part_share)
            figures.append(Figure(kind=FigureKind.COMPONENTS, label=f"[computed: {code}-26 + {code}-TC vs {code}, "
                                  f"{_short(label)}]", codes=(f"{code}-26", f"{code}-TC", code),
                                  rows=(pc.label, tc.label, whole.label), setting=setting, inputs=amounts,
                                  value=amounts[0] + amounts[1],
                                  percent=_percent(part, amounts[2]) if part is not None else None, place=place,
                                  how=plan.part_share))
    return figures


def locality_extremes(local: Sequence[ValuationRow], rows: Sequence[ValuationRow], plan: QuestionPlan
                      ) -> list[Figure]:
    """"Which locality pays the most for 99213 in 2026?": per asked code and final vintage in focus, the locality rows
    (`local`: every locality priced) with the highest (or lowest, or both) amount in each measure asked, against the
    national amount (`rows`); ties name every locality tied. `how` holds the end and how many localities were priced."""
    national = {(r.hcpcs, r.mod, r.label): r for r in rows if not r.locality and not r.proposed}
    groups: dict[tuple[str, str, str], list[ValuationRow]] = {}
    for row in local:
        groups.setdefault((row.hcpcs, row.mod, row.label.split(" · ")[0] + "]"), []).append(row)
    ends = ("most", "least") if plan.extreme == "both" else (plan.extreme,)
    figures = []
    for key, places in groups.items():
        base = national.get(key)
        if base is None or not base.in_focus:
            continue
        for setting, field in measured_fields(replace(plan, measure="payment")):
            priced = [(r, stated(r, field)) for r in places if stated(r, field) is not None]
            whole = stated(base, field)
            if not priced or whole is None:
                continue
            for end in ends:
                best = (max if end == "most" else min)(a for _, a in priced)
                where = [r.locality for r, a in priced if a == best]
                figures.append(Figure(kind=FigureKind.EXTREME, label=f"[computed: {_name(base)} {end} of "
                                      f"{len(priced)} localities, {_short(base.label)}]", codes=(_name(base),),
                                      rows=(base.label,), setting=setting, inputs=(best, whole),
                                      value=_cents(best - whole), percent=_percent(best - whole, whole),
                                      place="; ".join(where), how=end, counts=(len(priced),)))
    return figures


_PASSES = {"over": lambda a, b: a > b, "under": lambda a, b: a < b, "at least": lambda a, b: a >= b,
           "at most": lambda a, b: a <= b}


def _counted_over(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"How many of 99202-99205 pay over $150?": per vintage in focus and measure asked, the asked codes whose amount is
    over, under, at least or at most the amount given; `counts` holds how many codes had an amount."""
    op, limit = plan.threshold
    figures = []
    for label, setting, priced in _priced_together(rows, plan, finals=True):
        passing = [(r, a) for r, a in priced if _PASSES[op](a, limit)]
        figures.append(Figure(kind=FigureKind.COUNT, label=f"[computed: asked codes {op} ${limit}, "
                              f"{_short(label)}]", codes=tuple(_name(r) for r, _ in passing) or ("none",),
                              rows=tuple(r.label for r, _ in passing), setting=setting,
                              inputs=tuple(a for _, a in passing), value=Decimal(len(passing)), percent=None,
                              place=priced[0][0].locality, counts=(len(priced),),
                              how=f"{op} ${limit} of {', '.join(_name(r) for r, _ in priced)}"))
    return figures


def _qp_differences(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"What is the difference between the QP and non-QP payment for 99215 in 2026?": per row in focus of a year with
    both CFs, the amount at the QP CF minus the amount at the non-QP CF, per setting asked."""
    figures = []
    for row in modifier_rows(rows, plan.modifier):
        if not row.in_focus or row.proposed or row.hcpcs not in plan.focus_codes:
            continue
        amounts = {row.cf_label: (row.payment_nonfac, row.payment_fac)}
        amounts.update({c.label: (nf, f) for c, nf, f in row.other_payments()})
        qp = next((v for k, v in amounts.items() if k.endswith(" QP")), None)
        other = next((v for k, v in amounts.items() if k.endswith(" non-QP")), None)
        if qp is None or other is None or row.status in UNPAID_STATUS | NOT_NATIONALLY_PRICED:
            continue
        for setting, field in measured_fields(replace(plan, measure="payment")):
            i = 0 if field == "payment_nonfac" else 1
            if stated(row, field) is None or qp[i] is None or other[i] is None:
                continue
            value = _cents(qp[i] - other[i])
            if plan.volume is not None:     # "how much more would 1,000 99214 visits bring in for a QP": at the volume
                n, how = plan.volume.services(payment_unit(row.hcpcs) in PERIODIC_UNITS,
                                              payment_unit(row.hcpcs) == ONCE_PER_EPISODE)
                figures.append(Figure(kind=FigureKind.DIFFERENCE, label=f"[computed: {n} × {_name(row)} QP − "
                                      f"non-QP, {_short(row.label)}]", codes=(f"{n:,} × {_name(row)} at the QP CF",
                                                                            f"{n:,} × {_name(row)} at the non-QP CF"),
                                      rows=(row.label, row.label), setting=setting, inputs=(n * qp[i], n * other[i]),
                                      value=n * qp[i] - n * other[i], percent=_percent(value, other[i]),
                                      place=row.locality, counts=(n, n), how=how))
            figures.append(Figure(kind=FigureKind.DIFFERENCE, label=f"[computed: {_name(row)} QP − non-QP, "
                                  f"{_short(row.label)}]", codes=(f"{_name(row)} at the QP CF",
                                                                  f"{_name(row)} at the non-QP CF"),
                                  rows=(row.label, row.label), setting=setting, inputs=(qp[i], other[i]), value=value,
                                  percent=_percent(value, other[i]), place=row.locality))
    return figures


COINSURANCE_SHARE = Decimal("0.80")     # Part B pays 80% of the allowed amount, after the deductible (42 CFR 410.152)
# Preventive services Medicare pays in full: no coinsurance and no Part B deductible when the practitioner accepts
# assignment (CMS MLN "Medicare Preventive Services" quick reference chart,
# https://www.cms.gov/medicare/prevention/prevntiongeninfo/medicare-preventive-services/mps-quickreferencechart-1.html;
# the wellness visits: MLN "Medicare Wellness Visits"). Code -> what it is, said in the sentence.
NO_COST_SHARING = {
    "G0402": "the Welcome to Medicare preventive visit", "G0438": "an annual wellness visit",
    "G0439": "an annual wellness visit", "77067": "a screening mammogram", "77063": "screening breast tomosynthesis",
    "G0121": "a screening colonoscopy", "G0105": "a screening colonoscopy (high risk)",
    "G0104": "a screening flexible sigmoidoscopy", "G0101": "a screening pelvic and breast exam",
    "G0008": "a flu shot's administration", "G0009": "a pneumococcal shot's administration",
    "G0010": "a hepatitis B shot's administration", "G0444": "a depression screening",
    "G0442": "an alcohol misuse screening", "G0443": "alcohol misuse counseling",
    "G0446": "cardiovascular disease behavioral therapy", "G0447": "obesity counseling",
    "G0445": "sexually transmitted infection counseling", "G0296": "lung cancer screening counseling",
    "76706": "an abdominal aortic aneurysm screening", "77078": "a bone mass measurement",
    "77080": "a bone mass measurement", "77081": "a bone mass measurement", "G0130": "a bone mass measurement",
    "G0513": "prolonged preventive services", "G0514": "prolonged preventive services",
}
# a screening colonoscopy that removes a polyp is then a diagnostic one: the patient pays a coinsurance phased out by the
# Consolidated Appropriations Act, 2021 section 122: 15% in 2023-2026, 10% in 2027-2029, none from 2030
POLYP_NOTE = {"G0121", "G0105", "G0104"}
# A screening colonoscopy or flexible sigmoidoscopy that removes a polyp or tissue is billed as the diagnostic code
# (CPT 45330-45350 sigmoidoscopy, 45378-45398 colonoscopy): no Part B deductible, and a coinsurance the Consolidated
# Appropriations Act, 2021, section 122 lowers from 20% to 15% in 2023-2026, 10% in 2027-2029 and none from 2030
# (Social Security Act section 1833(dd); CMS MLN "Medicare Preventive Services", colorectal cancer screening).
SCREENING_DIAGNOSTIC = frozenset({*(str(c) for c in range(45330, 45351)), *(str(c) for c in range(45378, 45399))})


def screening_polyp_share(cy: int) -> Decimal:
    """The patient's coinsurance of a screening colonoscopy that removes a polyp, in CY `cy`.

    >>> screening_polyp_share(2022), screening_polyp_share(2026), screening_polyp_share(2027), screening_polyp_share(2030)
    (Decimal('0.20'), Decimal('0.15'), Decimal('0.10'), Decimal('0.00'))
    """
    return Decimal("0.20") if cy < 2023 else Decimal("0.15") if cy <= 2026 else Decimal("0.10") if cy <= 2029 \
        else Decimal("0.00")


def _coinsurance(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"What is Medicare's 80% share of 99214?": per row in focus of an asked code, its amount in each setting asked
    split into Medicare's 80% (cents half-up) and the patient's 20% coinsurance (the rest)."""
    figures = []
    for row in modifier_rows(rows, plan.modifier):
        if not row.in_focus or row.hcpcs not in plan.focus_codes:
            continue
        for setting, field in measured_fields(replace(plan, measure="payment")):
            allowed = stated(row, field)
            if allowed is None:
                continue
            if row.hcpcs in NO_COST_SHARING:        # a preventive service: Medicare pays all of it
                figures.append(Figure(kind=FigureKind.COINSURANCE, label=f"[computed: {_name(row)} Medicare 100% / "
                                      f"patient 0%, {_short(row.label)}]", codes=(_name(row),), rows=(row.label,),
                                      setting=setting, inputs=(allowed, Decimal("0.00")), value=allowed,
                                      percent=None, place=row.locality, how="100% / 0% preventive"))
                continue
            if plan.screening and row.hcpcs in SCREENING_DIAGNOSTIC:     # a polyp removed at a screening
                patient = screening_polyp_share(row.cy)
                ours, theirs = f"{(1 - patient) * 100:.0f}%", f"{patient * 100:.0f}%"
                medicare = _cents(allowed * (1 - patient))
                figures.append(Figure(kind=FigureKind.COINSURANCE, label=f"[computed: {_name(row)} Medicare {ours} / "
                                      f"patient {theirs}, {_short(row.label)}]", codes=(_name(row),),
                                      rows=(row.label,), setting=setting, inputs=(allowed, allowed - medicare),
                                      value=medicare, percent=None, place=row.locality,
                                      how=f"{ours} / {theirs} screening (Consolidated Appropriations Act, 2021, "
                                          f"section 122: 15% in 2023-2026, 10% in 2027-2029, 0% from 2030)"))
                continue
            medicare = _cents(allowed * COINSURANCE_SHARE)
            figures.append(Figure(kind=FigureKind.COINSURANCE, label=f"[computed: {_name(row)} Medicare 80% / "
                                  f"patient 20%, {_short(row.label)}]", codes=(_name(row),), rows=(row.label,),
                                  setting=setting, inputs=(allowed, allowed - medicare), value=medicare,
                                  percent=None, place=row.locality, how="80% / 20%"))
    return figures


SEQUESTRATION_SHARE = Decimal("0.98")    # 2% off Medicare's payment on claims from 2022-07-01 (Budget Control Act of 2011)
SEQUESTRATION_FULL_FROM = 2023             # the first whole calendar year at 2% since the suspension of 2020-2022


def _sequestered(splits: list[Figure]) -> list[Figure]:
    """"After the 2% sequestration": each Medicare 80% amount of a year with the 2% reduction in force all year, less
    2% (cents half-up); earlier years are left out (said by the pipeline)."""
    figures = []
    for split in splits:
        year = re.search(r"CY(\d{4})", split.label)
        if split.kind is not FigureKind.COINSURANCE or not year or int(year.group(1)) < SEQUESTRATION_FULL_FROM:
            continue
        share = "100%" if split.how.endswith("preventive") else split.how.split(" / ")[0]   # 80%, all, 85% ...
        figures.append(Figure(kind=FigureKind.SEQUESTRATION, label=re.sub(r"Medicare \d+% / patient \d+%",
                                                                          f"Medicare {share} less 2%", split.label),
                              codes=split.codes, rows=split.rows, setting=split.setting, inputs=(split.value,),
                              value=_cents(split.value * SEQUESTRATION_SHARE), percent=Decimal(2), place=split.place,
                              how=f"2% 2022 2011 {share}"))
    return figures


def _coinsurance_changes(splits: list[Figure]) -> list[Figure]:
    """"How much did Medicare's 80% share of 99213 change from 2025 to 2026?": per code, place and setting, Medicare's
    share and the patient's coinsurance of the first asked final year to the last, and each step between."""
    by_key: dict[tuple[str, str, str], list[Figure]] = {}
    for f in splits:
        if "NPRM" not in f.rows[0]:
            by_key.setdefault((f.codes[0], f.place, f.setting), []).append(f)
    found = []
    for (code, place, setting), series in by_key.items():
        series.sort(key=lambda f: f.rows[0])
        steps = ([(series[0], series[-1])] if len(series) > 2 else []) + list(pairwise(series))
        for share, short, pick in (("Medicare's 80%", "Medicare 80%", lambda f: f.value),
                                   ("The patient's 20%", "patient 20%", lambda f: f.inputs[1])):
            for first, last in steps:
                value = pick(last) - pick(first)
                found.append(Figure(kind=FigureKind.CHANGE, setting=setting, codes=(f"{share} of {code}",),
                                    rows=(first.rows[0], last.rows[0]), inputs=(pick(first), pick(last)),
                                    value=value, percent=_percent(value, pick(first)), place=place,
                                    how=share.removeprefix("The ").removeprefix("Medicare's "),
                                    label=f"[computed: {code} {short}, {_short(first.rows[0])} → "
                                          f"{_short(last.rows[0])}]"))
    return found


# Minutes in a CMS short descriptor: "Chrnc care mgmt staff 1st 20", "Rpm tx mgmt ea addl 20 min", "Psytx w pt 60
# minutes"; not a range ("Eeg 41-60 minutes"), a bound ("Anesthe <60 min", "60 min/>") or a window ("w/in 30min")
_DESCRIPTOR_MINUTES = re.compile(r"(?<![\d<>=-])(?<!in )(?<!in)(?P<n>\d{1,3})\s*(?:min|mins|minutes)\b(?!\s*/?>)"
                                 r"|\b1st (?P<first>\d{1,3})$", re.IGNORECASE)


def descriptor_minutes(description: str) -> int | None:
    """The minutes a code's short descriptor gives its service, when it gives one number of them.

    >>> descriptor_minutes("Chrnc care mgmt staff 1st 20"), descriptor_minutes("Office o/p est low 20 min")
    (20, 20)
    >>> descriptor_minutes("Eeg 41-60 minutes"), descriptor_minutes("Anesthe <60 min as docd")
    (None, None)
    >>> descriptor_minutes("Adv prim care mgmt lvl 1"), descriptor_minutes("1 bodytemp >=35.5cw/in 30min")
    (None, None)
    """
    found = {int(m.group("n") or m.group("first")) for m in _DESCRIPTOR_MINUTES.finditer(description.strip())}
    if re.search(r"\d\s*-\s*\d+\s*min", description, re.IGNORECASE):
        return None
    return found.pop() if len(found) == 1 and 0 not in found else None


def _rates(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"What is 99490 worth per hour?": per row in focus of an asked code, its amount in each measure asked divided by
    the code's minutes (those the question gives its one code, else its short descriptor's) and, per hour, times 60;
    cents half-up. A code with no minutes to divide by gets no figure (`timeless_codes` names it)."""
    figures = []
    for row in modifier_rows(rows, plan.modifier):
        if not row.in_focus or row.hcpcs not in plan.focus_codes:
            continue
        minutes = plan.minutes or descriptor_minutes(row.description)
        if not minutes:
            continue
        source = "the question gives" if plan.minutes else f"descriptor “{row.description.strip()}”"
        for setting, field in measured_fields(plan):
            amount = stated(row, field)
            if amount is None:
                continue
            per = amount * 60 / minutes if plan.rate == "hour" else amount / minutes
            value = _cents(per) if "RVU" not in setting else per.quantize(CENT, rounding=ROUND_HALF_UP)
            figures.append(Figure(kind=FigureKind.RATE, label=f"[computed: {_name(row)} per {plan.rate}, "
                                  f"{_short(row.label)}]", codes=(_name(row),), rows=(row.label,), setting=setting,
                                  inputs=(amount, Decimal(minutes)), value=value, percent=None, place=row.locality,
                                  how=source))
    return figures


def timeless_codes(rows: Sequence[ValuationRow], plan: QuestionPlan) -> tuple[str, ...]:
    """The asked codes a rate per hour or minute cannot be computed for: the question gives no minutes and their short
    descriptor no single number of them ("Adv prim care mgmt lvl 1", "Chrnc care mgmt staf ea addl")."""
    if not plan.rate or plan.minutes:
        return ()
    return tuple(dict.fromkeys(r.hcpcs for r in modifier_rows(rows, plan.modifier) if r.in_focus and
                               r.hcpcs in plan.focus_codes and not descriptor_minutes(r.description)))


# What a procedure billed bilaterally (modifier 50) is paid, by its bilateral surgery indicator (data/indicators.toml:
# 1 = 150%, 3 = each side at 100%, 0 and 2 = 100%: no adjustment or already bilateral)
BILATERAL_SHARE = {"1": Decimal("1.5"), "3": Decimal("2"), "0": Decimal("1"), "2": Decimal("1")}


def _indicated_shares(rows: Sequence[ValuationRow], indicators: Sequence, plan: QuestionPlan, key: str,
                      share_of, kind: FigureKind, what: str, how) -> list[Figure]:
    """Per asked code whose `key` indicator (read in `indicators`: chat.indicators.IndicatorFact) gives a share
    (`share_of(value)`, None for none), its newest final row's amount in each setting asked at that share."""
    figures = []
    for fact in indicators:
        value = fact.meaning.value
        share = share_of(value) if fact.meaning.key == key else None
        if share is None:
            continue
        code, _, mod = fact.code.partition("-")
        national = [r for r in rows if r.label == fact.row_label and r.hcpcs == code and r.mod == mod
                    and not r.locality]
        # a place asked ("in Seattle"): that year's locality rows of the code, else its national row
        local = [r for r in rows if r.in_focus and r.locality and r.hcpcs == code and r.mod == mod and
                 r.cy == fact.cy and not r.proposed]
        for row in local or national[:1]:
            for setting, field in measured_fields(replace(plan, measure="payment")):
                amount = stated(row, field)
                if amount is not None:
                    figures.append(Figure(kind=kind, label=f"[computed: {_name(row)} {what}, {_short(row.label)}]",
                                          codes=(_name(row),), rows=(row.label,), setting=setting, inputs=(amount,),
                                          value=_cents(amount * share), percent=share * 100, how=how(share, value),
                                          place=row.locality))
    return figures


# The global package's parts a question asks for, by the modifier that bills them or by name (Claims Processing
# Manual ch.12 §40.2: 54 surgical care only = pre- + intra-operative shares, 55 postoperative management only = the
# post-operative share, 56 preoperative management only = the pre-operative share)
PERIOP_PARTS = (("modifier 54 (surgical care only)", re.compile(r"\bmodifiers?\s*-?\s*54\b|-54\b|\bsurgical care only\b",
                                                                re.IGNORECASE), (0, 1)),
                ("modifier 55 (postoperative management only)",
                 re.compile(r"\bmodifiers?\s*-?\s*55\b|-55\b|\bpost-?\s?operative management only\b", re.IGNORECASE),
                 (2,)),
                ("modifier 56 (preoperative management only)",
                 re.compile(r"\bmodifiers?\s*-?\s*56\b|-56\b|\bpre-?\s?operative management only\b", re.IGNORECASE),
                 (0,)),
                ("pre-operative care", re.compile(r"\bpre-?\s?op\w*", re.IGNORECASE), (0,)),
                ("intra-operative care", re.compile(r"\bintra-?\s?op\w*", re.IGNORECASE), (1,)),
                ("post-operative care", re.compile(r"\bpost-?\s?op\w*", re.IGNORECASE), (2,)))
_PERIOP_NAMES = ("pre-operative", "intra-operative", "post-operative")


def asked_periop_parts(text: str) -> list[tuple[str, tuple[int, ...]]]:
    """The parts of the global package a question asks the amount of: a modifier first (its parts), else each part
    named ("the post-op share"); [] when none or all three are named (then the split itself is the answer)."""
    modifiers = [(name, parts) for name, pattern, parts in PERIOP_PARTS[:3] if pattern.search(text)]
    if modifiers:
        return modifiers
    named = [(name, parts) for name, pattern, parts in PERIOP_PARTS[3:] if pattern.search(text)]
    return named if len(named) < 3 else []


def periop_figures(rows: Sequence[ValuationRow], indicators: Sequence, plan: QuestionPlan, text: str
                   ) -> list[Figure]:
    """"What is 27130 paid with modifier 54?", "What share of 27130's payment is post-operative care?": per asked code
    whose pre-, intra- and post-operative shares were read (chat.indicators.periop_meaning), its newest final row's
    amount in each setting asked at the asked parts' share."""
    figures = []
    for name, parts in asked_periop_parts(text):
        def share_of(value: str, parts=parts) -> Decimal | None:
            shares = [Decimal(v) for v in re.findall(r"\d+(?:\.\d+)?", value)]
            return sum((shares[i] for i in parts), Decimal(0)) / 100 if len(shares) == 3 and any(shares) else None

        def how(share: Decimal, value: str, name=name, parts=parts) -> str:
            shares = re.findall(r"\d+(?:\.\d+)?", value)
            return f"{name} | " + " + ".join(f"{_PERIOP_NAMES[i]} {shares[i]}%" for i in parts) + f" | {value}"
        figures += _indicated_shares(rows, indicators, plan, "periop", share_of, FigureKind.PERIOP, name, how)
    return figures


SECOND_SHARE = Decimal("0.5")     # Claims Processing Manual ch.12 §40.6: the second and later procedures at 50%
# "29881 billed as a second procedure", "with modifier 51", "29881-51": one code paid as a later procedure of the day
SECOND_PROCEDURE = re.compile(r"\b(?:second(?:ary)?|subsequent|additional|later|other)\s+(?:\w+\s+)?(?:procedure|"
                              r"surgery|surgical procedure)\b|\bmodifier\s*-?\s*51\b|\b51\s+modifier\b|"
                              r"\b[0-9A-Z]\d{3}[0-9A-Z]-51\b", re.IGNORECASE)


def second_procedure_figures(rows: Sequence[ValuationRow], indicators: Sequence, plan: QuestionPlan
                             ) -> list[Figure]:
    """"29881 billed as a second procedure with modifier 51": per asked code whose multiple procedure indicator ranks
    the day's procedures (1-3), its newest final row's amount in each setting asked at 50% (under 3, when the first
    procedure is not an endoscopy of its family; `how` carries the ENDO BASE code, which decides it otherwise)."""
    return _indicated_shares(rows, indicators, plan, "mult_proc",
                             lambda value: SECOND_SHARE if value in SURGICAL_MULTIPLE else None, FigureKind.SECOND,
                             "as a second procedure",
                             lambda _, value: f"51 indicator {value}")


def bilateral_figures(rows: Sequence[ValuationRow], indicators: Sequence, plan: QuestionPlan) -> list[Figure]:
    """"What would a bilateral 27447 pay in 2026?": per asked code whose bilateral surgery indicator was read, its
    newest final row's amount in each setting asked times the indicator's share."""
    return _indicated_shares(rows, indicators, plan, "bilat_surg", BILATERAL_SHARE.get, FigureKind.BILATERAL,
                             "bilateral", lambda share, value: f"{share * 100:.0f}% modifier 50 indicator {value}")


def practitioner_figures(rows: Sequence[ValuationRow], plan: QuestionPlan, computed: Sequence[Figure] = ()
                         ) -> list[Figure]:
    """"What does an NP get for 99214?": each row in focus of an asked code at the share of the fee schedule amount that
    practitioner (plan.practitioner) is paid, per setting asked; a volume asked ("an NP billing 20 99213s a day for 250
    days", among `computed`) at that share, each service's share rounded to the cent as each claim line is paid."""
    if plan.practitioner is None:
        return []
    who, share, law = plan.practitioner
    figures = []
    for volume in computed:
        if volume.kind is not FigureKind.VOLUME or not volume.money or " + " in volume.codes[0]:
            continue
        each = _cents(volume.inputs[0] * share)
        services = volume.counts[0]
        figures.append(Figure(kind=FigureKind.PRACTITIONER, label=f"[computed: {services} × {volume.codes[0]} {who} "
                              f"{share * 100:.0f}%, {volume.label.rsplit(', ', 1)[-1].rstrip(']')}]",
                              codes=volume.codes, rows=volume.rows, setting=volume.setting,
                              inputs=(volume.inputs[0], each), value=each * services, percent=share * 100,
                              place=volume.place, counts=(services,),
                              how=f"{who} {law}" + (f" | {volume.how}" if volume.how else "")))
    if figures:             # the volume asked is what the practitioner's share applies to
        return figures
    for day in computed:    # "3 units of 97110 with modifier CQ": the share applies to the day's reduced payment
        source = day.label.rsplit(", ", 1)[-1].rstrip("]")            # "PFS CY2026 RVU26C"
        year = re.search(r"CY(\d{4})", source)
        if day.kind is not FigureKind.MULTIPLE or not day.money or year is None or (
                law == "1834(v)" and int(year.group(1)) < THERAPY_ASSISTANT_FROM):
            continue
        units = Counter()
        for code, count in zip(day.codes, day.counts):
            units[code] += count
        said = " and ".join(f"{n} × {code}" if n > 1 else code for code, n in units.items())
        figures.append(Figure(kind=FigureKind.PRACTITIONER, label=f"[computed: {' + '.join(units)} on one day {who} "
                              f"{share * 100:.0f}%, {source}]", codes=tuple(units), rows=day.rows,
                              setting=day.setting, inputs=(day.value,), value=_cents(day.value * share),
                              percent=share * 100, place=day.place, how=f"{who} {law} | one day {said}"))
    for row, setting, amount in _asked_amounts(rows, plan):
        if law == "1834(v)" and row.cy < THERAPY_ASSISTANT_FROM:
            continue            # a PT/OT assistant's service is paid in full before 2022
        figures.append(Figure(kind=FigureKind.PRACTITIONER, label=f"[computed: {_name(row)} {who} "
                              f"{share * 100:.0f}%, {_short(row.label)}]", codes=(_name(row),), rows=(row.label,),
                              setting=setting, inputs=(amount,), value=_cents(amount * share),
                              percent=share * 100, place=row.locality, how=f"{who} {law}"))
    return figures


def _asked_amounts(rows: Sequence[ValuationRow], plan: QuestionPlan):
    """(row, setting, payment) of each final row in focus of an asked code (of the asked modifier), per setting asked
    that the row pays in."""
    for row in modifier_rows(rows, plan.modifier):
        if not row.in_focus or row.proposed or row.hcpcs not in plan.focus_codes:
            continue
        for setting, field in measured_fields(replace(plan, measure="payment")):
            amount = stated(row, field)
            if amount is not None:
                yield row, setting, amount


NONPAR_SHARE = Decimal("0.95")      # Social Security Act section 1848(a)(3)
LIMITING_OF_FEE = Decimal("109.25")    # the limiting charge as a share of the fee: 115% of 95%
LIMITING_SHARE = Decimal("1.15")    # section 1848(g)(2)(C): 115% of the non-participating amount


def nonpar_figures(rows: Sequence[ValuationRow], plan: QuestionPlan) -> list[Figure]:
    """"What is the limiting charge for 99214?", "what does a non-par doctor get for 99213?": each row in focus of an
    asked code, per setting asked, at the non-participating 95% and at the limiting charge (115% of that, computed from
    the unrounded 95% as carenav_core.pfs.locality does); the one asked first."""
    if not plan.nonpar:
        return []
    paid, limit = [], []
    for row, setting, amount in _asked_amounts(rows, plan):
        common = dict(codes=(_name(row),), rows=(row.label,), setting=setting, place=row.locality)
        nonpar = _cents(amount * NONPAR_SHARE)
        paid.append(Figure(kind=FigureKind.NONPAR, label=f"[computed: {_name(row)} non-participating 95%, "
                           f"{_short(row.label)}]", inputs=(amount,), value=nonpar, percent=NONPAR_SHARE * 100,
                           how="95% 1848(a)(3)", **common))
        limit.append(Figure(kind=FigureKind.LIMITING, label=f"[computed: {_name(row)} limiting charge, "
                            f"{_short(row.label)}]", inputs=(amount, nonpar),
                            value=_cents(amount * NONPAR_SHARE * LIMITING_SHARE), percent=LIMITING_SHARE * 100,
                            how="115% of 95% 1848(g)(2)(C)", **common))
    return limit + paid if plan.nonpar == "limiting" else paid + limit


# What an assistant at surgery is paid (Medicare Claims Processing Manual ch.12 §20.4.3; the same shares as
# carenav_core.pfs.pricer): 16% of the surgeon's fee with modifier 80, 81 or 82; a non-physician practitioner (modifier
# AS) 85% of that, 13.6%. Indicator 0 pays only with documentation of medical necessity; 1 and 9 do not pay.
ASSISTANT_SHARE, ASSISTANT_AS_SHARE = Decimal("0.16"), Decimal("0.136")
_AS_MODIFIER = re.compile(r"\bAS\b(?:\s+modifier)?|\bmodifier\s*-?\s*AS\b")


def assistant_figures(rows: Sequence[ValuationRow], indicators: Sequence, plan: QuestionPlan, text: str
                      ) -> list[Figure]:
    """"What does an assistant at surgery get for 27447?": per asked code whose assistant-at-surgery indicator (read
    in `indicators`) lets an assistant be paid, its newest final row's amount in each setting asked at 16%, or at
    13.6% when the assistant is a non-physician practitioner (modifier AS, or an NP, PA or CNS named)."""
    non_physician = bool(_AS_MODIFIER.search(text)) or (plan.practitioner is not None and
                                                        plan.practitioner[1] == Decimal("0.85"))
    share = ASSISTANT_AS_SHARE if non_physician else ASSISTANT_SHARE
    return _indicated_shares(rows, indicators, plan, "asst_surg", lambda value: share if value in ("0", "2") else None,
                             FigureKind.ASSISTANT, "assistant at surgery",
                             lambda _, value: f"{'AS' if non_physician else '80'} indicator {value}")


CO_SURGERY_SHARE = Decimal("0.625")    # Claims Processing Manual ch.12 §40.8, as carenav_core.pfs.pricer applies it


def co_surgery_figures(rows: Sequence[ValuationRow], indicators: Sequence, plan: QuestionPlan) -> list[Figure]:
    """"What does each co-surgeon get for 22612?": per asked code whose co-surgery indicator (read in `indicators`)
    permits co-surgeons (1 with documentation, 2), its newest final row's amount in each setting asked at 62.5%."""
    return _indicated_shares(rows, indicators, plan, "co_surg",
                             lambda value: CO_SURGERY_SHARE if value in ("1", "2") else None, FigureKind.CO_SURGERY,
                             "each co-surgeon", lambda _, value: f"62 indicator {value}")


# The multiple-procedure rule by the MULT PROC indicator (Medicare Claims Processing Manual ch.12 §40.6; the same
# ranking as carenav_core.pfs.pricer): 1-3 rank the day's procedures (every unit one) by amount, the highest at 100%,
# each other at 50%; under 3, endoscopies of one family (one ENDO BASE code) are first paid as one procedure: the
# highest in full and each other its amount less the base code's (never below zero; the base itself billed with a
# member of its family adds nothing), and that family sum is then ranked against the day's other procedures under the
# 100%/50% rule; 5 (therapy and selected services) pays the unit with the highest practice expense in full and 50% of
# the practice expense of each other unit; 4, 6 and 7 (imaging, cardiovascular, ophthalmology technical components)
# are not applied; 0 and 9 take no reduction.
SURGICAL_MULTIPLE, THERAPY_MULTIPLE, NOT_APPLIED_MULTIPLE = frozenset("123"), "5", frozenset("467")
ENDOSCOPIC_MULTIPLE = "3"
_PE_FIELD = {"payment_nonfac": "pe_nonfac_rvu", "payment_fac": "pe_fac_rvu"}
_TOTAL_FIELD = {"payment_nonfac": "total_nonfac", "payment_fac": "total_fac"}


def multiple_figures(rows: Sequence[ValuationRow], indicators: Sequence, plan: QuestionPlan) -> list[Figure]:
    """"11042 and 17000 in the same session", "4 units of 97110 on one day": per setting asked, the asked codes' newest
    final rows (each code's MULT PROC indicator read in `indicators`, all of one year) priced together under the
    multiple-procedure rule; no figure when no unit is reduced (the indicators then say why). An endoscopy's base code
    (its ENDO BASE indicator) is priced from the base's row of the same year, asked or not."""
    if not (plan.same_session or plan.units_one_day):
        return []
    places = dict.fromkeys(["", *sorted({r.locality for r in rows if r.locality and r.in_focus})])
    if plan.units_alternatives:     # "four 97530 or four 97110": each code's units a day of its own, then compared
        days = {code: [f for place in places for f in _multiple_at(
            rows, indicators, replace(plan, named_codes=(code,), units=((code, n),)), place)]
            for code, n in plan.units if code in plan.focus_codes}
        if len(days) < 2 or not all(days.values()):
            return []
        first, *others = days
        return [_days_compared(a, b) for other in others for a in days[first] for b in days[other]
                if (a.setting, a.place) == (b.setting, b.place)] + [f for day in days.values() for f in day]
    return [f for place in places for f in _multiple_at(rows, indicators, plan, place)]


def _days_compared(a: Figure, b: Figure) -> Figure:
    """One day's units of a code against another code's ("4 × 97530 on one day" − "4 × 97110 on one day")."""
    def said(day: Figure) -> str:
        n = sum(day.counts)
        return f"{n} × {day.codes[0]} on one day" if n > 1 else f"{day.codes[0]} on one day"
    value = _cents(a.value - b.value)
    return Figure(kind=FigureKind.DIFFERENCE, label=f"[computed: {said(a)} − {said(b)}, "
                  f"{a.label.rsplit(', ', 1)[-1]}", codes=(said(a), said(b)), rows=tuple(dict.fromkeys(a.rows + b.rows)),
                  setting=a.setting, inputs=(a.value, b.value), value=value, percent=_percent(value, b.value),
                  place=a.place, counts=(sum(a.counts), sum(b.counts)))


def _multiple_at(rows: Sequence[ValuationRow], indicators: Sequence, plan: QuestionPlan, place: str) -> list[Figure]:
    """multiple_figures at one place: "" national, else a locality's GPCI-adjusted rows (the same rule applies to
    the locality's amounts; a code or base without a row there gives no figure)."""
    flags = {fact.code: (fact.meaning.value, fact.row_label) for fact in indicators
             if fact.meaning.key == "mult_proc" and "-" not in fact.code}
    base_of = {fact.code: fact.meaning.value for fact in indicators
               if fact.meaning.key == "endo_base" and "-" not in fact.code and fact.meaning.value}
    counts = dict(plan.units)
    chosen = []
    for code in plan.focus_codes:
        value, label = flags.get(code, ("", ""))
        row = next((r for r in rows if r.label == label and r.hcpcs == code and not r.mod and not r.locality), None)
        if row is not None and place:
            row = next((r for r in rows if r.hcpcs == code and r.cy == row.cy and not r.mod and not r.proposed
                        and r.locality == place), None)
        if row is None:
            return []
        chosen.append((row, value, counts.get(code, 1)))
    if len({row.cy for row, _, _ in chosen}) != 1:
        return []
    if not plan.same_session and not (any(value == THERAPY_MULTIPLE for row, value, n in chosen if n > 1) and
                                      not any(value in SURGICAL_MULTIPLE for row, value, n in chosen)):
        # counted units ("4 units of 97110") are one day's, and the therapy services asked with them that day's visit
        # ("6 units of 97140 and a 97161"): the therapy rule; a surgical procedure beside them is not said to be that
        # day's, so no figure then
        return []
    cy = chosen[0][0].cy
    base_rows = {row.hcpcs: next((r for r in rows if r.hcpcs == base_of.get(row.hcpcs) and r.cy == cy and not r.mod
                                  and r.locality == place and not r.proposed), None)
                 for row, value, _ in chosen if value == ENDOSCOPIC_MULTIPLE}
    if any(base_of.get(code) and row is None for code, row in base_rows.items()):
        return []           # an endoscopy's base has no row here: its family's rule cannot be applied
    figures = []
    for setting, field in measured_fields(replace(plan, measure="payment")):
        units = []              # (order, row, full amount, paid amount, rule)
        for row, value, n in chosen:
            amount = stated(row, field)
            if amount is None:
                break
            units += [(row, value, amount)] * n
        else:
            bases = {code: (base.hcpcs, stated(base, field)) for code, base in base_rows.items()
                     if base is not None and stated(base, field) is not None}
            paid = _reduced(units, field, bases, _component_amounts(rows, chosen, field, place))
            if paid is None:
                continue
            figures.append(_multiple_figure(paid, setting))
    return figures


def _component_amounts(rows: Sequence[ValuationRow], chosen: list, field: str, place: str
                       ) -> dict[str, tuple[Decimal, Decimal]]:
    """A diagnostic code's (technical, professional) amounts in this setting (indicators 4, 6, 7), read from its -TC and
    -26 rows of the same CY and place shown as context (pipeline._component_rows nationally, pipeline._localities at a
    place); a code without both is left out (its reduction then not applied)."""
    found = {}
    for row, value, _ in chosen:
        if value not in DIAGNOSTIC_MPPR:
            continue
        part = {r.mod: stated(r, field) for r in rows if r.hcpcs == row.hcpcs and r.cy == row.cy and
                r.mod in ("TC", "26") and r.locality == place and not r.proposed}
        if part.get("TC") is not None and part.get("26") is not None:
            found[row.hcpcs] = (part["TC"], part["26"])
    return found


def _reduced(units: list[tuple[ValuationRow, str, Decimal]], field: str, bases: dict[str, tuple[str, Decimal]],
             components: dict[str, tuple[Decimal, Decimal]] | None = None
             ) -> list[tuple[ValuationRow, str, Decimal, Decimal, str]] | None:
    """Each unit with what it is paid under its rule, highest first; None when nothing is reduced. `bases`: an
    indicator-3 code's endoscopic base code and the base's amount in this setting; `components`: a diagnostic code's
    (TC, PC) amounts. Each unit comes with its rule: "full", "50%", "less-base 45378 378.10" (an endoscopy paid less
    its base), "less-base-50% ..." (and then halved as the day's second procedure), "half PE", "tc-cut 37.30 0.00 25 0"
    (a diagnostic unit's TC and PC cuts and their percents), "not applied 4", "none 0"."""
    components = components or {}
    diagnostic = _diagnostic_cuts(units, components)
    family_bases = {base: amount for base, amount in bases.values()}
    surgical = sorted((u for u in units if u[1] in SURGICAL_MULTIPLE or u[0].hcpcs in family_bases),
                      key=lambda u: -u[2])
    therapy = sorted((u for u in units if u[1] == THERAPY_MULTIPLE and u[0].hcpcs not in family_bases),
                     key=lambda u: -(getattr(u[0], _PE_FIELD[field]) or 0))
    # the day's surgical procedures ranked as the claim pricer ranks them (an endoscopic family is one procedure)
    blocks = surgical_blocks([(amount, row.hcpcs, bases[row.hcpcs][0] if value == ENDOSCOPIC_MULTIPLE and
                               row.hcpcs in bases else "") for row, value, amount in surgical], family_bases)
    if len(blocks) < 2 and len(therapy) < 2 and not any(len(parts) > 1 for _, parts in blocks) and \
            not any(tc or pc for tc, pc in diagnostic.values()):
        return None
    paid = []
    for index, (family, parts) in enumerate(blocks):
        for position, (i, in_block) in enumerate(parts):
            row, value, amount = surgical[i]
            got = in_block if index == 0 else _cents(in_block * Decimal("0.5"))
            base = f"{family} {family_bases[family]}" if family and position > 0 else ""
            rule = (f"less-base {base}" if index == 0 else f"less-base-50% {base}") if base else \
                "full" if got == amount else "50%"
            paid.append((row, value, amount, got, rule))
    for i, (row, value, amount) in enumerate(therapy):
        pe = getattr(row, _PE_FIELD[field]) or Decimal(0)
        reduced = payment(getattr(row, _TOTAL_FIELD[field]) - pe / 2, row.cf) if row.gpci is None else \
            _half_pe_at(row, pe, amount)
        got = amount if i == 0 or reduced is None else reduced
        paid.append((row, value, amount, got, "full" if got == amount else "half PE"))
    # the diagnostic units in the order paid (each family's highest technical component first), then the others
    rest = [i for i, (row, value, _) in enumerate(units) if value not in SURGICAL_MULTIPLE and
            value != THERAPY_MULTIPLE and row.hcpcs not in family_bases]
    rest.sort(key=lambda i: (i not in diagnostic, -(components.get(units[i][0].hcpcs, (Decimal(0),))[0]), i))
    for i in rest:
        row, value, amount = units[i]
        if i in diagnostic:
            tc, pc = diagnostic[i]
            tc_rate, pc_rate = DIAGNOSTIC_MPPR[value]
            rule = f"tc-cut {tc} {pc} {(tc_rate * 100).normalize():f} {(pc_rate * 100).normalize():f}" \
                if tc or pc else "full"
            paid.append((row, value, amount, amount - tc - pc, rule))
        else:
            paid.append((row, value, amount, amount, f"not applied {value}" if value in NOT_APPLIED_MULTIPLE else
                         f"none {value or 'blank'}"))
    return paid


def _diagnostic_cuts(units: list[tuple[ValuationRow, str, Decimal]], components: dict[str, tuple[Decimal, Decimal]]
                     ) -> dict[int, tuple[Decimal, Decimal]]:
    """Index into `units` -> (TC cut, PC cut) for the diagnostic units (indicators 4, 6, 7) whose components are known,
    each family on its own, as the claim pricer cuts them (pfs.pricer.diagnostic_cuts)."""
    cuts: dict[int, tuple[Decimal, Decimal]] = {}
    for flag in DIAGNOSTIC_MPPR:
        members = [i for i, (row, value, _) in enumerate(units) if value == flag and row.hcpcs in components]
        cuts.update(zip(members, diagnostic_cuts([components[units[i][0].hcpcs] for i in members], flag)))
    return cuts


def _half_pe_at(row: ValuationRow, pe: Decimal, amount: Decimal) -> Decimal | None:
    """A locality row's amount with half its practice expense: (work x GPCI + PE/2 x GPCI + MP x GPCI) x CF, to
    cents as pfs/locality.py prices it, never above the row's (OPPS-capped) amount."""
    if row.work_rvu is None or row.mp_rvu is None or row.cf is None:
        return None
    work, practice, malpractice = row.gpci
    return min(amount, _cents((row.work_rvu * work + pe / 2 * practice + row.mp_rvu * malpractice) * row.cf))


def _multiple_figure(paid: list[tuple[ValuationRow, str, Decimal, Decimal, str]], setting: str) -> Figure:
    """Equal units (same code, amount and payment) grouped, in the order paid: codes, full amounts per unit, counts;
    `how` holds each group's payment per unit and its rule ("full", "50%", "half PE", "less-base 45378 378.10",
    "less-base-50% 45378 378.10", "not applied 4", "none 0")."""
    groups: list[list] = []
    for row, value, amount, got, rule in paid:
        if groups and groups[-1][0] == _name(row) and groups[-1][1] == amount and groups[-1][3] == got:
            groups[-1][2] += 1
        else:
            groups.append([_name(row), amount, 1, got, rule, value])
    names = tuple(g[0] for g in groups)
    row = paid[0][0]
    full = sum((g[1] * g[2] for g in groups), Decimal(0))
    how = "; ".join(f"{g[0]} {g[4]} {g[3]} ind {g[5] or 'blank'}" for g in groups) + f" | without {full} 100% 50%"
    if any(g[4].startswith("tc-cut") for g in groups):     # the diagnostic shares paid after the first: 50/75/80, 95
        how += " " + " ".join(f"{(100 - Decimal(share)).normalize():f}%" for g in groups if g[4].startswith("tc-cut")
                              for share in g[4].split()[3:])
    return Figure(kind=FigureKind.MULTIPLE, label=f"[computed: {' + '.join(dict.fromkeys(names))} on one day, "
                  f"{_short(row.label)}]", codes=names, rows=tuple(dict.fromkeys(p[0].label for p in paid)),
                  setting=setting, inputs=tuple(g[1] for g in groups), counts=tuple(g[2] for g in groups),
                  value=sum((g[3] * g[2] for g in groups), Decimal(0)), percent=None, how=how, place=row.locality)


def compute_figures(rows: Sequence[ValuationRow], plan: QuestionPlan) -> tuple[Figure, ...]:
    """The figures the plan asks for (comparison, trend, total), from rows marked `in_focus`. Families compared
    without a code get no code-by-code differences: the first member minus every other member answers nothing."""
    figures: list[Figure] = []
    if plan.ratio:              # a division asked is the answer; the codes' differences and sums are not
        return tuple(_ratios(rows, plan) + (_shares(rows, plan) if plan.share else []))
    if plan.share:
        figures += _shares(rows, plan)
    if plan.stated is not None:
        figures += _stated(rows, plan)
    volumes = _volumes(rows, plan)
    # a supposed CF change (at the volume asked, when one is) is what was asked: it leads
    what_if = _what_if(rows, plan, [f for f in volumes if f.kind is FigureKind.VOLUME]) \
        if plan.cf_change is not None or plan.cf_year or plan.cf_value else []
    if plan.statistic:
        figures += _statistics(rows, plan)
    if plan.components:         # both components asked: what they add up to, against the global amount, leads
        what_if = _components(rows, plan) + what_if
    if plan.threshold:          # "how many of them pay over $150": the count leads
        what_if = _counted_over(rows, plan) + what_if
    if plan.qp_versus:          # "the QP and the non-QP payment": their difference leads
        what_if = _qp_differences(rows, plan) + what_if
    if plan.coinsurance:        # Medicare's and the patient's shares asked: they lead, their change first if asked
        splits = _coinsurance(rows, plan)
        changes = _coinsurance_changes(splits) if Intent.TREND in plan.intents else []
        changes.sort(key=lambda f: ("patient" in f.codes[0]) != plan.patient_share)    # the share asked first
        what_if = changes + (_sequestered(splits) if plan.sequestration else []) + splits + what_if
    if plan.rate:               # a rate per hour or minute asked is what was asked: it leads
        what_if = _rates(rows, plan) + what_if
    if plan.target is not None:     # "how many ... to earn $10,000": the count leads
        what_if = _needed(rows, plan) + what_if
    if plan.setting_gap:
        figures += _setting_gaps(rows, plan)
    if plan.bundles:            # one side billed together against the other: the two sides, not code by code
        figures += _bundles(rows, plan)
    elif plan.crossed:          # "99213 in 2026 vs 99214 in 2025": that pair, not each year's code-minus-code
        figures += _crossed(rows, plan)
    elif Intent.COMPARE in plan.intents and len(plan.focus_codes) > 1 and _code_by_code(plan) and not plan.summed:
        figures += _differences(rows, plan)
    if len(plan.places) > 1 and not plan.ambiguous_place:
        figures += _place_differences(rows, plan)
    elif plan.places and plan.versus_national and not plan.ambiguous_place:
        figures += _national_differences(rows, plan)
    if Intent.TREND in plan.intents or plan.proposed:
        figures += _changes(rows, plan)
    if plan.summed and len(plan.focus_codes) == 1:     # "add up 99213's payments for 2024, 2025 and 2026"
        figures += _year_sums(rows, plan)
    if Intent.TOTAL in plan.intents and (len(plan.focus_codes) > 1 or plan.units) and not plan.bundles:
        totals = _totals(rows, plan)
        if plan.summed and Intent.TREND in plan.intents:    # "combined ... in 2025 versus 2026": the sum's change
            figures += _total_changes(totals)
        figures += totals
    if plan.summed:             # "the combined payment ... 2025 versus 2026": the sum asked leads
        figures.sort(key=lambda f: not (f.kind is FigureKind.TOTAL or " + " in f.codes[0]))
    return tuple(what_if + volumes + figures)        # a volume asked is what the question asks: it leads next
