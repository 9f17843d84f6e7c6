"""Claim pricer: lines of code, modifiers, units, setting, locality and date of service -> the allowed
amount of each line and the claim, every reduction shown with its indicator value and manual citation.

Per line (data/indicators.toml gives each rule's meaning and section of Claims Processing Manual ch.12):
  fee        locality fee of the code (+ pricing modifier 26/TC/53... from its own RVU row) in the
             setting, with the CF in force on the date of service (pfs/locality.py), OPPS cap applied;
  bilateral  modifier 50: indicator 1 -> 150%, 3 -> 200% (100% each side), 0/2 -> 100% (§40.7);
  multiple   indicators 1-3 on one date of service: procedures (each unit counts) ranked by fee x
             bilateral factor, the highest at 100%, every other at 50% (§40.6); more than five: noted
             ("by report"); under indicator 3 endoscopies of one family (one ENDO BASE code) are first one
             procedure, the highest in full and each other less the base's fee at the locality;
  therapy    indicator 5 ("always therapy") on one date of service: every unit counts; the unit with the highest
             practice-expense payment is paid in full, every other with 50% of its practice expense (work and
             malpractice in full; dates of service from 2013-04-01);
  diagnostic indicators 4 (imaging), 6 (cardiovascular), 7 (ophthalmology), each family on its own per date:
             the technical component (TC) of the unit with the highest TC in full, each other's TC less 50% /
             25% / 20%; under 4 also the professional component (PC) of each unit after the one with the highest
             PC less 5%; a global line's TC and PC are its -TC and -26 rows at the locality (a line the OPPS cap
             priced is not reduced, noted; a line with 59 or XE is a session of its own);
  surgeons   62 co-surgery 62.5% (indicator 1/2; 0 not permitted) (§40.8); 66 team surgery is priced by
             report by the MAC -> a line error; 80/81/82 assistant 16%, AS 13.6% (indicator 0/2; 1 and 9
             not payable) (§20.4.3); CQ/CO (PT/OT assistant) 85% from 2022-01-01 (SSA 1834(v)), kept in
             the same "surgeon factor" (the practitioner's share);
  allowed    = fee x multiple-procedure factor x bilateral factor x surgeon factor, half-up to cents.
Bad lines (unknown code, modifier not priced, date outside the loaded years, unknown locality, status
not payable) are reported with the reason; the rest is priced.
"""
from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_CEILING, Decimal

import duckdb
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from carenav_core.pfs.indicators import IndicatorBook, indicator_values, load_indicators
from carenav_core.pfs.locality import (Locality, LocalityDirectory, LocalityError, LocalityRow, _units, cents,
                                       directory, locality_fee, price_row)
from carenav_core.pfs.rows import ValuationRow
from carenav_core.pfs.rules import load_rules
from carenav_core.pfs.valuation import value

# Payment modifiers this pricer applies; informational modifiers are accepted and change nothing.
BILATERAL, CO_SURGERY, TEAM_SURGERY = "50", "62", "66"
ASSISTANT = {"80": Decimal("0.16"), "81": Decimal("0.16"), "82": Decimal("0.16"),
             "AS": Decimal("0.136")}        # §20.4.3: 16%; non-physician AS: 85% of 16%
CO_SURGERY_SHARE = Decimal("0.625")          # §40.8: 62.5% of the fee to each co-surgeon
INFORMATIONAL = {"51", "59", "76", "77", "79", "RT", "LT", "XE", "XP", "XS", "XU", "GT", "95", "25", "57", "24",
                 "GP", "GO", "GN", "KX", "GA", "GY", "GZ"}  # therapy plan of care (PT/OT/SLP), therapy threshold, ABN
# SSA 1834(v): outpatient PT/OT furnished in whole or in part by a PT assistant (CQ) or OT assistant (CO) is paid at 85%
# from 2022-01-01 (the modifiers are required from 2020-01-01, with no reduction before 2022).
THERAPY_ASSISTANT = {"CQ": "a physical therapist assistant", "CO": "an occupational therapy assistant"}
THERAPY_ASSISTANT_SHARE, THERAPY_ASSISTANT_FROM = Decimal("0.85"), date(2022, 1, 1)
THERAPY_ASSISTANT_SOURCE = ("SSA 1834(v); CY2020 PFS final rule 84 FR 62702-62707",
                            "https://www.cms.gov/medicare/coding-billing/therapy-services/billing-examples-using-cq/"
                            "co-modifiers-services-furnished-whole-or-part-ptas-and-otas")
PAYABLE_STATUS = {"A", "R", "T"}
HALF, ONE = Decimal("0.5"), Decimal("1")


class ClaimLine(BaseModel):
    """One line of a claim file (CSV columns code, modifier, units, facility, locality, date_of_service)."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    line: int = Field(ge=1, description="Line number in the file (header = line 1).")
    code: str = Field(pattern=r"^[A-Z0-9]{5}$", description="HCPCS/CPT code.")
    modifiers: tuple[str, ...] = Field((), description="Up to four 2-character modifiers.", max_length=4)
    units: int = Field(1, ge=1, le=99, description="Units of service.")
    facility: bool = Field(description="True: facility setting (facility PE RVUs).")
    locality: str = Field(pattern=r"^\d{4,5}:?\d{1,2}$", description="MAC:locality, e.g. 02402:02.")
    date_of_service: date

    @field_validator("modifiers")
    @classmethod
    def _two_characters(cls, mods: tuple[str, ...]) -> tuple[str, ...]:
        bad = [m for m in mods if len(m) != 2 or not m.isalnum()]
        if bad:
            raise ValueError(f"modifiers are 2 letters or digits; found {bad}")
        return mods


@dataclass(frozen=True, kw_only=True)
class Step:
    """One adjustment applied to a line, with the indicator that allowed it and where the rule is written."""
    name: str             # "bilateral", "multiple procedure", "co-surgery", "OPPS cap", ...
    indicator: str        # "BILAT SURG=1" ("" when no indicator decides it)
    factor: Decimal | None
    meaning: str
    citation: str
    href: str


@dataclass(frozen=True, kw_only=True)
class LineError:
    line: int
    code: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class PricedLine:
    claim: ClaimLine
    priced: LocalityRow
    pricing_modifier: str
    cf: Decimal
    cf_label: str
    cf_reference: str              # address of the CF's source (data/pfs_rules.toml)
    rvus: tuple[Decimal | None, Decimal | None, Decimal | None]   # work, PE (of the setting), MP
    uncapped_fee: Decimal
    opps_cap: Decimal | None
    fee: Decimal                   # unit fee after the OPPS cap
    rank: int                      # rank of its first unit among the date's multiple procedures (0: none)
    multiple_factor: Decimal       # sum over units: 1 + 0.5 x (others) ...
    bilateral_factor: Decimal
    surgeon_factor: Decimal
    allowed: Decimal
    steps: tuple[Step, ...]

    @property
    def place(self) -> Locality:
        return self.priced.place

    @property
    def label(self) -> str:
        return self.priced.label


@dataclass(frozen=True, kw_only=True)
class PricedClaim:
    lines: list[PricedLine]
    errors: list[LineError]
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> Decimal:
        return sum((line.allowed for line in self.lines), Decimal("0.00"))


class ClaimFileError(ValueError):
    """The claim file itself cannot be read (no header, missing columns)."""


COLUMNS = {"code": ("code", "hcpcs", "cpt"), "modifier": ("modifier", "modifiers", "mod"), "units": ("units", "unit"),
           "facility": ("facility", "setting", "pos"), "locality": ("locality", "mac_locality"),
           "date_of_service": ("date_of_service", "dos", "date")}
_TRUE = {"y", "yes", "true", "1", "facility", "f", "fac", "hospital"}
_FALSE = {"n", "no", "false", "0", "office", "nonfacility", "non-facility", "nf", ""}


def _cell(row: dict, names: tuple[str, ...]) -> str:
    for name in names:
        if name in row and row[name] is not None:
            return row[name].strip()
    return ""


def _line(row: dict, number: int) -> ClaimLine:
    setting = _cell(row, COLUMNS["facility"]).lower()
    if setting not in _TRUE | _FALSE:
        raise ValueError(f"facility {setting!r}: expected Y/N, facility/office")
    mods = tuple(m for m in _cell(row, COLUMNS["modifier"]).upper().replace(",", " ").replace("+", " ").split() if m)
    return ClaimLine(line=number, code=_cell(row, COLUMNS["code"]).upper(), modifiers=mods,
                     units=_cell(row, COLUMNS["units"]) or 1, facility=setting in _TRUE,
                     locality=_cell(row, COLUMNS["locality"]), date_of_service=_cell(row, COLUMNS["date_of_service"]))


def read_claim(text: str) -> tuple[list[ClaimLine], list[LineError]]:
    """Claim lines of a CSV (header names per COLUMNS, case-insensitive); unreadable lines are errors."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    if not reader.fieldnames:
        raise ClaimFileError("the claim file is empty; expected a header row: code,modifier,units,facility,"
                             "locality,date_of_service")
    reader.fieldnames = [f.strip().lower() for f in reader.fieldnames]
    missing = [c for c in ("code", "facility", "locality", "date_of_service")
               if not set(COLUMNS[c]) & set(reader.fieldnames)]
    if missing:
        raise ClaimFileError(f"the claim file has no column {', '.join(missing)} (header: {', '.join(reader.fieldnames)})")
    lines, errors = [], []
    for number, row in enumerate(reader, start=2):
        if not any((v or "").strip() for v in row.values() if isinstance(v, str)):
            continue
        try:
            lines.append(_line(row, number))
        except (ValidationError, ValueError) as exc:
            errors.append(LineError(line=number, code=_cell(row, COLUMNS["code"]).upper(), reason=_reason(exc)))
    return lines, errors


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']} (found {e.get('input')!r})"
                         for e in exc.errors())
    return str(exc)


class _Problem(Exception):
    """A line that cannot be priced; the message is the reason shown for that line."""


@dataclass(frozen=True, kw_only=True)
class _Context:
    book: LocalityDirectory
    indicators: IndicatorBook
    rows: dict[tuple[str, int, str], ValuationRow]      # (code, CY, modifier) -> final row
    modifiers_of: dict[str, set[str]]                   # code -> modifiers with their own RVU row
    cys_of: dict[str, list[int]]                        # code -> CYs with a base row
    flags: dict[tuple[int, str, str], dict]             # (CY, code, modifier) -> indicator columns
    cfs: dict[date, object] = field(default_factory=dict)      # date of service -> CF in force (memo)
    units: dict[int, object] = field(default_factory=dict)     # id(national row) -> its integer RVUs (memo)

    def cf_on(self, cy: int, day: date):
        if day not in self.cfs:
            self.cfs[day] = load_rules().final[cy].cf_for(day)[0]
        return self.cfs[day]

    def units_of(self, row: ValuationRow):
        if id(row) not in self.units:
            self.units[id(row)] = _units(row)
        return self.units[id(row)]


@dataclass(kw_only=True)
class _Base:
    claim: ClaimLine
    priced: LocalityRow
    pricing_modifier: str
    cf: Decimal
    cf_label: str
    cf_reference: str
    rvus: tuple
    uncapped_fee: Decimal
    opps_cap: Decimal | None
    fee: Decimal
    flags: dict
    bilateral_factor: Decimal = ONE
    surgeon_factor: Decimal = ONE
    steps: list[Step] = field(default_factory=list)
    endoscopic: tuple[str, Decimal] | None = None     # (base code, its fee here) when the family rule priced the line
    endoscopic_paid: Decimal = Decimal(0)              # what the family rule pays its units (before surgeon factors)
    therapy: tuple[int, int, Decimal, Decimal] | None = None  # (rank of its first unit, units reduced, reduced unit fee,
    #                                                  what its units are paid) when the therapy MPPR priced the line
    parts: tuple[Decimal, Decimal] | None = None       # a diagnostic line's unit (TC, PC) amounts here (`_components`)
    diagnostic: tuple[int, Decimal, Decimal, Decimal] | None = None  # (rank, TC cut, PC cut, what its units are paid)


def _step(ctx: _Context, name: str, key: str, value_: str, factor: Decimal | None, meaning: str | None = None) -> Step:
    explained = ctx.indicators.explain(key, value_)
    column = ctx.indicators.indicators[key].column
    return Step(name=name, indicator=f"{column}={value_}", factor=factor, meaning=meaning or explained.meaning,
                citation=explained.citation, href=explained.href)


def _pricing_modifier(line: ClaimLine, ctx: _Context) -> str:
    own = ctx.modifiers_of.get(line.code, set())
    pricing = [m for m in line.modifiers if m in own]
    unknown = [m for m in line.modifiers if m not in own and m not in INFORMATIONAL
               and m not in {BILATERAL, CO_SURGERY, TEAM_SURGERY, *ASSISTANT, *THERAPY_ASSISTANT}]
    if unknown:
        rows = f"its PPRRVU modifier rows are {', '.join(sorted(own))}" if own else "it has no PPRRVU modifier rows"
        raise _Problem(f"modifier {', '.join(unknown)} is not priced for {line.code}: {rows}; payment modifiers "
                       f"applied here: 50, 62, 66, 80, 81, 82, AS, CQ, CO")
    if len(pricing) > 1:
        raise _Problem(f"modifiers {' and '.join(pricing)} each have their own RVU row; use one per line")
    return pricing[0] if pricing else ""


def _national_row(line: ClaimLine, modifier: str, ctx: _Context) -> ValuationRow:
    cy = line.date_of_service.year
    loaded = sorted(ctx.book.gpci)
    if cy not in loaded:
        raise _Problem(f"date of service {line.date_of_service} is outside the loaded years CY{loaded[0]}-CY{loaded[-1]}")
    if line.code not in ctx.cys_of:
        raise _Problem(f"code {line.code} is in no loaded release")
    row = ctx.rows.get((line.code, cy, modifier))
    if row is None and (line.code, cy, "") not in ctx.rows:
        raise _Problem(f"code {line.code} has no CY{cy} row (loaded for CY{', CY'.join(map(str, ctx.cys_of[line.code]))})")
    if row is None:
        raise _Problem(f"modifier {modifier} is not priced for {line.code} in CY{cy} (no {line.code}-{modifier} row)")
    if row.status not in PAYABLE_STATUS:
        raise _Problem(f"status {row.status} ({row.status_meaning}): no PFS amount to price")
    return row


def _base(line: ClaimLine, ctx: _Context) -> _Base:
    modifier = _pricing_modifier(line, ctx)
    row = _national_row(line, modifier, ctx)
    try:
        place = ctx.book.find(row.cy, line.locality)
    except LocalityError as exc:
        raise _Problem(str(exc)) from None
    cf = ctx.cf_on(row.cy, line.date_of_service)
    priced = price_row(row, place, ctx.book, ctx.units_of(row), cf=cf.value)
    uncapped = priced.uncapped_fac if line.facility else priced.uncapped_nonfac
    fee = priced.payment_fac if line.facility else priced.payment_nonfac
    if fee is None or uncapped is None:
        raise _Problem(f"{line.code} has no {'facility' if line.facility else 'non-facility'} RVUs in CY{row.cy}")
    cap = priced.opps_cap_fac if line.facility else priced.opps_cap_nonfac
    base = _Base(claim=line, priced=priced, pricing_modifier=modifier, cf=cf.value, cf_label=cf.label,
                 cf_reference=cf.reference,
                 rvus=(row.work_rvu, row.pe_fac_rvu if line.facility else row.pe_nonfac_rvu, row.mp_rvu),
                 uncapped_fee=uncapped, opps_cap=cap, fee=fee, flags=ctx.flags.get((row.cy, row.hcpcs, row.mod), {}))
    if cap is not None and fee < uncapped:
        base.steps.append(Step(name="OPPS cap", indicator="OPPSCAP", factor=None,
                               meaning=f"the PFS amount {uncapped} exceeds the OPPS cap {cap}: {cap} is paid",
                               citation="SSA 1848(b)(4); 42 CFR 414.22(b)(5)(i)",
                               href="https://www.ecfr.gov/current/title-42/part-414/section-414.22"))
    _bilateral(base, ctx)
    _surgeons(base, ctx)
    return base


def _bilateral(base: _Base, ctx: _Context) -> None:
    if BILATERAL not in base.claim.modifiers:
        return
    flag = base.flags.get("bilat_surg", "")
    factor = {"1": Decimal("1.5"), "3": Decimal("2")}.get(flag, ONE)
    if flag == "9":
        raise _Problem(f"modifier 50 on {base.claim.code}: BILAT SURG=9, the bilateral concept does not apply")
    base.bilateral_factor = factor
    base.steps.append(_step(ctx, "bilateral", "bilat_surg", flag, factor))


def _surgeons(base: _Base, ctx: _Context) -> None:
    mods, code = base.claim.modifiers, base.claim.code
    if TEAM_SURGERY in mods:
        flag = base.flags.get("team_surg", "")
        raise _Problem(f"modifier 66 on {code}: TEAM SURG={flag} ({ctx.indicators.explain('team_surg', flag).meaning}) "
                       f"- team surgery is priced by report by the MAC")
    if CO_SURGERY in mods:
        flag = base.flags.get("co_surg", "")
        if flag not in ("1", "2"):
            raise _Problem(f"modifier 62 on {code}: CO- SURG={flag} ({ctx.indicators.explain('co_surg', flag).meaning})")
        base.surgeon_factor *= CO_SURGERY_SHARE
        base.steps.append(_step(ctx, "co-surgery", "co_surg", flag, CO_SURGERY_SHARE))
    for modifier in (m for m in mods if m in ASSISTANT):
        flag = base.flags.get("asst_surg", "")
        if flag not in ("0", "2"):
            raise _Problem(f"modifier {modifier} on {code}: ASST SURG={flag} "
                           f"({ctx.indicators.explain('asst_surg', flag).meaning})")
        base.surgeon_factor *= ASSISTANT[modifier]
        note = " Indicator 0: payable only with documentation of medical necessity." if flag == "0" else ""
        base.steps.append(_step(ctx, f"assistant at surgery ({modifier})", "asst_surg", flag, ASSISTANT[modifier],
                                ctx.indicators.explain("asst_surg", flag).meaning + note))
    for modifier in (m for m in mods if m in THERAPY_ASSISTANT):
        applies = base.claim.date_of_service >= THERAPY_ASSISTANT_FROM
        if applies:
            base.surgeon_factor *= THERAPY_ASSISTANT_SHARE
        base.steps.append(Step(
            name=f"therapy assistant ({modifier})", indicator=modifier,
            factor=THERAPY_ASSISTANT_SHARE if applies else None,
            meaning=f"furnished in whole or in part by {THERAPY_ASSISTANT[modifier]}: " +
            ("paid at 85% of the amount otherwise paid" if applies else
             f"the 85% payment applies from {THERAPY_ASSISTANT_FROM}; this date of service is paid in full"),
            citation=THERAPY_ASSISTANT_SOURCE[0], href=THERAPY_ASSISTANT_SOURCE[1]))


SURGICAL_MPPR = {"1", "2", "3"}
THERAPY_MPPR = "5"
# diagnostic families (indicator -> (technical-component cut, professional-component cut)) for the second and later
# units of one family on one date (CY2020+: imaging PC 5% since 2017, cardiovascular and ophthalmology TC since 2013)
DIAGNOSTIC_MPPR = {"4": (Decimal("0.50"), Decimal("0.05")), "6": (Decimal("0.25"), Decimal(0)),
                   "7": (Decimal("0.20"), Decimal(0))}
DIAGNOSTIC_NAME = {"4": "diagnostic imaging", "6": "diagnostic cardiovascular services",
                   "7": "diagnostic ophthalmology services"}
THERAPY_PE_SHARE, THERAPY_FROM = Decimal("0.5"), date(2013, 4, 1)   # half the PE of each unit after the first
THERAPY_CITATION = ("Claims Processing Manual ch.5 (MPPR on \"always therapy\" services: 50% of the PE of the second "
                    "and later units and procedures, same patient, same day, from 2013-04-01)",
                    "https://www.ngsmedicare.com/web/ngs/physical-therapy/occupational-therapy/speech-therapy"
                    "?selectedArticleId=865043")


def _group(base: _Base) -> tuple[date, str]:
    """Procedures are ranked per date of service and role: the surgeon's, a co-surgeon's and an
    assistant's lines are separate claims of separate practitioners."""
    mods = set(base.claim.modifiers)
    role = "assistant" if mods & set(ASSISTANT) else "co-surgeon" if CO_SURGERY in mods else "surgeon"
    return base.claim.date_of_service, role


def _base_fee(base: _Base, ctx: _Context) -> tuple[str, Decimal] | None:
    """An indicator-3 endoscopy's ENDO BASE code and that code's fee at the line's locality, date and setting."""
    code = base.flags.get("endo_base", "") if base.flags.get("mult_proc") == "3" else ""
    row = ctx.rows.get((code, base.priced.national.cy, "")) if code else None
    if row is None:
        return None
    cf = ctx.cf_on(row.cy, base.claim.date_of_service)
    priced = price_row(row, base.priced.place, ctx.book, ctx.units_of(row), cf=cf.value)
    fee = priced.payment_fac if base.claim.facility else priced.payment_nonfac
    return (code, fee) if fee is not None else None


def surgical_blocks(units: list[tuple[Decimal, str, str]], base_amounts: dict[str, Decimal]
                    ) -> list[tuple[str, list[tuple[int, Decimal]]]]:
    """The day's surgical procedures as the multiple-procedure rule ranks them (Claims Processing Manual ch.12 §40.6):
    `units` are (amount alone, code, its endoscopic base code under indicator 3 when the base's amount is known, else
    ""), highest first; `base_amounts` each such base's amount. Endoscopies of one family (two units or more of one
    base, the base's own units included) are one block: its highest unit in full, each other its amount less the
    base's (never below zero); every other unit is a block of its own. Blocks come highest first (the first is paid in
    full, each other at 50%), each as (the family's base or "", [(index into `units`, amount in the block)]).

    >>> surgical_blocks([(Decimal(500), "45385", "45378"), (Decimal(480), "45380", "45378"),
    ...                  (Decimal(300), "11042", "")], {"45378": Decimal(378)})
    [('45378', [(0, Decimal('500')), (1, Decimal('102'))]), ('', [(2, Decimal('300'))])]
    """
    families: dict[str, list[int]] = defaultdict(list)
    for index, (_, code, base) in enumerate(units):
        if base or code in base_amounts:        # a member of a family, or the base beside its members
            families[base or code].append(index)
    blocks = []
    for base, members in families.items():
        if len(members) > 1:
            blocks.append((base, [(members[0], units[members[0]][0])] +
                           [(i, max(units[i][0] - base_amounts[base], Decimal(0))) for i in members[1:]]))
    grouped = {i for _, parts in blocks for i, _ in parts}
    blocks += [("", [(i, unit[0])]) for i, unit in enumerate(units) if i not in grouped]
    return sorted(blocks, key=lambda b: -sum(a for _, a in b[1]))


def _multiple(bases: list[_Base], ctx: _Context) -> dict[int, tuple[int, Decimal]]:
    """line number -> (rank of its first unit, multiple-procedure factor) for the surgical procedures of
    each date of service: every unit a procedure, ranked by fee x bilateral factor; 100%, then 50%. Endoscopies of
    one family (indicator 3, one ENDO BASE code; the base itself billed beside a member joins it) are first one
    procedure: the highest in full, each other its fee less the base's (never below zero), then ranked by that sum
    (§40.6); such a line's factor is what it is paid over its fee, and `_Base.endoscopic` says against which base."""
    by_day: dict[tuple[date, str], list[tuple[Decimal, int, int, _Base]]] = defaultdict(list)
    for base in bases:
        if base.flags.get("mult_proc") in SURGICAL_MPPR:
            for unit in range(base.claim.units):
                by_day[_group(base)].append((base.fee * base.bilateral_factor, base.claim.line, unit, base))
    result: dict[int, tuple[int, Decimal]] = {}
    for units in by_day.values():
        units.sort(key=lambda u: (-u[0], u[1], u[2]))
        found = {b.claim.line: _base_fee(b, ctx) for _, _, _, b in units}
        base_fee = {f[0]: f[1] for f in found.values() if f}
        blocks = surgical_blocks([(amount, b.claim.code, (found[line] or ("",))[0]) for amount, line, _, b in units],
                                 base_fee)
        position = 0
        for index, (family, parts) in enumerate(blocks):
            for i, in_block in parts:
                amount, line, _, unit_base = units[i]
                position += 1
                paid = in_block * (ONE if index == 0 else HALF)
                rank, factor = result.get(line, (position, Decimal(0)))
                result[line] = (rank, factor + (paid / amount if amount else Decimal(0)))
                if family and len(parts) > 1:       # its amount, exact (the factor is a rounded quotient)
                    unit_base.endoscopic = (family, base_fee[family])
                    unit_base.endoscopic_paid += paid
    return result


def _therapy(bases: list[_Base]) -> dict[tuple[date, str], int]:
    """The therapy MPPR (indicator 5): per date of service, every unit of every "always therapy" line ranked by its
    practice-expense payment at the line's locality (PE RVU x PE GPCI; ties in line order); the first unit is paid its
    fee, every other its fee with half its PE (work and MP in full). Each such line's `_Base.therapy` is set when the
    day has two units or more; returns the day's unit count per (date, role) group."""
    by_day: dict[tuple[date, str], list[tuple[Decimal, int, int, _Base]]] = defaultdict(list)
    reduced_of: dict[int, Decimal] = {}         # id(line) -> its unit fee with half its PE, never above the (capped) fee
    for base in bases:
        if base.flags.get("mult_proc") == THERAPY_MPPR and base.claim.date_of_service >= THERAPY_FROM:
            work, pe, mp = base.rvus
            reduced = locality_fee(work, None if pe is None else pe * THERAPY_PE_SHARE, mp, base.priced.place, base.cf)
            reduced_of[id(base)] = base.fee if reduced is None else min(reduced, base.fee)
            for unit in range(base.claim.units):
                by_day[_group(base)].append(((pe or Decimal(0)) * base.priced.place.gpci_pe, base.claim.line, unit,
                                             base))
    counts = {}
    for group, units in by_day.items():
        counts[group] = len(units)
        if len(units) < 2:
            continue
        units.sort(key=lambda u: (-u[0], u[1], u[2]))
        for position, (_, _, _, base) in enumerate(units, start=1):
            reduced = reduced_of[id(base)]
            rank, cut, _, paid = base.therapy or (position, 0, reduced, Decimal(0))
            first = position == 1
            base.therapy = (rank, cut + (0 if first else 1), reduced,
                            paid + (base.fee if first else reduced) * base.bilateral_factor)
    return counts


def _components(base: _Base, ctx: _Context) -> tuple[Decimal, Decimal] | None:
    """A diagnostic line's unit (TC, PC) amounts at its locality, setting and CF: a -TC line is all TC, a -26 line all
    PC, a global line its own -TC and -26 rows priced here; None when a part has no row or amount."""
    if base.pricing_modifier == "TC":
        return base.fee, Decimal(0)
    if base.pricing_modifier == "26":
        return Decimal(0), base.fee
    if base.pricing_modifier:
        return None
    amounts = []
    for modifier in ("TC", "26"):
        row = ctx.rows.get((base.claim.code, base.priced.national.cy, modifier))
        if row is None:
            return None
        priced = price_row(row, base.priced.place, ctx.book, ctx.units_of(row), cf=base.cf)
        amount = priced.uncapped_fac if base.claim.facility else priced.uncapped_nonfac
        if amount is None:
            return None
        amounts.append(amount)
    return amounts[0], amounts[1]


SEPARATE_SESSION = {"59", "XE"}      # a distinct procedure / separate encounter: a diagnostic session of its own


def _session(base: _Base, flag: str) -> tuple[date, str, int]:
    """The diagnostic session a line's units belong to: its date and family, and its own line when it carries 59 or
    XE (a separate session that day, whose units are not reduced with the others)."""
    return base.claim.date_of_service, flag, base.claim.line if SEPARATE_SESSION & set(base.claim.modifiers) else 0


def _diagnostic(bases: list[_Base], ctx: _Context) -> dict[tuple[date, str], int]:
    """The diagnostic families' reductions (indicators 4, 6, 7; `DIAGNOSTIC_MPPR`): per date of service and family,
    every unit of every line ranked by its TC amount (ties in line order), the first in full and each other's TC less
    the family's cut; under 4 the PC ranked the same way by PC amount and cut 5% after the first. A line keeps its
    fee less those cuts (`_Base.diagnostic`); one the OPPS cap priced is left out (its TC is the cap's), and one with
    modifier 59 or XE is a session of its own. Returns the day's unit count per (date, indicator)."""
    by_day: dict[tuple[date, str, int], list[tuple[int, int, _Base]]] = defaultdict(list)
    counts: dict[tuple[date, str], int] = defaultdict(int)
    for base in bases:
        flag = base.flags.get("mult_proc", "")
        if flag not in DIAGNOSTIC_MPPR:
            continue
        counts[(base.claim.date_of_service, flag)] += base.claim.units
        if base.fee == base.uncapped_fee and (parts := _components(base, ctx)) is not None:
            base.parts = parts
            for unit in range(base.claim.units):
                by_day[_session(base, flag)].append((base.claim.line, unit, base))
    for (_, flag, _), units in by_day.items():
        if len(units) < 2:
            continue
        units.sort(key=lambda u: (u[0], u[1]))
        cuts: dict[int, list[Decimal]] = defaultdict(lambda: [Decimal(0), Decimal(0)])    # id(base) -> TC, PC cut
        for (_, _, base), (tc, pc) in zip(units, diagnostic_cuts([u[2].parts for u in units], flag)):
            cuts[id(base)][0] += tc
            cuts[id(base)][1] += pc
        ranked = sorted(units, key=lambda u: (-u[2].parts[0], u[0], u[1]))
        for position, (_, _, base) in enumerate(ranked, start=1):
            if base.diagnostic is None:
                tc, pc = cuts[id(base)]
                base.diagnostic = (position, tc, pc, base.fee * base.claim.units - tc - pc)
    return counts


def diagnostic_cuts(parts: list[tuple[Decimal, Decimal]], flag: str) -> list[tuple[Decimal, Decimal]]:
    """Each unit's (TC cut, PC cut) in one session of a diagnostic family (`parts`: each unit's (TC, PC) amounts, in
    the order that breaks ties): after the unit with the highest TC, each TC less the family's percent; under imaging
    (4) also each PC after the highest less 5%; a lone unit is not cut. Shared with the chat (figures._reduced).

    >>> diagnostic_cuts([(Decimal("100"), Decimal("40")), (Decimal("60"), Decimal("50"))], "4")
    [(Decimal('0'), Decimal('2.00')), (Decimal('30.00'), Decimal('0'))]
    """
    cuts = [[Decimal(0), Decimal(0)] for _ in parts]
    if len(parts) > 1:
        for part, rate in enumerate(DIAGNOSTIC_MPPR[flag]):
            if rate:
                for i in sorted(range(len(parts)), key=lambda i: (-parts[i][part], i))[1:]:
                    cuts[i][part] = cents(parts[i][part] * rate)
    return [(tc, pc) for tc, pc in cuts]


def _multiple_steps(base: _Base, rank: int, factor: Decimal, day_count: int, ctx: _Context) -> None:
    flag = base.flags.get("mult_proc", "")
    if base.endoscopic is not None:
        code, fee = base.endoscopic
        base.steps.append(_step(ctx, f"endoscopic family rule (rank {rank} of {day_count})", "endo_base", code,
                                factor, f"endoscopies of one family are paid as the highest in full plus each other's "
                                f"fee less the base {code}'s fee here ({fee}); the base itself beside a member adds "
                                f"nothing; the family is then one procedure under 100%/50%: factor "
                                f"{factor.quantize(Decimal('0.0001'))} over {base.claim.units} unit(s)."))
    elif flag in SURGICAL_MPPR and factor < base.claim.units:
        extra = " More than five procedures: CMS prices the sixth and later by report; shown at 50%." \
            if day_count > 5 else ""
        base.steps.append(_step(ctx, f"multiple procedure (rank {rank} of {day_count})", "mult_proc", flag, factor,
                                f"100% for the highest-ranked procedure, 50% for each other: factor {factor} "
                                f"over {base.claim.units} unit(s).{extra}"))
    if base.therapy is not None:
        rank, cut, reduced, _ = base.therapy
        explained = ctx.indicators.explain("mult_proc", flag)
        base.steps.append(Step(
            name=f"therapy multiple procedure (rank {rank} of {day_count} units)", indicator=f"MULT PROC={flag}",
            factor=factor, meaning=f"{explained.meaning} The day's unit with the highest practice-expense payment is "
            f"paid in full, every other unit its fee with half its practice expense ({base.fee} -> {reduced}): "
            f"{cut} of {base.claim.units} unit(s) reduced, factor {factor.quantize(Decimal('0.0001'))}.",
            citation=THERAPY_CITATION[0], href=THERAPY_CITATION[1]))
    if base.diagnostic is not None:
        rank, tc, pc, _ = base.diagnostic
        tc_cut, pc_cut = DIAGNOSTIC_MPPR[flag]
        said = f"TC {base.parts[0]} and PC {base.parts[1]} a unit; " if base.parts[0] and base.parts[1] else ""
        base.steps.append(_step(
            ctx, f"{DIAGNOSTIC_NAME[flag]} multiple procedure (rank {rank} of {day_count} units)", "mult_proc", flag,
            factor, f"the day's unit with the highest technical component in full, each other's technical component "
            f"less {tc_cut:.0%}" + (f" and, after the highest professional component, each professional component "
                                    f"less {pc_cut:.0%}" if pc_cut else "") +
            f": {said}cut {tc:.2f} (TC) + {pc:.2f} (PC) over {base.claim.units} unit(s), factor "
            f"{factor.quantize(Decimal('0.0001'))}."))
    elif flag in DIAGNOSTIC_MPPR and base.fee != base.uncapped_fee and day_count > 1:
        base.steps.append(_step(ctx, "multiple procedure (not applied)", "mult_proc", flag, None,
                                ctx.indicators.explain("mult_proc", flag).meaning + " Not applied to a line the OPPS "
                                "cap priced (its technical component is the cap's amount)."))


def _finish(base: _Base, rank: int, factor: Decimal, day_count: int, ctx: _Context) -> PricedLine:
    exact = base.endoscopic_paid if base.endoscopic is not None else base.therapy[3] if base.therapy else \
        base.diagnostic[3] * base.bilateral_factor if base.diagnostic else None
    if exact is not None:               # the rule's amount over the fee, rounded up in the tenth decimal so
        gross = base.fee * base.bilateral_factor    # that the workbook's ROUND(fee x factors, 2) gives `allowed`
        factor = (exact / gross).quantize(Decimal("1e-10"), ROUND_CEILING) if gross else Decimal(0)
        factor = factor if factor else Decimal(0)
        rank = base.therapy[0] if base.therapy else base.diagnostic[0] if base.diagnostic else rank
    _multiple_steps(base, rank, factor, day_count, ctx)
    allowed = cents(exact * base.surgeon_factor) if exact is not None else \
        cents(base.fee * factor * base.bilateral_factor * base.surgeon_factor)
    return PricedLine(claim=base.claim, priced=base.priced, pricing_modifier=base.pricing_modifier, cf=base.cf,
                      cf_label=base.cf_label, cf_reference=base.cf_reference, rvus=base.rvus,
                      uncapped_fee=base.uncapped_fee, opps_cap=base.opps_cap,
                      fee=base.fee, rank=rank, multiple_factor=factor, bilateral_factor=base.bilateral_factor,
                      surgeon_factor=base.surgeon_factor, allowed=allowed, steps=tuple(base.steps))


def _modifier_rows(con: duckdb.DuckDBPyConnection, codes: list[str]) -> dict[str, set[str]]:
    """code -> the modifiers with their own RVU row in any loaded final release (26, TC, 53, ...)."""
    found = con.execute("SELECT hcpcs, list(DISTINCT mod) FROM current_rvu WHERE mod <> '' AND hcpcs IN "
                        "(SELECT unnest($1)) GROUP BY hcpcs", [codes]).fetchall()
    return {code: set(mods) for code, mods in found}


def _context(con: duckdb.DuckDBPyConnection, lines: list[ClaimLine]) -> _Context:
    """Only what the lines need: national rows of their codes over the span of their years (with
    modifier rows only for codes a line prices with a modifier), and the indicators of those rows."""
    codes = sorted({line.code for line in lines})
    modifiers_of = _modifier_rows(con, codes) if codes else {}
    priced_with_modifier = sorted({l.code for l in lines if set(l.modifiers) & modifiers_of.get(l.code, set())})
    book = directory(con)
    span = max(book.gpci) - min((l.date_of_service.year for l in lines), default=max(book.gpci)) + 1
    years = min(max(span, 1), 50)
    national = value(con, [c for c in codes if c not in priced_with_modifier], years=years)[0]
    national += value(con, priced_with_modifier, years=years, modifiers=True)[0] if priced_with_modifier else []
    finals = [r for r in national if not r.proposed]
    cys_of: dict[str, list[int]] = defaultdict(list)
    for row in finals:
        if not row.mod:
            cys_of[row.hcpcs].append(row.cy)
    wanted = {(l.date_of_service.year, l.code, next((m for m in l.modifiers if m in modifiers_of.get(l.code, ())), ""))
              for l in lines}
    flags = indicator_values(con, sorted(wanted))
    # a global diagnostic line's reduction is of its technical (and professional) component: their own rows
    diagnostic = sorted({code for (_, code, mod), f in flags.items() if not mod and f.get("mult_proc") in DIAGNOSTIC_MPPR})
    if diagnostic:
        finals += [r for r in value(con, diagnostic, years=years, modifiers=True)[0]
                   if not r.proposed and r.mod in ("TC", "26")]
    # an endoscopy's base code prices its family (§40.6) whether or not a line bills it
    bases = sorted({f["endo_base"] for f in flags.values() if f.get("mult_proc") == "3" and f.get("endo_base")}
                   - set(codes))
    finals += [r for r in value(con, bases, years=years)[0] if not r.proposed] if bases else []
    return _Context(book=book, indicators=load_indicators(), rows={(r.hcpcs, r.cy, r.mod): r for r in finals},
                    modifiers_of=modifiers_of, cys_of=dict(cys_of), flags=flags)


def price_claim(con: duckdb.DuckDBPyConnection, lines: list[ClaimLine],
                errors: list[LineError] | None = None) -> PricedClaim:
    """Price every line that can be priced; the others become LineErrors (with `errors` from reading)."""
    ctx = _context(con, lines)
    bases, problems = [], list(errors or [])
    for line in lines:
        try:
            bases.append(_base(line, ctx))
        except _Problem as exc:
            problems.append(LineError(line=line.line, code=line.code, reason=str(exc)))
    ranks = _multiple(bases, ctx)
    therapy_units = _therapy(bases)
    diagnostic_units = _diagnostic(bases, ctx)
    per_day = defaultdict(int)
    for base in bases:
        if base.flags.get("mult_proc") in SURGICAL_MPPR:
            per_day[_group(base)] += base.claim.units
    priced = [_finish(b, *ranks.get(b.claim.line, (0, Decimal(b.claim.units))),
                      therapy_units[_group(b)] if b.therapy else
                      diagnostic_units[(b.claim.date_of_service, b.flags["mult_proc"])]
                      if b.flags.get("mult_proc") in DIAGNOSTIC_MPPR else per_day[_group(b)], ctx) for b in bases]
    notes = sorted({n for b in bases for n in [ctx.book.county_note(b.priced.national.cy)] if n})
    return PricedClaim(lines=sorted(priced, key=lambda p: p.claim.line),
                       errors=sorted(problems, key=lambda e: e.line), notes=notes)


def _text(value) -> str | None:
    return None if value is None else str(value)


def line_record(line: PricedLine) -> dict:
    """A flat, JSON-ready record of a priced line with its steps and provenance."""
    place, national = line.place, line.priced.national
    return {
        "line": line.claim.line, "code": line.claim.code, "modifiers": " ".join(line.claim.modifiers),
        "units": line.claim.units, "facility": line.claim.facility, "date_of_service": line.claim.date_of_service.isoformat(),
        "mac": place.mac, "locality": place.locality, "locality_name": place.name, "state": place.state,
        "label": line.label, "work_rvu": _text(line.rvus[0]), "pe_rvu": _text(line.rvus[1]), "mp_rvu": _text(line.rvus[2]),
        "gpci_work": str(place.gpci_work), "gpci_pe": str(place.gpci_pe), "gpci_mp": str(place.gpci_mp),
        "cf": str(line.cf), "cf_label": line.cf_label, "cf_reference": line.cf_reference, "uncapped_fee": str(line.uncapped_fee),
        "opps_cap": _text(line.opps_cap), "fee": str(line.fee), "rank": line.rank,
        "multiple_factor": str(line.multiple_factor), "bilateral_factor": str(line.bilateral_factor),
        "surgeon_factor": str(line.surgeon_factor), "allowed": str(line.allowed),
        "steps": [{"name": s.name, "indicator": s.indicator, "factor": _text(s.factor), "meaning": s.meaning,
                   "citation": s.citation, "href": s.href} for s in line.steps],
        "rvu_file": national.source_file, "rvu_sha256": national.sha256,
        "gpci_file": place.source_file, "gpci_sha256": place.sha256,
    }


def claim_record(claim: PricedClaim) -> dict:
    return {"total_allowed": str(claim.total), "lines": [line_record(line) for line in claim.lines],
            "errors": [{"line": e.line, "code": e.code, "reason": e.reason} for e in claim.errors],
            "notes": claim.notes}


# Excel columns of the Claim sheet: (header, record key or None for a formula, number format).
SHEET_COLUMNS = (
    ("Line", "line", None), ("Code", "code", None), ("Modifiers", "modifiers", None), ("Units", "units", None),
    ("Facility", "facility", None), ("Date of service", "date_of_service", None), ("MAC", "mac", None),
    ("Locality", "locality", None), ("Locality name", "locality_name", None), ("Cite as", "label", None),
    ("Work RVU", "work_rvu", "0.00"), ("PE RVU", "pe_rvu", "0.00"), ("MP RVU", "mp_rvu", "0.00"),
    ("Work GPCI", "gpci_work", "0.000"), ("PE GPCI", "gpci_pe", "0.000"), ("MP GPCI", "gpci_mp", "0.000"),
    ("CF", "cf", "0.0000"), ("PFS fee", None, "#,##0.00"), ("OPPS cap", "opps_cap", "#,##0.00"),
    ("Fee used", None, "#,##0.00"), ("Multiple-procedure factor", "multiple_factor", "0.000"),
    ("Bilateral factor", "bilateral_factor", "0.000"), ("Surgeon factor", "surgeon_factor", "0.000"),
    ("Allowed", None, "#,##0.00"), ("CareNav allowed (check)", "allowed", "#,##0.00"), ("Steps", None, None),
)
FORMULAS = {  # recompute the amounts from the cells of the row (columns per SHEET_COLUMNS)
    "PFS fee": "=ROUND((K{r}*N{r}+L{r}*O{r}+M{r}*P{r})*Q{r},2)",
    "Fee used": '=IF(S{r}="",R{r},MIN(R{r},S{r}))',
    "Allowed": "=ROUND(T{r}*U{r}*V{r}*W{r},2)",
}


def _cell_value(record: dict, key: str | None, header: str, row: int):
    if key is None:
        if header == "Steps":
            return "; ".join(f"{s['name']} {s['indicator']} x{s['factor'] or '-'} ({s['citation']})" for s in record["steps"])
        return FORMULAS[header].format(r=row)
    value_ = record[key]
    numeric = header not in ("MAC", "Locality", "Code", "Line", "Units", "Modifiers", "Date of service")
    if numeric and isinstance(value_, str):
        try:
            return float(Decimal(value_))
        except ArithmeticError:
            return value_
    return value_


def claim_workbook(claim: PricedClaim) -> bytes:
    """The priced claim as .xlsx: Claim (inputs, RVUs, GPCIs, CF and formulas that recompute each
    amount, with CareNav's own amount beside them), Errors, Provenance (files, sha256, CFs, GPCI rows)."""
    from openpyxl import Workbook
    from openpyxl.styles import Font
    book = Workbook()
    sheet = book.active
    sheet.title = "Claim"
    sheet.append([h for h, _, _ in SHEET_COLUMNS])
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for row_number, line in enumerate(claim.lines, start=2):
        record = line_record(line)
        sheet.append([_cell_value(record, key, header, row_number) for header, key, _ in SHEET_COLUMNS])
        for column, (_, _, fmt) in enumerate(SHEET_COLUMNS, start=1):
            if fmt:
                sheet.cell(row=row_number, column=column).number_format = fmt
    last = len(claim.lines) + 1
    sheet.append(["Total"] + [None] * 22 + [f"=SUM(X2:X{last})", float(claim.total)])
    sheet.freeze_panes = "B2"
    errors = book.create_sheet("Errors")
    errors.append(["Line", "Code", "Reason"])
    for error in claim.errors:
        errors.append([error.line, error.code, error.reason])
    _provenance(book.create_sheet("Provenance"), claim)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _provenance(sheet, claim: PricedClaim) -> None:
    sheet.append(["Files"])
    sheet.append(["kind", "file", "sha256"])
    files = {("PPRRVU", l.priced.national.source_file, l.priced.national.sha256) for l in claim.lines}
    files |= {("GPCI", l.place.source_file, l.place.sha256) for l in claim.lines}
    for kind, path, sha in sorted(files):
        sheet.append([kind, path, sha])
    sheet.append([])
    sheet.append(["Conversion factors"])
    sheet.append(["CF label", "value", "reference"])
    for label, cf, reference in sorted({(l.cf_label, l.cf, l.cf_reference) for l in claim.lines}):
        sheet.append([label, float(cf), reference])
    sheet.append([])
    sheet.append(["GPCI rows used"])
    sheet.append(["CY", "MAC", "locality", "state", "name", "work GPCI", "PE GPCI", "MP GPCI", "release", "file", "sha256"])
    for p in sorted({l.place for l in claim.lines}, key=lambda p: (p.cy, p.mac, p.locality)):
        sheet.append([p.cy, p.mac, p.locality, p.state, p.name, float(p.gpci_work), float(p.gpci_pe), float(p.gpci_mp),
                      p.release_id, p.source_file, p.sha256])
    sheet.append([])
    sheet.append(["Notes"])
    for note in claim.notes + ["RVUs: the latest release of the date of service's CY; CF: the rule's CF in force "
                               "on the date of service (first listed variant, e.g. non-QP)."]:
        sheet.append([note])
