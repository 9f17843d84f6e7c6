"""Typed values the valuation layer hands to everything above it."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Sequence

# Status codes of the PPRRVU file (CMS RVU file record layout, "STATUS CODE").
STATUS_MEANINGS = {
    "A": "Active code, paid under the PFS",
    "B": "Bundled code: payment is included in other services",
    "C": "Carrier-priced code",
    "D": "Deleted code",
    "E": "Excluded from the PFS by regulation",
    "F": "Deleted/discontinued code (no grace period)",
    "G": "Not valid for Medicare: another code is used",
    "H": "Deleted modifier",
    "I": "Not valid for Medicare purposes",
    "J": "Anesthesia service (no RVUs)",
    "M": "Measurement code (reporting only)",
    "N": "Non-covered service",
    "P": "Bundled or excluded",
    "R": "Restricted coverage",
    "T": "Injections (paid when the only service)",
    "X": "Statutory exclusion",
}


# The notice the CMS PPRRVU files carry for CPT (Level I) codes and short descriptors.
AMA_NOTICE = ("CPT codes and descriptions only are copyright American Medical Association. All Rights "
              "Reserved. Applicable FARS/DFARS Apply. Descriptors shown are the CMS short descriptors.")


def shows_cpt(rows) -> bool:
    """Whether any row is a CPT (Level I, numeric) code, whose descriptor carries the AMA notice."""
    return any(r.hcpcs[:1].isdigit() for r in rows)


@dataclass(frozen=True, kw_only=True)
class ConversionFactor:
    """One national CF as the rule metadata records it."""
    value: Decimal
    label: str            # e.g. "CY2024 Jan 1-Mar 8", "CY2026 non-QP"
    reference: str        # address of the source
    effective: date | None = None    # the days it applies to (a year with two CFs by date: each its own part)
    until: date | None = None

    def covers(self, first: date, last: date) -> bool:
        """Whether every day from `first` to `last` falls in this CF's period."""
        return self.effective is not None and self.until is not None and self.effective <= first <= last <= self.until


CENT = Decimal("0.01")


def payment(total: Decimal | None, cf: Decimal | None) -> Decimal | None:
    """National payment in dollars: total RVUs x CF, half-up to cents; blank when either is blank.

    >>> payment(Decimal("0.47"), Decimal("32.3465"))
    Decimal('15.20')
    """
    if total is None or cf is None:
        return None
    return (total * cf).quantize(CENT, rounding=ROUND_HALF_UP)


# Statuses Medicare pays nothing for under the fee schedule (B bundled, I not valid for Medicare, N non-covered, X
# statutory exclusion, ...): their RVUs times the CF is no payment, so no table shows it as one
UNPAID_STATUS = frozenset("BDEFGHIMNPX")


@dataclass(frozen=True, kw_only=True)
class ValuationRow:
    """One code, one vintage (final CY release or proposed rule), one modifier."""
    hcpcs: str
    mod: str                       # "" for the base row
    description: str               # CMS short descriptor (CPT: AMA copyright notice applies)
    cy: int
    proposed: bool
    vintage: str                   # release id ("rvu25d") or proposed rule id ("CMS-1848-P")
    effective_date: str            # ISO date the release/rule takes effect ("" if unknown)
    status: str
    status_meaning: str
    work_rvu: Decimal | None
    pe_nonfac_rvu: Decimal | None
    pe_fac_rvu: Decimal | None
    mp_rvu: Decimal | None
    total_nonfac: Decimal | None
    total_fac: Decimal | None
    nonfac_na: str
    fac_na: str
    pctc: str
    global_days: str
    cf: Decimal | None
    cf_label: str
    other_cfs: tuple[ConversionFactor, ...]
    payment_nonfac: Decimal | None
    payment_fac: Decimal | None
    label: str                     # "[PFS CY2025 RVU25D]", "[CY2027 NPRM Addendum B]"
    rule_id: str
    fr_citation: str               # "89 FR 97710"
    fr_url: str
    file_cf: Decimal | None        # the CF printed in the CMS file (audit only)
    source_file: str
    sha256: str
    locality: str = ""             # "" national; else the payment locality ("WA 02 Seattle (King County)")
    named: bool = True             # the question names this code (False: added by family expansion)
    in_focus: bool = True          # a named code in a year the question asks about (shown first)
    # a locality row: its amounts at each other CF of the year, as pfs/locality.py prices them (not recomputed here)
    local_others: tuple[tuple[ConversionFactor, Decimal | None, Decimal | None], ...] = ()
    gpci: tuple[Decimal, Decimal, Decimal] | None = None    # a locality row: its work, PE and MP GPCIs

    @property
    def code_with_modifier(self) -> str:
        """"71046-26", or the code alone for a base row."""
        return f"{self.hcpcs}-{self.mod}" if self.mod else self.hcpcs

    def other_payments(self) -> tuple[tuple[ConversionFactor, Decimal | None, Decimal | None], ...]:
        """(CF, non-facility, facility payment) at each other CF of the year ("CY2024 Jan 1-Mar 8"): national rows
        compute them, a locality row carries its locality's."""
        if self.locality:
            return self.local_others
        return tuple((c, payment(self.total_nonfac, c.value), payment(self.total_fac, c.value)) for c in self.other_cfs)

    def numbers(self) -> tuple[Decimal, ...]:
        """Every number this row states (for the output guard)."""
        values = (self.work_rvu, self.pe_nonfac_rvu, self.pe_fac_rvu, self.mp_rvu, self.total_nonfac,
                  self.total_fac, self.cf, self.payment_nonfac, self.payment_fac,
                  *(c.value for c in self.other_cfs), *(v for _, *paid in self.other_payments() for v in paid),
                  Decimal(int(self.global_days)) if self.global_days.isdigit() else None)    # "090": 90 days
        return tuple(v for v in values if v is not None)


def modifier_rows(rows: Sequence[ValuationRow], modifier: str = "") -> list[ValuationRow]:
    """The rows an answer is about: of `modifier` ("26", "TC") for a code that has such rows, else the rows
    without a modifier (in input order)."""
    priced = {r.hcpcs for r in rows if modifier and r.mod == modifier}
    return [r for r in rows if r.mod == (modifier if r.hcpcs in priced else "")]


def newest_rows(rows: Sequence[ValuationRow]) -> list[ValuationRow]:
    """Per code, modifier and locality (national: none): the newest final row, and the proposed row if there is
    one (in input order). "99214 in Miami compared to Seattle" keeps both places' rows."""
    newest: dict[tuple[str, str, str, bool], ValuationRow] = {}
    for row in rows:
        key = (row.hcpcs, row.mod, row.locality, row.proposed)
        if key not in newest or row.cy > newest[key].cy:
            newest[key] = row
    return [r for r in rows if newest.get((r.hcpcs, r.mod, r.locality, r.proposed)) is r]
