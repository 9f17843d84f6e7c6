"""The evaluation oracle: expected valuation rows read straight from the CMS PPRRVU files.

Deliberately independent of the product: it imports nothing from carenav_core (a test checks this
with `ast`), has its own minimal CSV reader and reads data/sources.toml, data/pfs_rules.toml and
data/families.toml with tomllib itself. What it expects, per code:
  * the last `years` final calendar years in which the code has a base row (no modifier), each
    from the latest release of that CY by effective date (data/sources.toml `[[rvu_release]]`);
  * every RVU and both totals as the file prints them;
  * the CF of pfs_rules.toml `[final.<cy>]` in force on the release's effective date (first listed
    variant when several are, e.g. CY2026 non-QP), never the file's CONV FACTOR column;
  * payment = total RVUs x CF, rounded half-up to cents (national, no GPCI);
  * the label "[PFS CY<cy> <RELEASE ID>]".
"""
from __future__ import annotations

import csv
import io
import tomllib
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
CENT = Decimal("0.01")
# Column captions (caption row + header row, joined) of the CMS PPRRVU CSV layout
# (shared/data/cms/PROVENANCE.md "File formats"); CY2026 adds PRIC IND, so columns are found by name.
COLUMNS = {"status": "STATUS CODE", "work_rvu": "WORK RVU", "pe_nonfac_rvu": "NON-FAC PE RVU",
           "pe_fac_rvu": "FACILITY PE RVU", "mp_rvu": "MP RVU", "total_nonfac": "NON-FACILITY TOTAL",
           "total_fac": "FACILITY TOTAL"}
RVU_FIELDS = ("work_rvu", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu", "total_nonfac", "total_fac")


class OracleError(Exception):
    """The oracle cannot read its sources; the message names the file and what was expected."""


@dataclass(frozen=True, kw_only=True)
class Release:
    """One CMS RVU release as data/sources.toml lists it."""
    id: str
    cy: int
    effective: date
    pprrvu: str


@dataclass(frozen=True, kw_only=True)
class ExpectedRow:
    """One code in one final CY, as the oracle computes it from the CMS file."""
    hcpcs: str
    cy: int
    release: str
    status: str
    work_rvu: Decimal | None
    pe_nonfac_rvu: Decimal | None
    pe_fac_rvu: Decimal | None
    mp_rvu: Decimal | None
    total_nonfac: Decimal | None
    total_fac: Decimal | None
    cf: Decimal | None
    payment_nonfac: Decimal | None
    payment_fac: Decimal | None
    label: str


@dataclass(frozen=True, kw_only=True)
class CodeFamily:
    """One family of data/families.toml: the words that name it and its member codes."""
    key: str
    name: str
    synonyms: tuple[str, ...]
    codes: tuple[str, ...]
    shared_names: tuple[str, ...] = ()      # names several families answer to together ("care management")


def payment(total: Decimal | None, cf: Decimal | None) -> Decimal | None:
    """Total RVUs x CF, half-up to cents.

    >>> payment(Decimal("0.47"), Decimal("32.3465"))
    Decimal('15.20')
    """
    if total is None or cf is None:
        return None
    return (total * cf).quantize(CENT, rounding=ROUND_HALF_UP)


def _toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise OracleError(f"file {path}: {exc}") from exc


def latest_releases(sources_toml: Path) -> dict[int, Release]:
    """Per CY, the release with the latest effective date."""
    chosen: dict[int, Release] = {}
    for entry in _toml(sources_toml)["rvu_release"]:
        release = Release(id=entry["id"], cy=int(entry["cy"]), effective=_date(entry["effective"]),
                          pprrvu=entry["pprrvu"])
        if release.cy not in chosen or release.effective > chosen[release.cy].effective:
            chosen[release.cy] = release
    return dict(sorted(chosen.items()))


def _date(value: str | date) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


def conversion_factor(pfs_rules_toml: Path, cy: int, on: date) -> Decimal | None:
    """The final rule's CF in force on `on`: the first listed entry whose period holds `on`."""
    entries = _toml(pfs_rules_toml).get("final", {}).get(str(cy), {}).get("cf", [])
    in_force = [e for e in entries if _date(e["effective"]) <= on <= _date(e["until"])]
    chosen = (in_force or entries)[:1]
    return Decimal(str(chosen[0]["amount"])) if chosen else None


def load_families(families_toml: Path) -> tuple[CodeFamily, ...]:
    """Every family of data/families.toml."""
    return tuple(CodeFamily(key=key, name=f["name"], synonyms=tuple(f["synonyms"]), codes=tuple(f["codes"]),
                            shared_names=tuple(f.get("shared_names", ())))
                 for key, f in _toml(families_toml)["family"].items())


def _pprrvu_file(cms_dir: Path, release: Release) -> Path:
    folder = cms_dir / release.id
    exact = folder / release.pprrvu
    if exact.is_file():
        return exact
    found = sorted(p for p in folder.glob("*") if p.name.upper().startswith("PPRRVU") and p.suffix.lower() == ".csv")
    if not found:
        raise OracleError(f"folder {folder}: no PPRRVU CSV for release {release.id} (expected {release.pprrvu})")
    return found[0]


def _column_index(caption: list[str], header: list[str], path: Path) -> dict[str, int]:
    names = [f"{c.strip()} {h.strip()}".strip().upper() for c, h in zip(caption + [""] * len(header), header)]
    index = {}
    for field, wanted in COLUMNS.items():
        if wanted not in names:
            raise OracleError(f"file {path}: no column {wanted!r} in the header rows (found {names[:16]})")
        index[field] = names.index(wanted)
    return index


def read_base_rows(path: Path) -> dict[str, dict[str, str]]:
    """HCPCS -> the raw cells (by field name) of its base row (MOD empty) in one PPRRVU CSV."""
    rows = list(csv.reader(io.StringIO(path.read_bytes().decode("cp1252", errors="replace"))))
    at = next((i for i, r in enumerate(rows) if r and r[0].strip().upper() == "HCPCS"), None)
    if at is None or at == 0:
        raise OracleError(f"file {path}: no header row starting with HCPCS after a caption row")
    index = _column_index(rows[at - 1], rows[at], path)
    base: dict[str, dict[str, str]] = {}
    for row in rows[at + 1:]:
        if len(row) <= max(index.values()) or not row[0].strip() or row[1].strip():
            continue                    # blank/Ctrl-Z trailer lines, modifier rows
        base.setdefault(_hcpcs(row[0]), {f: row[i].strip() for f, i in index.items()})
    return base


def _hcpcs(cell: str) -> str:
    """The 5-character code. The rvu20d CSV was saved through a spreadsheet that dropped leading
    zeros ("1160" for 01160, shared/data/cms/PROVENANCE.md); CMS codes are always 5 characters.

    >>> _hcpcs("1160"), _hcpcs(" g0556 ")
    ('01160', 'G0556')
    """
    code = cell.strip().upper()
    return code.zfill(5) if code.isdigit() else code


def _number(cell: str) -> Decimal | None:
    return Decimal(cell) if cell else None


class Oracle:
    """Expected rows for any code, from the latest release of each final CY."""

    def __init__(self, cms_dir: Path, data_dir: Path = DATA_DIR) -> None:
        self.releases = latest_releases(data_dir / "sources.toml")
        self.families = load_families(data_dir / "families.toml")
        self._cf = {cy: conversion_factor(data_dir / "pfs_rules.toml", cy, r.effective)
                    for cy, r in self.releases.items()}
        self._base = {cy: read_base_rows(_pprrvu_file(cms_dir, r)) for cy, r in self.releases.items()}

    def years_of(self, code: str) -> tuple[int, ...]:
        """Every final CY whose latest release has a base row for `code`, ascending."""
        return tuple(cy for cy, rows in self._base.items() if code.upper() in rows)

    def codes_in(self, cy: int) -> tuple[str, ...]:
        """Every code with a base row in the latest release of `cy`, sorted."""
        return tuple(sorted(self._base.get(cy, {})))

    def rows(self, codes: tuple[str, ...] | list[str] | set[str], years: int = 4) -> list[ExpectedRow]:
        """Expected rows of `codes`: sorted by code, then CY; the last `years` CYs of each code."""
        return [self._row(code, cy) for code in sorted({c.upper() for c in codes})
                for cy in self.years_of(code)[-years:]]

    def unpriced(self, codes: tuple[str, ...] | list[str] | set[str]) -> list[str]:
        """The codes no final CY prices, sorted."""
        return sorted(c for c in {c.upper() for c in codes} if not self.years_of(c))

    def _row(self, code: str, cy: int) -> ExpectedRow:
        cells, release, cf = self._base[cy][code], self.releases[cy], self._cf[cy]
        rvus = {f: _number(cells[f]) for f in RVU_FIELDS}
        return ExpectedRow(hcpcs=code, cy=cy, release=release.id, status=cells["status"], **rvus, cf=cf,
                           payment_nonfac=payment(rvus["total_nonfac"], cf),
                           payment_fac=payment(rvus["total_fac"], cf),
                           label=f"[PFS CY{cy} {release.id.upper()}]")
