"""Locality files of each CMS RVU release: GPCIs (Addendum E), the county -> locality crosswalk (LOCCO),
anesthesia conversion factors by locality (ANES) and the OPPS payment caps (OPPSCAP).

Two layouts reach us (shared/data/cms/PROVENANCE.md "File formats"): CMS originals (title rows, a
header row, notes at the end; LOCCO leaves the state blank after its first row and drops leading zeros
of MAC and locality numbers) and the arkrvu conversions (one snake_case header; the CY2020 GPCI file has
no state column). Columns are found by header words, never by position; every kept row is validated
and errors name the file, line and column. The tables are loaded into the fee-schedule build by
`load_locality_tables` (same temporary DuckDB file, published atomically with everything else).
"""
from __future__ import annotations

import csv
import hashlib
import io
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from carenav_core.errors import ConfigError, DataError
from carenav_core.pfs.sources import SourceCatalog, _from_zip, download, locate
from carenav_core.settings import Settings

Kind = Literal["gpci", "locco", "anes", "oppscap"]
PREFIX = {"gpci": "GPCI", "locco": "LOCCO", "anes": "ANES", "oppscap": "OPPSCAP"}
# canonical field -> words a header cell must contain (upper case), per kind; first match wins.
HEADERS: dict[str, dict[str, tuple[tuple[str, ...], ...]]] = {
    "gpci": {"mac": (("MAC",), ("CONTRACTOR",)), "state": (("STATE",),),
             "locality": (("LOCALITY", "NUMBER"),), "locality_name": (("LOCALITY", "NAME"),),
             "gpci_work": (("GPCI", "WORK"), ("PW", "GPCI")), "gpci_pe": (("PE", "GPCI"), ("GPCI", "PE")),
             "gpci_mp": (("MP", "GPCI"), ("GPCI", "MP"))},
    "locco": {"mac": (("MAC",), ("CONTRACTOR",)), "locality": (("LOCALITY",),), "state": (("STATE",),),
              "fee_schedule_area": (("FEE", "SCHEDULE", "AREA"),), "counties": (("COUNTIES",),)},
    "anes": {"mac": (("CONTRACTOR",), ("MAC",)), "locality": (("LOCALITY",),),
             "locality_name": (("LOCALITY", "NAME"),), "anes_cf": (("ANES", "CONV"), ("ANES", "CF"))},
    "oppscap": {"hcpcs": (("HCPCS",),), "mod": (("MOD",),), "procstat": (("PROCSTAT",),),
                "mac": (("CARRIER",), ("MAC",)), "locality": (("LOCALITY",),),
                "cap_fac": (("FACILITY", "PRICE"),), "cap_nonfac": (("NON", "FACI", "PRICE"),)},
}
OPTIONAL = {"state", "locality_name", "procstat"}
NUMBERS = {"gpci_work", "gpci_pe", "gpci_mp", "anes_cf", "cap_fac", "cap_nonfac"}
_MAC = re.compile(r"^\d{4,5}$")
TABLES = """
CREATE TABLE locality_files (release_id VARCHAR, cy INTEGER, kind VARCHAR, url VARCHAR, source_file VARCHAR,
    sha256 VARCHAR, row_count INTEGER, note VARCHAR);
CREATE TABLE gpci (release_id VARCHAR, cy INTEGER, mac VARCHAR, locality VARCHAR, state VARCHAR,
    locality_name VARCHAR, gpci_work DECIMAL(18,6), gpci_pe DECIMAL(18,6), gpci_mp DECIMAL(18,6),
    source_file VARCHAR, sha256 VARCHAR);
CREATE TABLE locco (release_id VARCHAR, cy INTEGER, mac VARCHAR, locality VARCHAR, state VARCHAR,
    fee_schedule_area VARCHAR, counties VARCHAR, source_file VARCHAR, sha256 VARCHAR);
CREATE TABLE anes (release_id VARCHAR, cy INTEGER, mac VARCHAR, locality VARCHAR, locality_name VARCHAR,
    anes_cf DECIMAL(18,6), source_file VARCHAR, sha256 VARCHAR);
CREATE TABLE anes_national (release_id VARCHAR, cy INTEGER, anes_cf DECIMAL(18,6), source_file VARCHAR,
    sha256 VARCHAR);
CREATE TABLE oppscap (release_id VARCHAR, cy INTEGER, hcpcs VARCHAR, mod VARCHAR, procstat VARCHAR, mac VARCHAR,
    locality VARCHAR, cap_fac DECIMAL(18,6), cap_nonfac DECIMAL(18,6), source_file VARCHAR, sha256 VARCHAR);
"""


class LocalityFile(BaseModel):
    """One locality sub-file of a CMS RVU release (data/sources.toml `[[locality_file]]`)."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    release: str = Field(pattern=r"^rvu\d{2}[a-d]r?$", description="Release id the file belongs to.")
    kind: Kind = Field(description="gpci (Addendum E), locco (county crosswalk), anes (anesthesia CF), oppscap.")
    file: str = Field(description="File name inside the mirror folder cms/<release>/ or the release zip.")
    url: str = Field(pattern=r"^https://www\.cms\.gov/", description="Official CMS address of the release zip.")
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class LocalityTable:
    """Validated rows of one locality file (dicts over the kind's fields)."""
    kind: str
    path: str
    rows: tuple[dict, ...]
    national: Decimal | None = None     # ANES: the national anesthesia CF its header states ("National Anes CF of ...")


def locality_files(catalog: SourceCatalog) -> tuple[LocalityFile, ...]:
    """The `[[locality_file]]` entries of data/sources.toml; each must name a listed release."""
    try:
        entries = tuple(LocalityFile.model_validate(e) for e in catalog.extra.get("locality_file", []))
    except ValidationError as exc:
        raise ConfigError(f"data/sources.toml [[locality_file]]: {exc}") from exc
    known = {r.id for r in catalog.releases}
    for entry in entries:
        if entry.release not in known:
            raise ConfigError(f"data/sources.toml [[locality_file]] {entry.file}: release {entry.release!r} "
                              f"is not an [[rvu_release]] id (expected one of {sorted(known)})")
    return entries


def _words(text: str) -> str:
    return " ".join(re.sub(r"[^A-Z0-9]+", " ", text.upper()).split())


def _match(cell: str, wanted: tuple[tuple[str, ...], ...]) -> bool:
    words = _words(cell)
    return any(all(w in words.split() or (len(w) > 3 and w in words) for w in need) for need in wanted)


def _header(rows: list[list[str]], kind: str, path: str) -> tuple[int, dict[str, int]]:
    """The header row (the first row naming every required field) and field -> column."""
    fields = HEADERS[kind]
    for index, row in enumerate(rows[:40]):
        found: dict[str, int] = {}
        for field, wanted in fields.items():
            spots = [i for i, cell in enumerate(row) if i not in found.values() and _match(cell, wanted)]
            if spots:
                found[field] = spots[0]
        if all(f in found for f in fields if f not in OPTIONAL):
            return index, found
    need = ", ".join(f"{f} ({' / '.join(' '.join(w) for w in ws)})" for f, ws in fields.items() if f not in OPTIONAL)
    raise DataError(f"no {kind.upper()} header row naming {need} in the first 40 lines", path=path, line=1)


def _number(text: str, path: str, line: int, column: str) -> Decimal:
    try:
        value = Decimal(text.replace(",", "").replace("$", "").strip())
    except InvalidOperation:
        raise DataError(f"expected a number, found {text!r}", path=path, line=line, column=column) from None
    if not value.is_finite() or value < 0:
        raise DataError(f"expected a non-negative number, found {text!r}", path=path, line=line, column=column)
    return value


def _row(cells: list[str], columns: dict[str, int], path: str, line: int) -> dict:
    """One data row: MAC zero-padded to 5 digits and locality to 2 (CMS LOCCO drops leading zeros)."""
    record = {f: (cells[i].strip() if i < len(cells) else "") for f, i in columns.items()}
    record["mac"] = record["mac"].zfill(5)
    record["locality"] = record["locality"].zfill(2)
    if not record["locality"].isdigit():
        raise DataError(f"expected a locality number, found {record['locality']!r}", path=path, line=line,
                        column="locality")
    for field in NUMBERS & set(record):
        record[field] = _number(record[field], path, line, field)
    if "locality_name" in record:
        record["locality_name"] = record["locality_name"].rstrip("*").strip()
    return record


_NATIONAL_ANES = re.compile(r"National Anes(?:thesia)? CF of\s*\$?(\d+\.\d+)", re.IGNORECASE)


def parse_locality_file(raw: bytes, path: str, kind: str) -> LocalityTable:
    """Rows of a GPCI/LOCCO/ANES/OPPSCAP file. Rows whose MAC cell is not 4-5 digits (titles, notes,
    blank separator rows) are skipped; LOCCO's blank state cells carry the state of the row above."""
    text = raw.decode("latin-1")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    index, columns = _header(rows, kind, path)
    parsed, state = [], ""
    for number, cells in enumerate(rows[index + 1:], start=index + 2):
        mac = cells[columns["mac"]].strip() if columns["mac"] < len(cells) else ""
        if not _MAC.match(mac):
            continue
        record = _row(cells, columns, path, number)
        if kind == "locco":
            state = record["state"] = record["state"] or state
        parsed.append(record)
    if not parsed:
        raise DataError(f"{kind.upper()} header found but no rows with a MAC number", path=path, line=index + 1)
    # the CY2025 ANES file (CMS original) names the national anesthesia CF in a header cell
    stated = next((m for cell in rows[index] for m in [_NATIONAL_ANES.search(cell)] if m), None) \
        if kind == "anes" else None
    return LocalityTable(kind=kind, path=path, rows=tuple(parsed),
                         national=Decimal(stated.group(1)) if stated else None)


def fetch_locality_file(entry: LocalityFile, settings: Settings) -> tuple[bytes, str]:
    """Bytes and origin of one locality file: mirror folder cms/<release>/, else the downloaded zip."""
    if settings.mirror is not None:
        found = locate(Path(settings.mirror) / "cms", entry.release, entry.file, PREFIX[entry.kind])
        if found is None:
            raise DataError(f"{entry.kind.upper()} file of {entry.release} not in the mirror (expected "
                            f"{entry.release}/{entry.file})", path=str(Path(settings.mirror) / "cms"))
        return found
    return _from_zip(download(entry.url, settings.cache_folder), entry.file, PREFIX[entry.kind])


# USPS state abbreviations (USPS Publication 28, Appendix B) for the state names of LOCCO files;
# "HAWAII/GUAM" is the LOCCO name of the Hawaii locality (which includes Guam); filed under HI.
STATE_CODES = {
    "ALABAMA": "AL", "ALASKA": "AK", "ARIZONA": "AZ", "ARKANSAS": "AR", "CALIFORNIA": "CA", "COLORADO": "CO",
    "CONNECTICUT": "CT", "DELAWARE": "DE", "DISTRICT OF COLUMBIA": "DC", "FLORIDA": "FL", "GEORGIA": "GA",
    "HAWAII": "HI", "HAWAII/GUAM": "HI", "IDAHO": "ID", "ILLINOIS": "IL", "INDIANA": "IN", "IOWA": "IA",
    "KANSAS": "KS", "KENTUCKY": "KY", "LOUISIANA": "LA", "MAINE": "ME", "MARYLAND": "MD", "MASSACHUSETTS": "MA",
    "MICHIGAN": "MI", "MINNESOTA": "MN", "MISSISSIPPI": "MS", "MISSOURI": "MO", "MONTANA": "MT", "NEBRASKA": "NE",
    "NEVADA": "NV", "NEW HAMPSHIRE": "NH", "NEW JERSEY": "NJ", "NEW MEXICO": "NM", "NEW YORK": "NY",
    "NORTH CAROLINA": "NC", "NORTH DAKOTA": "ND", "OHIO": "OH", "OKLAHOMA": "OK", "OREGON": "OR",
    "PENNSYLVANIA": "PA", "PUERTO RICO": "PR", "RHODE ISLAND": "RI", "SOUTH CAROLINA": "SC", "SOUTH DAKOTA": "SD",
    "TENNESSEE": "TN", "TEXAS": "TX", "UTAH": "UT", "VERMONT": "VT", "VIRGIN ISLANDS": "VI", "VIRGINIA": "VA",
    "WASHINGTON": "WA", "WEST VIRGINIA": "WV", "WISCONSIN": "WI", "WYOMING": "WY",
}


def state_code(name: str) -> str:
    """Two-letter code of a LOCCO state name ("NEW YORK " -> "NY"); the text itself if unknown."""
    cleaned = " ".join(name.upper().replace("*", "").split())
    return STATE_CODES.get(cleaned, cleaned)


def _with_states(gpci: LocalityTable, locco: LocalityTable | None) -> list[dict]:
    """GPCI rows with a two-letter state; files without a state column (CY2020 arkrvu) take it from
    the same release's LOCCO file (by MAC + locality)."""
    states = {(r["mac"], r["locality"]): state_code(r["state"]) for r in (locco.rows if locco else ())}
    rows = []
    for row in gpci.rows:
        state = row.get("state") or states.get((row["mac"], row["locality"]), "")
        if not state:
            raise DataError(f"locality {row['mac']}:{row['locality']} has no state column and no LOCCO row "
                            "of the same release to take it from", path=gpci.path)
        rows.append(row | {"state": state_code(state)})
    return rows


@dataclass(frozen=True, kw_only=True)
class LoadedFile:
    entry: LocalityFile
    cy: int
    table: LocalityTable
    origin: str
    sha256: str


def _arrow(rows: list[dict], fixed: dict, fields: list[str]) -> pa.Table:
    columns = {name: [value] * len(rows) for name, value in fixed.items()}
    for field in fields:
        values = [row.get(field, "") for row in rows]
        columns[field] = pa.array(values, type=pa.decimal128(18, 6) if field in NUMBERS else pa.string())
    return pa.table(columns)


def load_locality_tables(con, catalog: SourceCatalog, settings: Settings, shown) -> list[str]:
    """Create and fill gpci / locco / anes / oppscap / locality_files in the build's database `con`;
    `shown(origin)` is how a file's origin is recorded. Returns one note per missing kind and CY."""
    con.execute(TABLES)
    cys = {r.id: r.cy for r in catalog.releases}
    loaded = []
    for entry in locality_files(catalog):
        raw, origin = fetch_locality_file(entry, settings)
        table = parse_locality_file(raw, origin, entry.kind)
        loaded.append(LoadedFile(entry=entry, cy=cys[entry.release], table=table, origin=shown(origin),
                                 sha256=hashlib.sha256(raw).hexdigest()))
    loccos = {f.entry.release: f.table for f in loaded if f.entry.kind == "locco"}
    for item in loaded:
        rows = (_with_states(item.table, loccos.get(item.entry.release)) if item.entry.kind == "gpci"
                else list(item.table.rows))
        fixed = {"release_id": item.entry.release, "cy": item.cy}
        arrow = _arrow(rows, fixed, list(HEADERS[item.entry.kind]))
        arrow = arrow.append_column("source_file", pa.array([item.origin] * len(rows), pa.string()))
        arrow = arrow.append_column("sha256", pa.array([item.sha256] * len(rows), pa.string()))
        con.register("incoming", arrow)
        try:
            con.execute(f"INSERT INTO {item.entry.kind} BY NAME SELECT * FROM incoming")
        finally:
            con.unregister("incoming")
        if item.table.national is not None:
            con.execute("INSERT INTO anes_national VALUES (?, ?, ?, ?, ?)",
                        [item.entry.release, item.cy, item.table.national, item.origin, item.sha256])
        con.execute("INSERT INTO locality_files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [item.entry.release, item.cy, item.entry.kind, item.entry.url,
                     item.origin, item.sha256, len(rows), item.entry.note])
    return _missing(loaded, sorted(set(cys.values())))


def _missing(loaded: list[LoadedFile], cys: list[int]) -> list[str]:
    have = {(f.entry.kind, f.cy) for f in loaded}
    if not have:
        return []
    return [f"CY{cy}: no {kind.upper()} file in the sources; the latest earlier CY's file is used and labelled"
            for cy in cys for kind in ("gpci", "locco", "anes") if (kind, cy) not in have]
