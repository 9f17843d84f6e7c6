"""The locality oracle: expected GPCI-adjusted payments read straight from the CMS files.

Deliberately independent of the product: it imports nothing from carenav_core (a test checks this
with `ast`), reads the PPRRVU, GPCI and PFREV files with its own minimal CSV code, and data/sources.toml
and data/pfs_rules.toml with tomllib. What it expects, per code, CY and locality:
  * RVUs from the latest release of the CY (by effective date), base row or the modifier's own row;
  * GPCIs from that CY's latest release that has a GPCI file (`[[locality_file]] kind = "gpci"`);
  * the CF of pfs_rules.toml `[final.<cy>]` in force on the release's effective date (first listed);
  * fee = (work x work GPCI + PE x PE GPCI + MP x MP GPCI) x CF, half-up to cents (42 CFR 414.22/414.26).
`pfrev_check()` compares that formula, on the CY2025 files, with CMS's own payment file PFREV25C.
"""
from __future__ import annotations

import csv
import re
import tomllib
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
CENT = Decimal("0.01")


class LocalityOracleError(Exception):
    """The oracle cannot read its sources; the message names the file and what was expected."""


def _rows(path: Path) -> list[list[str]]:
    try:
        with path.open(encoding="latin-1", newline="") as handle:
            return list(csv.reader(handle))
    except OSError as exc:
        raise LocalityOracleError(f"{path}: {exc}") from exc


def fee(rvus: tuple[Decimal, Decimal, Decimal], gpcis: tuple[Decimal, Decimal, Decimal], cf: Decimal) -> Decimal:
    """(work x GPCI + PE x GPCI + MP x GPCI) x CF, half-up to cents."""
    return (sum(r * g for r, g in zip(rvus, gpcis)) * cf).quantize(CENT, rounding=ROUND_HALF_UP)


def _tokens(cell: str) -> set[str]:
    return set(re.split(r"[^a-z0-9]+", cell.lower()))


def read_gpci(path: Path) -> dict[tuple[str, str], tuple[Decimal, Decimal, Decimal]]:
    """(MAC, locality) -> (work, PE, MP) GPCI of a CMS Addendum E or arkrvu GPCI file (header: the first
    row with three GPCI columns)."""
    rows = _rows(path)
    for index, row in enumerate(rows):
        tokens = [_tokens(c) for c in row]
        if sum("gpci" in t for t in tokens) >= 3:
            break
    else:
        raise LocalityOracleError(f"{path}: no header row with three GPCI columns")

    def column(*words: str) -> int:
        found = [i for i, t in enumerate(tokens) if all(w in t for w in words)]
        if not found:
            raise LocalityOracleError(f"{path}: no column naming {' '.join(words)} in the header (line {index + 1})")
        return found[0]
    mac = next((i for i, t in enumerate(tokens) if "mac" in t or "contractor" in t), 0)
    loc, pe, mp = column("locality", "number"), column("gpci", "pe"), column("gpci", "mp")
    work = next(i for i, t in enumerate(tokens) if "gpci" in t and ("pw" in t or "work" in t))
    out = {}
    for row in rows[index + 1:]:
        if len(row) > max(mac, loc, work, pe, mp) and row[mac].strip().isdigit():
            out[(row[mac].strip().zfill(5), row[loc].strip().zfill(2))] = (
                Decimal(row[work]), Decimal(row[pe]), Decimal(row[mp]))
    return out


def read_rvu_table(path: Path) -> dict[tuple[str, str], tuple[Decimal, Decimal, Decimal, Decimal]]:
    """(code, modifier) -> (work, non-facility PE, facility PE, MP) of every row of a PPRRVU CSV."""
    rows = _rows(path)
    start = next((i for i, r in enumerate(rows) if r and r[0].strip().upper() == "HCPCS"), None)
    if start is None:
        raise LocalityOracleError(f"{path}: no header row starting with HCPCS")
    caption = [" ".join(r[i].strip() for r in rows[max(0, start - 2):start + 1] if i < len(r)).upper().split()
               for i in range(len(rows[start]))]
    names = [" ".join(words) for words in caption]

    def column(text: str) -> int:
        return next(i for i, n in enumerate(names) if n.endswith(text))
    spots = (column("WORK RVU"), column("NON-FAC PE RVU"), column("FACILITY PE RVU"), column("MP RVU"))
    table: dict[tuple[str, str], tuple[Decimal, Decimal, Decimal, Decimal]] = {}
    for row in rows[start + 1:]:
        if row and row[0].strip():
            key = (row[0].strip().upper().zfill(5), row[1].strip().upper())
            table.setdefault(key, tuple(Decimal(row[i]) if row[i].strip() else Decimal(0) for i in spots))
    return table


def read_pfrev(path: Path) -> dict[tuple[str, str], tuple[str, str, Decimal, Decimal]]:
    """(MAC, locality) -> (code, modifier, non-facility fee, facility fee) of a CMS PFREV/PFALL file
    (fields: year, carrier, locality, HCPCS, modifier, non-facility amount, facility amount, ...)."""
    return {(r[1], r[2]): (r[3], r[4].strip(), Decimal(r[5]), Decimal(r[6]))
            for r in _rows(path) if r and r[0].strip().isdigit()}


def _toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LocalityOracleError(f"{path}: {exc}") from exc


def _when(value) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


class LocalityOracle:
    """Expected locality fees from the CMS files of the mirror folder `cms_dir`."""

    def __init__(self, cms_dir: Path, data_dir: Path = DATA_DIR) -> None:
        sources = _toml(data_dir / "sources.toml")
        self.cms_dir, self.rules = cms_dir, _toml(data_dir / "pfs_rules.toml").get("final", {})
        self.latest: dict[int, dict] = {}
        for release in sources["rvu_release"]:
            known = self.latest.get(release["cy"])
            if known is None or _when(release["effective"]) > _when(known["effective"]):
                self.latest[release["cy"]] = release
        effective = {r["id"]: _when(r["effective"]) for r in sources["rvu_release"]}
        cy_of = {r["id"]: r["cy"] for r in sources["rvu_release"]}
        self.gpci_files: dict[int, Path] = {}
        for entry in sorted((e for e in sources.get("locality_file", []) if e["kind"] == "gpci"),
                            key=lambda e: effective[e["release"]]):
            self.gpci_files[cy_of[entry["release"]]] = cms_dir / entry["release"] / entry["file"]
        self._gpcis: dict[int, dict] = {}
        self._rvus: dict[int, dict] = {}

    def cf(self, cy: int) -> Decimal:
        on = _when(self.latest[cy]["effective"])
        entries = self.rules[str(cy)]["cf"]
        chosen = [e for e in entries if _when(e["effective"]) <= on <= _when(e["until"])] or entries
        return Decimal(str(chosen[0]["amount"]))

    def gpcis(self, cy: int) -> dict[tuple[str, str], tuple[Decimal, Decimal, Decimal]]:
        if cy not in self._gpcis:
            self._gpcis[cy] = read_gpci(self.gpci_files[cy])
        return self._gpcis[cy]

    def expected(self, code: str, cy: int, modifier: str = "") -> dict[tuple[str, str], tuple[Decimal, Decimal]]:
        """(MAC, locality) -> (non-facility fee, facility fee); empty when the code has no such row."""
        if cy not in self._rvus:
            release = self.latest[cy]
            self._rvus[cy] = read_rvu_table(self.cms_dir / release["id"] / release["pprrvu"])
        rvus = self._rvus[cy].get((code, modifier))
        if rvus is None:
            return {}
        work, pe_nonfac, pe_fac, mp = rvus
        cf = self.cf(cy)
        return {key: (fee((work, pe_nonfac, mp), g, cf), fee((work, pe_fac, mp), g, cf))
                for key, g in self.gpcis(cy).items()}

    def pfrev_check(self, pfrev: Path) -> tuple[int, int, dict]:
        """(matched, records, mismatches) of the formula on the CY2025 files against PFREV25C."""
        records = read_pfrev(pfrev)
        codes = {(code, mod) for code, mod, _, _ in records.values()}
        ours = {code_mod: self.expected(code_mod[0], 2025, code_mod[1]) for code_mod in codes}
        mismatches = {key: (ours[(c, m)].get(key), (nf, f)) for key, (c, m, nf, f) in records.items()
                      if ours[(c, m)].get(key) != (nf, f)}
        return len(records) - len(mismatches), len(records), mismatches
