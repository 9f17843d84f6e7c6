"""The one column spec of a valuation row: name, header, unit, help. It drives the analyst table
(order, headers, formats), the CSV and JSON records and the model's Valuation block, so a field is
described once. Money and RVUs stay Decimal until a column formats them for display."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Callable, Literal

from carenav_core.codes.families import payment_unit
from carenav_core.pfs.rows import UNPAID_STATUS, ValuationRow

Unit = Literal["text", "rvu", "usd", "cf", "int", "flag"]
UNPAID_MONEY = ("payment_nonfac", "payment_fac")        # shown blank for a status Medicare pays nothing for


@dataclass(frozen=True, kw_only=True)
class Column:
    """One field of a valuation row as every output shows it."""
    name: str                              # key in CSV/JSON records and table frames
    header: str                            # table header
    unit: Unit
    help: str
    shown: bool = True                     # in the on-screen table (the CSV and JSON carry every column)
    prompt: str = ""                       # words before the value in the model's Valuation block ("" = not sent)
    read: Callable[[ValuationRow], object] | None = None    # derived columns; default getattr(row, name)

    def value(self, row: ValuationRow) -> object:
        """The exact value (Decimal for money and RVUs)."""
        return self.read(row) if self.read else getattr(row, self.name)

    def text(self, row: ValuationRow) -> str | bool | int | None:
        """The exact value for CSV/JSON: Decimals as their exact strings, text and flags as they are."""
        value = self.value(row)
        return str(value) if isinstance(value, Decimal) else value

    def display(self, row: ValuationRow) -> object:
        """The value for an on-screen table (numbers as floats: formatting is the table's job). A status Medicare pays
        nothing for (UNPAID_STATUS) shows no payment: its RVUs times the CF is none (the CSV keeps the product)."""
        if self.name in UNPAID_MONEY and row.status in UNPAID_STATUS:
            return None
        value = self.value(row)
        return float(value) if isinstance(value, Decimal) else value

    def spoken(self, row: ValuationRow) -> str:
        """The value as the Valuation block writes it ("$15.20", "0.25", "not given")."""
        value = self.value(row)
        if value is None or value == "":
            return "not given"
        return f"${value}" if self.unit in ("usd", "cf") else str(value)


def vintage_label(row: ValuationRow) -> str:
    """'CY2025 final RVU25D' or 'CY2027 PROPOSED CMS-1832-P'."""
    return f"CY{row.cy} " + (f"PROPOSED {row.rule_id}" if row.proposed else f"final {row.vintage.upper()}")


def _other_cfs(row: ValuationRow) -> str:
    return "; ".join(f"{c.label} {c.value}" for c in row.other_cfs)


COLUMNS: tuple[Column, ...] = (
    Column(name="hcpcs", header="Code", unit="text", help="HCPCS / CPT code"),
    Column(name="mod", header="Mod", unit="text", help="Modifier row (26 professional, TC technical, 53 ...)"),
    Column(name="description", header="Descriptor", unit="text", help="CMS short descriptor (CPT: AMA notice)"),
    Column(name="locality", header="Locality", unit="text",
           help="Payment locality (GPCI-adjusted amounts); empty for national amounts"),
    Column(name="vintage_label", header="Vintage", unit="text", read=vintage_label,
           help="Calendar year and the CMS release (final) or proposed rule the row comes from"),
    Column(name="payment_nonfac", header="Payment non-facility", unit="usd", prompt="payment non-facility",
           help="National non-facility payment: total non-facility RVUs x CF, half-up to cents"),
    Column(name="payment_fac", header="Payment facility", unit="usd", prompt="facility",
           help="National facility payment: total facility RVUs x CF, half-up to cents"),
    Column(name="payment_unit", header="Paid", unit="text", read=lambda r: f"not paid (status {r.status})" if
           r.status in UNPAID_STATUS else payment_unit(r.hcpcs),
           help="What one payment covers (per service, or per calendar month for care management codes); 'not paid' "
                "for a status Medicare pays nothing for under the fee schedule (B, I, N, X ...)"),
    Column(name="label", header="Cite as", unit="text", help="The label prose cites for this row"),
    Column(name="status", header="Status", unit="text", help="PPRRVU status code"),
    Column(name="global_days", header="Global", unit="text",
           help="Global surgery period: 000/010/090 post-operative days, XXX not applicable, ZZZ add-on"),
    Column(name="work_rvu", header="Work RVU", unit="rvu", prompt="work RVU", help="Physician work RVU"),
    Column(name="pe_nonfac_rvu", header="PE RVU non-fac", unit="rvu", prompt="PE RVU non-facility",
           help="Practice expense RVU, non-facility setting"),
    Column(name="pe_fac_rvu", header="PE RVU fac", unit="rvu", prompt="facility", help="Practice expense RVU, facility"),
    Column(name="mp_rvu", header="MP RVU", unit="rvu", prompt="MP RVU", help="Malpractice RVU"),
    Column(name="total_nonfac", header="Total non-fac", unit="rvu", prompt="total RVUs non-facility",
           help="Total RVUs, non-facility"),
    Column(name="total_fac", header="Total fac", unit="rvu", prompt="facility", help="Total RVUs, facility"),
    Column(name="cf", header="CF", unit="cf", prompt="conversion factor used",
           help="Conversion factor in force at the release's effective date"),
    Column(name="cf_label", header="CF used", unit="text", help="Which conversion factor (period, QP status)"),
    Column(name="status_meaning", header="Status meaning", unit="text", help="What the status code means"),
    Column(name="cy", header="CY", unit="int", shown=False, help="Calendar year"),
    Column(name="proposed", header="Proposed", unit="flag", shown=False, help="From a proposed rule"),
    Column(name="vintage", header="Release", unit="text", shown=False, help="Release id or proposed rule id"),
    Column(name="effective_date", header="Effective", unit="text", shown=False, help="Date the release applies"),
    Column(name="nonfac_na", header="Non-fac NA", unit="text", shown=False, help="Non-facility not applicable flag"),
    Column(name="fac_na", header="Fac NA", unit="text", shown=False, help="Facility not applicable flag"),
    Column(name="pctc", header="PC/TC", unit="text", shown=False, help="PC/TC indicator"),
    Column(name="other_cfs", header="Other CFs", unit="text", shown=False, read=_other_cfs,
           help="Other conversion factors of the same year (periods, QP status)"),
    Column(name="rule_id", header="Rule", unit="text", shown=False, help="Rule the vintage belongs to"),
    Column(name="fr_citation", header="FR citation", unit="text", shown=False, help="Federal Register citation"),
    Column(name="fr_url", header="FR address", unit="text", shown=False, help="Federal Register address"),
    Column(name="file_cf", header="CF in file", unit="cf", shown=False, help="CF printed in the CMS file (audit)"),
    Column(name="source_file", header="Source file", unit="text", shown=False, help="CMS file the row was read from"),
    Column(name="sha256", header="sha256", unit="text", shown=False, help="sha256 of that file"),
    Column(name="named", header="Named", unit="flag", shown=False, help="The question names this code"),
    Column(name="in_focus", header="Asked", unit="flag", shown=False,
           help="A named code in a year the question asks about"),
)
SHOWN = tuple(c for c in COLUMNS if c.shown)
BY_NAME = {c.name: c for c in COLUMNS}
PROMPT_RVUS = tuple(BY_NAME[n] for n in ("work_rvu", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu", "total_nonfac",
                                         "total_fac"))
PROMPT_MONEY = tuple(BY_NAME[n] for n in ("payment_nonfac", "payment_fac"))


# CSV/JSON order: provenance-first, as the first release of `carenav value --json` wrote it.
RECORD = tuple(BY_NAME[n] for n in (
    "label", "hcpcs", "mod", "description", "cy", "proposed", "vintage", "vintage_label", "effective_date", "status",
    "status_meaning", "work_rvu", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu", "total_nonfac", "total_fac", "nonfac_na",
    "fac_na", "pctc", "global_days", "cf", "cf_label", "other_cfs", "payment_nonfac", "payment_fac", "payment_unit",
    "rule_id",
    "fr_citation", "fr_url", "file_cf", "source_file", "sha256", "locality", "named", "in_focus"))
assert {c.name for c in RECORD} == set(BY_NAME), "every column is in the CSV/JSON record"


def row_record(row: ValuationRow) -> dict:
    """A flat, JSON/CSV-ready record of a row: every column, exact values (Decimals as exact strings)."""
    return {c.name: c.text(row) for c in RECORD}
