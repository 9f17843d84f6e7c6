"""Locality payment: the national RVUs of a code, adjusted by the GPCIs of a Medicare locality.

    fee = (work RVU x work GPCI + PE RVU x PE GPCI + MP RVU x MP GPCI) x CF, half-up to cents
    (42 CFR 414.22 and 414.26; CMS "How to use the searches" of the PFS Look-Up Tool), facility and
    non-facility PE RVUs each giving their own amount; checked to the cent against CMS's own payment
    file PFREV25C for 76145 in all 109 localities (tests/pfs/test_locality_pfrev.py).
    non-participating = 95% of the fee; limiting charge = 115% of the non-participating amount
    (Social Security Act 1848(a)(3) and 1848(g)(2)(C); 42 CFR 414.48), computed from the cent-rounded
    fee and rounded half-up to cents.
    OPPS cap (SSA 1848(b)(4), 42 CFR 414.22(b)(5)(i)): where the OPPSCAP file of the CY lists the code,
    modifier and locality, the fee is the lesser of the PFS amount and the cap; both are shown.

The RVU rows come from `valuation.value` (latest release of each CY, CF in force at its effective
date, other CFs such as QP/non-QP kept); GPCIs from the same CY's latest release. Where a CY lacks a
county crosswalk or anesthesia CF file (CY2026), the latest earlier CY's file is used and labelled.
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, fields
from functools import cached_property
from decimal import ROUND_HALF_UP, Decimal

import duckdb

from carenav_core.errors import CareNavError, NotBuiltError
from carenav_core.pfs.rows import ValuationRow
from carenav_core.pfs.valuation import value

CENT = Decimal("0.01")
NONPAR = Decimal("0.95")          # SSA 1848(a)(3): non-participating physicians are paid 95%
LIMITING = Decimal("1.15")        # SSA 1848(g)(2)(C): limiting charge 115% of the non-par amount


class LocalityError(CareNavError):
    """A locality was named that the loaded GPCI files do not have."""


@dataclass(frozen=True, kw_only=True)
class Locality:
    """One Medicare payment locality of one CY's GPCI file (Addendum E)."""
    cy: int
    mac: str
    locality: str
    state: str
    name: str
    gpci_work: Decimal
    gpci_pe: Decimal
    gpci_mp: Decimal
    release_id: str
    source_file: str
    sha256: str

    @cached_property
    def thousandths(self) -> tuple[int, int, int] | None:
        """The three GPCIs as integer thousandths (the files print 3 decimals), None if not exact."""
        return _scaled((self.gpci_work, self.gpci_pe, self.gpci_mp), 1000)

    @cached_property
    def key(self) -> str:
        """"02402:02" (MAC:locality), the form the CLI and the pricer accept."""
        return f"{self.mac}:{self.locality}"

    @cached_property
    def tag(self) -> str:
        """"GPCI2026 WA 02" (the locality part of a row label)."""
        return f"GPCI{self.cy} {self.state} {self.locality}"


@dataclass(frozen=True, kw_only=True)
class CountyArea:
    """One row of a county crosswalk (LOCCO): the counties of a fee schedule area."""
    cy: int
    mac: str
    locality: str
    state: str
    fee_schedule_area: str
    counties: str
    source_file: str


@dataclass(frozen=True, kw_only=True)
class LocalityDirectory:
    """Everything locality-shaped in one build, read once per process and build."""
    gpci: dict[int, tuple[Locality, ...]]          # CY -> localities of its latest release
    counties: dict[int, tuple[CountyArea, ...]]    # CY -> LOCCO rows of its latest release
    anes: dict[tuple[int, str], tuple[Decimal, int]]  # (CY, MAC:LOC) -> (anesthesia CF, CY of the ANES file)
    caps: dict[tuple[int, str, str, str], tuple[Decimal, Decimal, str]]  # (CY, code, mod, MAC:LOC) -> fac, nonfac, file

    def localities(self, cy: int) -> tuple[Locality, ...]:
        return self.gpci.get(cy, ())

    def county_year(self, cy: int) -> int | None:
        """The CY whose county crosswalk serves `cy`: itself, else the latest earlier one loaded."""
        earlier = [y for y in self.counties if y <= cy]
        return max(earlier) if earlier else (min(self.counties) if self.counties else None)

    def county_areas(self, cy: int) -> tuple[CountyArea, ...]:
        year = self.county_year(cy)
        return self.counties.get(year, ()) if year is not None else ()

    def county_note(self, cy: int) -> str:
        """Empty when `cy` has its own county file; else which CY's file stands in for it."""
        year = self.county_year(cy)
        if year is None or year == cy:
            return ""
        return f"no CY{cy} county file loaded: counties per the CY{year} LOCCO file"

    def find(self, cy: int, key: str) -> Locality:
        """The locality "MAC:LOC" (or "MACLOC") of CY `cy`; LocalityError naming the choices otherwise."""
        mac, _, number = key.replace(" ", "").partition(":")
        wanted = f"{mac.zfill(5)}:{number.zfill(2)}" if number else f"{key[:5]}:{key[5:]}"
        for place in self.localities(cy):
            if place.key == wanted:
                return place
        raise LocalityError(f"locality {key!r} is not in the CY{cy} GPCI file; expected MAC:LOC such as "
                            f"{', '.join(p.key for p in self.localities(cy)[:3])} (see `carenav value 99214 "
                            f"--locality all`)")


# Per CY, the rows of its latest release (by effective date) that has the table's file.
_LATEST = """SELECT t.* FROM {table} t JOIN (SELECT t2.cy, arg_max(t2.release_id, r.effective) AS release_id
  FROM (SELECT DISTINCT cy, release_id FROM {table}) t2 JOIN releases r USING (release_id) GROUP BY t2.cy) l
  USING (cy, release_id)"""
_GPCI = _LATEST.format(table="gpci") + " ORDER BY cy, state, mac, locality"
_directories: OrderedDict[str, LocalityDirectory] = OrderedDict()
_lock = threading.Lock()


def _records(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _printed(value: Decimal, places: int) -> Decimal:
    """A DECIMAL(18,6) from DuckDB as the CMS file prints it (GPCIs 3 places, anesthesia CFs 2)."""
    value = Decimal(value)
    shown = value.quantize(Decimal(1).scaleb(-places))
    return shown if shown == value else value.normalize()


def _load_directory(con: duckdb.DuckDBPyConnection) -> LocalityDirectory:
    gpci: dict[int, list[Locality]] = defaultdict(list)
    for r in _records(con, _GPCI):
        gpci[r["cy"]].append(Locality(cy=r["cy"], mac=r["mac"], locality=r["locality"], state=r["state"],
                                      name=r["locality_name"], gpci_work=_printed(r["gpci_work"], 3),
                                      gpci_pe=_printed(r["gpci_pe"], 3), gpci_mp=_printed(r["gpci_mp"], 3), release_id=r["release_id"],
                                      source_file=r["source_file"], sha256=r["sha256"]))
    counties: dict[int, list[CountyArea]] = defaultdict(list)
    for r in _records(con, _LATEST.format(table="locco")):
        counties[r["cy"]].append(CountyArea(cy=r["cy"], mac=r["mac"], locality=r["locality"], state=r["state"],
                                            fee_schedule_area=r["fee_schedule_area"], counties=r["counties"],
                                            source_file=r["source_file"]))
    caps = {(r["cy"], r["hcpcs"], r["mod"], f"{r['mac']}:{r['locality']}"):
            (cents(r["cap_fac"]), cents(r["cap_nonfac"]), r["source_file"])
            for r in _records(con, _LATEST.format(table="oppscap"))}
    anes = _anes_by_year(_records(con, _LATEST.format(table="anes")), sorted(gpci))
    return LocalityDirectory(gpci={cy: tuple(v) for cy, v in gpci.items()},
                             counties={cy: tuple(v) for cy, v in counties.items()}, anes=anes, caps=caps)


def _anes_by_year(records: list[dict], cys: list[int]) -> dict[tuple[int, str], tuple[Decimal, int]]:
    """(CY, MAC:LOC) -> (anesthesia CF, CY of the file); a CY without an ANES file takes the latest
    earlier CY's CF for the same locality (CY2026: the CY2025 file)."""
    loaded = {(r["cy"], f"{r['mac']}:{r['locality']}"): (_printed(r["anes_cf"], 2), r["cy"]) for r in records}
    years = sorted({cy for cy, _ in loaded})
    for cy in cys:
        earlier = [y for y in years if y < cy]
        if cy in years or not earlier:
            continue
        for (year, key), value_ in list(loaded.items()):
            if year == earlier[-1]:
                loaded.setdefault((cy, key), value_)
    return loaded


def directory(con: duckdb.DuckDBPyConnection) -> LocalityDirectory:
    """The locality directory of the build `con` reads (cached per build id, like the code index)."""
    try:
        build_id = con.execute("SELECT value FROM build_info WHERE key = 'build_id'").fetchall()[0][0]
        with _lock:
            if build_id not in _directories:
                _directories[build_id] = _load_directory(con)
                while len(_directories) > 2:
                    _directories.popitem(last=False)
            return _directories[build_id]
    except duckdb.CatalogException as exc:
        raise NotBuiltError("this fee-schedule database has no locality tables (built before GPCIs were "
                            "loaded); rebuild it with `carenav build`") from exc


def _scaled(values, scale: int) -> tuple[int, ...] | None:
    """`values` x scale as ints when every one is exact at that scale (else None: use Decimals)."""
    out = []
    for v in values:
        if v is None:
            return None
        scaled = v * scale
        if scaled != scaled.to_integral_value():
            return None
        out.append(int(scaled))
    return tuple(out)


def _fast_fee(rvus: tuple[int, int, int], gpcis: tuple[int, int, int], cf: int) -> Decimal:
    """The fee in exact integer arithmetic: RVUs in hundredths x GPCIs in thousandths x CF in
    ten-thousandths is in units of 1e-9 dollars; half-up to cents (amounts are never negative).
    Equal to `locality_fee` whenever the inputs are exact at those scales (a test checks both)."""
    total = (rvus[0] * gpcis[0] + rvus[1] * gpcis[1] + rvus[2] * gpcis[2]) * cf
    return Decimal((total + 5_000_000) // 10_000_000).scaleb(-2)


def cents(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def locality_fee(work: Decimal | None, pe: Decimal | None, mp: Decimal | None, place: Locality,
                 cf: Decimal | None) -> Decimal | None:
    """GPCI-adjusted fee in dollars, half-up to cents; None when an RVU or the CF is missing.

    >>> p = Locality(cy=2025, mac="01112", locality="05", state="CA", name="SAN FRANCISCO", gpci_work=Decimal("1.088"),
    ...              gpci_pe=Decimal("1.419"), gpci_mp=Decimal("0.445"), release_id="", source_file="", sha256="")
    >>> locality_fee(Decimal("0"), Decimal("29.03"), Decimal("0.51"), p, Decimal("32.3465"))  # PFREV25C: 1339.81
    Decimal('1339.81')
    """
    if work is None or pe is None or mp is None or cf is None:
        return None
    return cents((work * place.gpci_work + pe * place.gpci_pe + mp * place.gpci_mp) * cf)


def nonpar_and_limiting(fee: Decimal | None) -> tuple[Decimal | None, Decimal | None]:
    """(non-participating amount, limiting charge) of a participating fee.

    >>> nonpar_and_limiting(Decimal("100.00"))
    (Decimal('95.00'), Decimal('109.25'))
    """
    if fee is None:
        return None, None
    in_cents = int(fee.scaleb(2))
    if in_cents != fee.scaleb(2):
        return cents(fee * NONPAR), cents(fee * NONPAR * LIMITING)
    # 95% and 95% x 115% = 109.25% of a cent amount, half-up, in integers
    return Decimal((in_cents * 95 + 50) // 100).scaleb(-2), Decimal((in_cents * 10925 + 5000) // 10000).scaleb(-2)


@dataclass(frozen=True, kw_only=True)
class OtherCfPayment:
    """The same locality fee under another CF of the rule (QP, or another effective period)."""
    cf_label: str
    cf: Decimal
    payment_nonfac: Decimal | None
    payment_fac: Decimal | None


@dataclass(frozen=True, kw_only=True)
class LocalityRow:
    """One code + modifier, one final CY, one locality: participating, non-par and limiting amounts."""
    national: ValuationRow              # the national row it is computed from (RVUs, CF, provenance)
    place: Locality
    payment_nonfac: Decimal | None      # participating fee allowed (after the OPPS cap, when one applies)
    payment_fac: Decimal | None
    uncapped_nonfac: Decimal | None     # GPCI-adjusted PFS amount before the OPPS cap
    uncapped_fac: Decimal | None
    opps_cap_nonfac: Decimal | None     # the OPPSCAP price, when the file lists this code here
    opps_cap_fac: Decimal | None
    other_cfs: tuple[OtherCfPayment, ...]
    anes: tuple[Decimal, int] | None    # the locality's anesthesia CF (status J codes) and its file's CY

    # Derived amounts are computed when read (pricing all localities builds many rows; most show a few).
    @property
    def label(self) -> str:
        """"[PFS CY2026 RVU26C · GPCI2026 WA 02]"."""
        return f"[PFS CY{self.national.cy} {self.national.vintage.upper()} · {self.place.tag}]"

    @property
    def capped(self) -> bool:
        return self.opps_cap_nonfac is not None or self.opps_cap_fac is not None

    @property
    def nonpar_nonfac(self) -> Decimal | None:
        return nonpar_and_limiting(self.payment_nonfac)[0]

    @property
    def nonpar_fac(self) -> Decimal | None:
        return nonpar_and_limiting(self.payment_fac)[0]

    @property
    def limiting_charge_nonfac(self) -> Decimal | None:
        return nonpar_and_limiting(self.payment_nonfac)[1]

    @property
    def limiting_charge_fac(self) -> Decimal | None:
        return nonpar_and_limiting(self.payment_fac)[1]

    @property
    def anes_cf(self) -> Decimal | None:
        return self.anes[0] if self.anes else None

    @property
    def anes_note(self) -> str:
        """Which CY's ANES file gave the anesthesia CF, when not the row's own CY."""
        if self.anes and self.anes[1] != self.national.cy:
            return f"anesthesia CF per the CY{self.anes[1]} ANES file"
        return ""

    def numbers(self) -> tuple[Decimal, ...]:
        """Every number the row states (for the output guard)."""
        values = (self.payment_nonfac, self.payment_fac, self.uncapped_nonfac, self.uncapped_fac,
                  self.opps_cap_nonfac, self.opps_cap_fac, self.nonpar_nonfac, self.nonpar_fac,
                  self.limiting_charge_nonfac, self.limiting_charge_fac, self.place.gpci_work,
                  self.place.gpci_pe, self.place.gpci_mp, self.anes_cf,
                  *(v for o in self.other_cfs for v in (o.cf, o.payment_nonfac, o.payment_fac)))
        return self.national.numbers() + tuple(v for v in values if v is not None)


@dataclass(frozen=True, kw_only=True)
class LocalityResult:
    rows: list[LocalityRow]
    unpriced: list[str]        # codes no loaded final release prices
    notes: list[str]           # stand-in files, skipped proposed rows, missing localities


@dataclass(frozen=True, kw_only=True)
class _Units:
    """A national row's RVUs (hundredths) and CFs (ten-thousandths) as ints, computed once per row;
    `exact`: every present RVU is exact at 2 places (else the Decimal formula is used)."""
    nonfac: tuple[int, ...] | None
    fac: tuple[int, ...] | None
    cfs: dict[Decimal, int | None]
    exact: bool


def _units(row: ValuationRow) -> _Units:
    cfs = {c: (_scaled((c,), 10_000) or (None,))[0] for c in (row.cf, *(o.value for o in row.other_cfs)) if c}
    nonfac = _scaled((row.work_rvu, row.pe_nonfac_rvu, row.mp_rvu), 100)
    fac = _scaled((row.work_rvu, row.pe_fac_rvu, row.mp_rvu), 100)
    exact = (nonfac is not None or row.pe_nonfac_rvu is None) and (fac is not None or row.pe_fac_rvu is None)
    return _Units(nonfac=nonfac, fac=fac, cfs=cfs, exact=exact)


def _fees(row: ValuationRow, place: Locality, cf: Decimal | None, units: _Units) -> tuple[Decimal | None, Decimal | None]:
    """(non-facility, facility) fee; integer arithmetic when RVUs, GPCIs and CF are exact at 2/3/4 places
    (see `_fast_fee`), else the Decimal formula."""
    g = place.thousandths
    k = (units.cfs[cf] if cf in units.cfs else (_scaled((cf,), 10_000) or (None,))[0]) if cf else None
    if g is None or k is None or not units.exact:
        return (locality_fee(row.work_rvu, row.pe_nonfac_rvu, row.mp_rvu, place, cf),
                locality_fee(row.work_rvu, row.pe_fac_rvu, row.mp_rvu, place, cf))
    n, f = units.nonfac, units.fac
    return (Decimal(((n[0] * g[0] + n[1] * g[1] + n[2] * g[2]) * k + 5_000_000) // 10_000_000).scaleb(-2) if n else None,
            Decimal(((f[0] * g[0] + f[1] * g[1] + f[2] * g[2]) * k + 5_000_000) // 10_000_000).scaleb(-2) if f else None)


def _capped(fee: Decimal | None, cap: Decimal | None) -> Decimal | None:
    """The lesser of the PFS fee and the OPPS cap; a zero fee (carrier-priced, status C) is not capped."""
    return fee if not fee or cap is None else min(fee, cap)


_NO_CAP = (None, None, "")


def price_row(row: ValuationRow, place: Locality, book: LocalityDirectory, units: _Units | None = None,
              cf: Decimal | None = None) -> LocalityRow:
    """The locality amounts of one national row (`units`: `_units(row)`, passed when pricing many places;
    `cf`: another CF of the rule than the row's, e.g. the one in force on a date of service)."""
    units = units or _units(row)
    nonfac, fac = _fees(row, place, cf or row.cf, units)
    cap_fac, cap_nonfac, _ = book.caps.get((row.cy, row.hcpcs, row.mod, place.key), _NO_CAP) if book.caps else _NO_CAP
    # the OPPS cap is a dollar amount: it caps the fee at every CF of the year alike
    others = tuple(OtherCfPayment(cf_label=c.label, cf=c.value, payment_nonfac=_capped(fees[0], cap_nonfac),
                                  payment_fac=_capped(fees[1], cap_fac))
                   for c in row.other_cfs for fees in [_fees(row, place, c.value, units)]) if row.other_cfs else ()
    return _new_row(dict(
        national=row, place=place, payment_nonfac=_capped(nonfac, cap_nonfac), payment_fac=_capped(fac, cap_fac),
        uncapped_nonfac=nonfac, uncapped_fac=fac, opps_cap_nonfac=cap_nonfac, opps_cap_fac=cap_fac,
        other_cfs=others, anes=book.anes.get((row.cy, place.key))))


_ROW_FIELDS = frozenset(f.name for f in fields(LocalityRow))


def _new_row(values: dict) -> LocalityRow:
    """A LocalityRow built without the frozen dataclass __init__, which sets each field through
    object.__setattr__ and costs ~6x a plain one when hundreds of localities are priced; the instance
    is as frozen as any other (assignment still raises FrozenInstanceError)."""
    if values.keys() != _ROW_FIELDS:
        raise TypeError(f"LocalityRow fields expected: {sorted(_ROW_FIELDS)}; got {sorted(values)}")
    row = object.__new__(LocalityRow)
    row.__dict__.update(values)
    return row


def locality_rows(con: duckdb.DuckDBPyConnection, codes: list[str] | tuple[str, ...], *,
                  cys: list[int] | None = None, places: list[str] | None = None,
                  modifier: str | None = None, years: int = 50) -> LocalityResult:
    """Locality-priced rows for codes x final CYs x localities.

    `cys`: calendar years (default: the last `years` the code exists in); `places`: "MAC:LOC" keys
    (default: every locality of each CY); `modifier`: "" or None = base rows, "26"/"TC"/"53"... = that
    modifier's own RVU row. Proposed-rule rows have no GPCI file and are left out (noted)."""
    book = directory(con)
    national, unpriced = value(con, codes, years=years, modifiers=bool(modifier))
    wanted = (modifier or "").upper()
    chosen = [r for r in national if not r.proposed and r.mod == wanted and (not cys or r.cy in cys)]
    notes = sorted({f"{r.hcpcs} {r.label}: proposed-rule rows are national only (no GPCI file for CY{r.cy})"
                    for r in national if r.proposed and (not cys or r.cy in cys)})
    missing_mod = sorted({r.hcpcs for r in national if not r.proposed} - {r.hcpcs for r in chosen})
    if wanted and missing_mod:
        notes.append(f"modifier {wanted} is not priced for {', '.join(missing_mod)} in the chosen years")
    rows = []
    for row in chosen:
        targets = book.localities(row.cy) if not places else [_find_or_note(book, row.cy, k, notes) for k in places]
        units = _units(row)
        rows.extend(price_row(row, place, book, units) for place in targets if place is not None)
        note = book.county_note(row.cy)
        if note and note not in notes:
            notes.append(note)
    return LocalityResult(rows=rows, unpriced=unpriced, notes=notes)


def _find_or_note(book: LocalityDirectory, cy: int, key: str, notes: list[str]) -> Locality | None:
    try:
        return book.find(cy, key)
    except LocalityError as exc:
        if str(exc) not in notes:
            notes.append(str(exc))
        return None


def _text(value) -> str | None:
    return None if value is None else str(value)


def _national_part(national: ValuationRow) -> dict:
    return {"hcpcs": national.hcpcs, "mod": national.mod, "description": national.description, "cy": national.cy,
            "vintage": national.vintage, "status": national.status, "work_rvu": _text(national.work_rvu),
            "pe_nonfac_rvu": _text(national.pe_nonfac_rvu), "pe_fac_rvu": _text(national.pe_fac_rvu),
            "mp_rvu": _text(national.mp_rvu), "nonfac_na": national.nonfac_na, "fac_na": national.fac_na,
            "cf": _text(national.cf), "cf_label": national.cf_label, "national_nonfac": _text(national.payment_nonfac),
            "national_fac": _text(national.payment_fac), "rvu_file": national.source_file, "rvu_sha256": national.sha256}


def _place_part(place: Locality) -> dict:
    return {"mac": place.mac, "locality": place.locality, "locality_name": place.name, "state": place.state,
            "gpci_work": str(place.gpci_work), "gpci_pe": str(place.gpci_pe), "gpci_mp": str(place.gpci_mp),
            "gpci_file": place.source_file, "gpci_sha256": place.sha256}


def _amounts(row: LocalityRow, prefix: str) -> dict:
    """The row's own amounts as text; `prefix` is "[PFS CY2026 RVU26C · " (shared by a national row's places)."""
    nonfac, fac = row.payment_nonfac, row.payment_fac
    nonpar_nf, limit_nf = nonpar_and_limiting(nonfac)
    nonpar_f, limit_f = nonpar_and_limiting(fac)
    return {"label": f"{prefix}{row.place.tag}]", "payment_nonfac": _text(nonfac), "payment_fac": _text(fac),
            "nonpar_nonfac": _text(nonpar_nf), "nonpar_fac": _text(nonpar_f),
            "limiting_charge_nonfac": _text(limit_nf), "limiting_charge_fac": _text(limit_f),
            "uncapped_nonfac": _text(row.uncapped_nonfac), "uncapped_fac": _text(row.uncapped_fac),
            "opps_cap_nonfac": _text(row.opps_cap_nonfac), "opps_cap_fac": _text(row.opps_cap_fac),
            "other_cfs": "; ".join(f"{o.cf_label} {o.cf}: {o.payment_nonfac} / {o.payment_fac}"
                                   for o in row.other_cfs) if row.other_cfs else "",
            "anes_cf": _text(row.anes[0]) if row.anes else None, "anes_note": row.anes_note if row.anes else ""}


def locality_records(rows: list[LocalityRow]) -> list[dict]:
    """Flat, JSON/CSV-ready records of locality rows: amounts, GPCIs, CF and provenance (the national
    and locality parts are built once per national row and per locality)."""
    nationals: dict[int, tuple[dict, str]] = {}
    places: dict[tuple[int, str], dict] = {}
    out = []
    for row in rows:
        national = nationals.get(id(row.national))
        if national is None:
            prefix = f"[PFS CY{row.national.cy} {row.national.vintage.upper()} · "
            national = nationals[id(row.national)] = (_national_part(row.national), prefix)
        place = places.get((row.place.cy, row.place.key))
        if place is None:
            place = places[(row.place.cy, row.place.key)] = _place_part(row.place)
        record = _amounts(row, national[1])
        record.update(national[0])
        record.update(place)
        out.append(record)
    return out


def locality_record(row: LocalityRow) -> dict:
    """One row's record (see `locality_records`)."""
    return locality_records([row])[0]


_KEY = re.compile(r"^\s*(\d{4,5})\s*:\s*(\d{1,2})\s*$")


def resolve_places(con: duckdb.DuckDBPyConnection, text: str, cy: int) -> tuple[list[str] | None, list[str]]:
    """A --locality argument -> (MAC:LOC keys, or None for every locality; notes). "all", "02402:02",
    or a place name ("Seattle", "King County, WA"); LocalityError when a name matches nothing."""
    from carenav_core.pfs.places import find_places_in
    if text.strip().lower() == "all":
        return None, []
    if _KEY.match(text):
        mac, number = _KEY.match(text).groups()
        return [f"{mac.zfill(5)}:{number.zfill(2)}"], []
    match = find_places_in(con, text, cy)
    if not match.found:       # the argument is a place name: a misspelt one is read as the one name it is close to
        match = find_places_in(con, f"in {text}", cy)
    if not match.found:
        raise LocalityError(f"no Medicare locality matches {text!r} in CY{cy}; give MAC:LOC (e.g. 02402:02), "
                            "a locality, county, city or state name, or 'all'")
    notes = [f"{text!r} matches {len(match.localities)} localities: "
             + ", ".join(f"{p.key} {p.name}" for p in match.localities)] if match.ambiguous else []
    notes += [f"read {written.title()!r} as {name.title()!r}" for written, name in match.respelled]
    return [p.key for p in match.localities], notes


def locality_workbook(rows: list[LocalityRow], notes: list[str]) -> bytes:
    """Locality rows as .xlsx: a Localities sheet (every record field) and a Provenance sheet
    (RVU and GPCI files with sha256, CFs, notes such as the stand-in county file)."""
    import io

    import pandas as pd
    frame = pd.DataFrame(locality_records(rows))
    files = sorted({("PPRRVU", r.national.source_file, r.national.sha256) for r in rows}
                   | {("GPCI", r.place.source_file, r.place.sha256) for r in rows})
    cfs = sorted({(r.national.cf_label, str(r.national.cf)) for r in rows})
    provenance = pd.DataFrame([{"kind": k, "file": f, "sha256": s} for k, f, s in files]
                              + [{"kind": "CF", "file": label, "sha256": value_} for label, value_ in cfs]
                              + [{"kind": "note", "file": n, "sha256": ""} for n in notes])
    out = io.BytesIO()
    with pd.ExcelWriter(out, engine="openpyxl") as writer:
        frame.to_excel(writer, sheet_name="Localities", index=False)
        provenance.to_excel(writer, sheet_name="Provenance", index=False)
    return out.getvalue()
