"""Parse CMS PPRRVU files and proposed-rule Addendum B files into validated rows.

Columns are located by header text, never by position: CY2026 adds `PRIC IND` and moves
`CONV FACTOR`. The PPRRVU header is spread over up to five caption rows ending with the row whose
first cell is `HCPCS` (CMS RVU file layout); Addendum B has title rows then one header row.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from carenav_core.errors import DataError

# canonical field -> header texts seen in CMS files (normalised: upper case, single spaces)
ALIASES: dict[str, tuple[str, ...]] = {
    "hcpcs": ("HCPCS", "HCPCS CODE", "CPT/HCPCS"),
    "mod": ("MOD", "MODIFIER"),
    "description": ("DESCRIPTION", "SHORT DESCRIPTION", "DESCRIPTOR"),
    "status": ("STATUS CODE", "STATUS", "STAT"),
    "work_rvu": ("WORK RVU", "WORK RVUS", "PHYSICIAN WORK RVUS", "WORK"),
    "pe_nonfac_rvu": ("NON-FAC PE RVU", "NON-FACILITY PE RVUS", "NON-FACILITY PE RVU",
                      "FULLY IMPLEMENTED NON-FACILITY PE RVUS", "NON-FAC PE RVUS"),
    "nonfac_na": ("NON-FAC NA INDICATOR", "NON-FACILITY NA INDICATOR"),
    "pe_fac_rvu": ("FACILITY PE RVU", "FACILITY PE RVUS", "FULLY IMPLEMENTED FACILITY PE RVUS"),
    "fac_na": ("FACILITY NA INDICATOR",),
    "mp_rvu": ("MP RVU", "MP RVUS", "MALPRACTICE RVUS", "MALPRACTICE RVU"),
    "total_nonfac": ("NON-FACILITY TOTAL", "NON-FAC TOTAL", "FULLY IMPLEMENTED NON-FACILITY TOTAL",
                     "NON-FACILITY TOTAL RVUS"),
    "total_fac": ("FACILITY TOTAL", "FULLY IMPLEMENTED FACILITY TOTAL", "FACILITY TOTAL RVUS"),
    "pctc": ("PCTC IND", "PC/TC IND", "PCTC INDICATOR"),
    "global_days": ("GLOB DAYS", "GLOBAL", "GLOBAL DAYS", "GLOBAL PERIOD"),
    "file_cf": ("CONV FACTOR", "CONVERSION FACTOR"),
}
NUMERIC = ("work_rvu", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu", "total_nonfac", "total_fac", "file_cf")
REQUIRED_PPRRVU = ("hcpcs", "mod", "description", "status", "work_rvu", "pe_nonfac_rvu", "pe_fac_rvu",
                   "mp_rvu", "total_nonfac", "total_fac")
REQUIRED_ADDENDUM_B = ("hcpcs", "status", "work_rvu", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu")
FIELDS = tuple(ALIASES)
_CODE = re.compile(r"^[A-Z0-9]{5}$")


@dataclass(frozen=True, kw_only=True)
class ParsedFile:
    """Validated rows of one file: `rows` are dicts over FIELDS (numbers as Decimal or None)."""
    path: str
    rows: tuple[dict, ...]
    columns: dict[str, str]      # canonical field -> header text found


def _normal(text: str) -> str:
    return " ".join(text.replace("\x1a", "").upper().split())


def decode(raw: bytes, path: str) -> list[list[str]]:
    """CMS files are latin-1/cp1252 safe; returns CSV rows."""
    if not raw.strip(b" \r\n\t\x1a,"):
        raise DataError("file is empty; expected a CMS CSV with a header row starting with HCPCS", path=path)
    return list(csv.reader(io.StringIO(raw.decode("latin-1"), newline="")))


def _header(rows: list[list[str]], path: str) -> tuple[int, list[str]]:
    """Index of the row whose first cell is HCPCS, and the composed header text of each column."""
    for index, row in enumerate(rows):
        if row and _normal(row[0]) in ALIASES["hcpcs"]:
            break
    else:
        raise DataError("no header row whose first cell is 'HCPCS'", path=path, line=1)
    names = [[cell] for cell in rows[index]]
    for above in range(index - 1, max(index - 5, -1), -1):
        cells = rows[above]
        filled = [i for i, c in enumerate(cells) if c.strip()]
        if not filled or min(filled) < 3:   # a blank row or a title caption ends the header
            break
        for i in filled:
            if i < len(names):
                names[i].insert(0, cells[i])
    return index, [_normal(" ".join(parts)) for parts in names]


def _map_columns(header: list[str], required: tuple[str, ...], path: str, line: int) -> dict[str, int]:
    found: dict[str, int] = {}
    for field, aliases in ALIASES.items():
        for position, name in enumerate(header):
            if name in aliases and field not in found:
                found[field] = position
    missing = [f for f in required if f not in found]
    if missing:
        wanted = "; ".join(f"{f} (one of {', '.join(ALIASES[f])})" for f in missing)
        raise DataError(f"missing required column(s): {wanted}", path=path, line=line, column=missing[0])
    return found


def _number(text: str, path: str, line: int, column: str) -> Decimal | None:
    text = text.strip()
    if not text:
        return None
    try:
        value = Decimal(text.replace(",", ""))
    except InvalidOperation:
        raise DataError(f"expected a number, found {text!r}", path=path, line=line, column=column) from None
    if not value.is_finite():
        raise DataError(f"expected a finite number, found {text!r}", path=path, line=line, column=column)
    return value


def _is_junk(row: list[str]) -> bool:
    return not any(cell.strip(" \x1a\t") for cell in row)


def parse_table(raw: bytes, path: str, required: tuple[str, ...]) -> ParsedFile:
    """Parse a CMS RVU-layout table; errors name the file, line and column."""
    rows = decode(raw, path)
    index, header = _header(rows, path)
    columns = _map_columns(header, required, path, index + 1)
    record_of = _RecordReader(columns, path)
    parsed, seen = [], {}
    for number, row in enumerate(rows[index + 1:], start=index + 2):
        if _is_junk(row):
            continue
        record = record_of(row, number)
        key = (record["hcpcs"], record["mod"])
        if key in seen:
            raise DataError(f"duplicate HCPCS+MOD {key[0]}{'-' + key[1] if key[1] else ''} "
                            f"(first on line {seen[key]})", path=path, line=number, column=header[columns["hcpcs"]])
        seen[key] = number
        parsed.append(record)
    if not parsed:
        raise DataError("header found but no data rows", path=path, line=index + 1)
    return ParsedFile(path=path, rows=tuple(parsed), columns={f: header[i] for f, i in columns.items()})


class _RecordReader:
    """Reads one data row into a record. Built once per file: the column positions are looked up once, and
    each distinct number text is converted to Decimal once (a PPRRVU file repeats "0.00" and "0.25" thousands
    of times), so the per-cell work is a strip and a dictionary lookup."""

    def __init__(self, columns: dict[str, int], path: str) -> None:
        self.path, self.width = path, max(columns.values()) + 1
        self.text = [(f, columns.get(f)) for f in FIELDS if f not in NUMERIC and f not in ("hcpcs", "mod")]
        self.numbers = [(f, columns.get(f)) for f in NUMERIC]
        self.hcpcs, self.mod = columns["hcpcs"], columns.get("mod")
        self.decimals: dict[str, Decimal | None] = {"": None}

    def __call__(self, row: list[str], line: int) -> dict:
        size = len(row)
        if size < self.width:
            raise DataError(f"row {(row or [''])[0]!r} has {size} cells; the header maps {self.width} columns "
                            "(a truncated or shifted row)", path=self.path, line=line)
        hcpcs = row[self.hcpcs].strip().upper()
        if hcpcs.isdigit() and len(hcpcs) < 5:
            hcpcs = hcpcs.zfill(5)   # spreadsheet copies drop leading zeros (rvu20d has 100 for 00100)
        if not _CODE.match(hcpcs):
            raise DataError(f"expected a 5-character HCPCS code, found {hcpcs!r}", path=self.path, line=line,
                            column="HCPCS")
        record = {f: (row[i].strip() if i is not None and i < size else "") for f, i in self.text}
        record["hcpcs"] = hcpcs
        record["mod"] = row[self.mod].strip().upper() if self.mod is not None and self.mod < size else ""
        decimals = self.decimals
        for field, i in self.numbers:
            if i is None:
                record[field] = None
                continue
            text = row[i].strip() if i < size else ""
            value = decimals.get(text, _MISSING)
            if value is _MISSING:
                value = decimals[text] = _number(text, self.path, line, field)
            record[field] = value
        return record


_MISSING = object()


def parse_pprrvu(raw: bytes, path: str) -> ParsedFile:
    """A national PPRRVU file (any CY2020-2026 layout)."""
    return parse_table(raw, path, REQUIRED_PPRRVU)


def parse_addendum_b(raw: bytes, path: str) -> ParsedFile:
    """A proposed-rule Addendum B file (title rows, then one header row starting with HCPCS)."""
    return parse_table(raw, path, REQUIRED_ADDENDUM_B)
