"""Build data/carenav.duckdb from the CMS releases, atomically.

The database is written to a temporary file and renamed into place only when every release parsed,
so readers never see a half-built file and a failed build leaves the previous database serving.
Releases whose PPRRVU sha256 is unchanged are copied from the previous database instead of re-parsed.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import time
import uuid
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pyarrow as pa

from carenav_core.errors import NotBuiltError
from carenav_core.pfs.gpci import load_locality_tables
from carenav_core.pfs.indicators import load_indicator_table
from carenav_core.pfs.parse import FIELDS, NUMERIC, ParsedFile, parse_addendum_b, parse_pprrvu
from carenav_core.pfs.rules import load_rules
from carenav_core.pfs.valuation import open_reader
from carenav_core.pfs.sources import FetchedFile, SourceCatalog, fetch_addendum, fetch_release, load_catalog
from carenav_core.progress import Progress, silent
from carenav_core.settings import Settings

SCHEMA_VERSION = "4"
ROW_GROUP_SIZE = 2048
# PPRRVU files are parsed in worker processes (parsing is pure Python, ~0.5 s a file): the whole build took
# 15-17 s in one process, 10.6-12 s with two workers (bench/bench_pfs.py). Two: our machines have two cores.
PARSE_WORKERS = min(2, os.cpu_count() or 1)
log = logging.getLogger(__name__)
_RVU_COLUMNS = ", ".join(f"{f} DECIMAL(18,6)" if f in NUMERIC else f"{f} VARCHAR" for f in FIELDS)
SCHEMA = f"""
CREATE TABLE releases (release_id VARCHAR PRIMARY KEY, cy INTEGER, quarter VARCHAR, effective DATE,
    url VARCHAR, source_file VARCHAR, sha256 VARCHAR, row_count INTEGER, reused BOOLEAN);
CREATE TABLE rvu (release_id VARCHAR, cy INTEGER, effective DATE, {_RVU_COLUMNS},
    source_file VARCHAR, sha256 VARCHAR);
CREATE TABLE proposed_rules (rule_id VARCHAR PRIMARY KEY, cy INTEGER, source_file VARCHAR, sha256 VARCHAR,
    row_count INTEGER);
CREATE TABLE proposed_rvu (rule_id VARCHAR, cy INTEGER, {_RVU_COLUMNS}, source_file VARCHAR, sha256 VARCHAR);
CREATE TABLE build_info (key VARCHAR PRIMARY KEY, value VARCHAR);
"""
# For each CY, valuation uses that year's latest release (by effective date).
CURRENT = """
CREATE TABLE current_rvu AS
SELECT r.* FROM rvu r JOIN (SELECT cy, arg_max(release_id, effective) AS release_id FROM releases GROUP BY cy) l
  USING (cy, release_id) ORDER BY hcpcs, mod, cy;
CREATE TABLE proposed_sorted AS SELECT * FROM proposed_rvu ORDER BY hcpcs, mod;
DROP TABLE proposed_rvu;
ALTER TABLE proposed_sorted RENAME TO proposed_rvu;
"""
# Sorted by code so DuckDB's zone maps skip all but one row group per looked-up code.


@dataclass(kw_only=True)
class BuildReport:
    path: Path
    releases: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    proposed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    rows: int = 0
    seconds: float = 0.0


def _arrow(parsed: ParsedFile, fixed: dict) -> pa.Table:
    columns = {name: [value] * len(parsed.rows) for name, value in fixed.items() if name not in ("source_file", "sha256")}
    for f in FIELDS:
        values = [row[f] for row in parsed.rows]
        columns[f] = _decimals(values) if f in NUMERIC else pa.array(values, type=pa.string())
    columns["source_file"] = [fixed["source_file"]] * len(parsed.rows)
    columns["sha256"] = [fixed["sha256"]] * len(parsed.rows)
    return pa.table(columns)


def _decimals(values: list) -> pa.Array:
    """A decimal column built from its distinct values: a PPRRVU column holds a few hundred distinct numbers
    in ~19,000 rows, and converting each Decimal object is what costs (measured 0.62 s -> 0.11 s a file)."""
    distinct: dict = {}
    positions = [distinct.setdefault(value, len(distinct)) for value in values]
    return pa.array(list(distinct), type=pa.decimal128(18, 6)).take(pa.array(positions, type=pa.int32()))


def _insert(con: duckdb.DuckDBPyConnection, target: str, table: pa.Table) -> None:
    con.register("incoming", table)
    try:
        con.execute(f"INSERT INTO {target} BY NAME SELECT * FROM incoming")
    finally:
        con.unregister("incoming")


def _previous(path: Path) -> dict[str, str]:
    """release_id -> sha256 in the database currently serving (empty if none or unreadable)."""
    if not path.exists():
        return {}
    try:
        with open_reader(path) as con:
            version = con.execute("SELECT value FROM build_info WHERE key = 'schema_version'").fetchone()
            if not version or version[0] != SCHEMA_VERSION:
                return {}
            return dict(con.execute("SELECT release_id, sha256 FROM releases").fetchall())
    except (duckdb.Error, NotBuiltError) as exc:
        log.warning("previous database %s unreadable (%s); rebuilding everything", path, exc)
        return {}


def _copy_release(con: duckdb.DuckDBPyConnection, old: Path, release_id: str) -> int:
    with open_reader(old) as source:
        table = source.sql("SELECT * FROM rvu WHERE release_id = $1", params=[release_id]).to_arrow_table()
    _insert(con, "rvu", table)
    return table.num_rows


def shown_origin(origin: str, settings: Settings) -> str:
    """Where a file came from, without this machine's folders: mirror-relative, or the cache file name."""
    for root in (settings.mirror, settings.cache_folder):
        if root is not None and origin.startswith(str(root)):
            return "mirror:" * (root == settings.mirror) + origin[len(str(root)):].lstrip("/")
    return origin


def _release_table(raw: bytes, origin: str, fixed: dict) -> pa.Table:
    """One PPRRVU file as the rows of table `rvu` (runs in a parsing worker)."""
    return _arrow(parse_pprrvu(raw, origin), fixed)


class _Later:
    """A parse done in a worker, or in this process when asked for (one core, one file, or the workers died:
    a worker that cannot start must not fail the build)."""

    def __init__(self, future: Future | None, raw: bytes, origin: str, fixed: dict) -> None:
        self.future, self.raw, self.origin, self.fixed = future, raw, origin, fixed

    def result(self) -> pa.Table:
        if self.future is not None:
            try:
                return self.future.result()
            except BrokenProcessPool as exc:
                log.warning("parsing worker failed (%s); parsing %s in this process", exc, self.origin)
        return _release_table(self.raw, self.origin, self.fixed)


class _Parsers:
    """Parses files in PARSE_WORKERS processes (spawned: the app may call build from a thread), in order of
    submission; with one core or one file, in this process."""

    def __init__(self, files: int) -> None:
        self.pool = None
        if PARSE_WORKERS > 1 and files > 1:
            self.pool = ProcessPoolExecutor(PARSE_WORKERS, mp_context=multiprocessing.get_context("spawn"))

    def submit(self, raw: bytes, origin: str, fixed: dict) -> _Later:
        return _Later(self.pool.submit(_release_table, raw, origin, fixed) if self.pool else None, raw, origin, fixed)

    def __enter__(self) -> _Parsers:
        return self

    def __exit__(self, *exc) -> None:
        if self.pool:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _load_proposed(con, catalog, settings: Settings, report: BuildReport) -> None:
    for addendum in catalog.proposed:
        fetched = fetch_addendum(addendum, settings)
        if fetched is None:
            report.skipped.append(f"{addendum.rule_id} Addendum B (not available; optional)")
            continue
        parsed = parse_addendum_b(fetched.raw, fetched.origin)
        origin = shown_origin(fetched.origin, settings)
        table = _arrow(parsed, {"rule_id": addendum.rule_id, "cy": addendum.cy, "source_file": origin,
                                "sha256": fetched.sha256})
        _insert(con, "proposed_rvu", table)
        con.execute("INSERT INTO proposed_rules VALUES (?, ?, ?, ?, ?)",
                    [addendum.rule_id, addendum.cy, origin, fetched.sha256, table.num_rows])
        report.proposed.append(addendum.rule_id)


def build(settings: Settings, progress: Progress = silent, force: bool = False,
          catalog: SourceCatalog | None = None) -> BuildReport:
    """Build the fee-schedule database; publish it only if everything loaded."""
    started = time.perf_counter()
    catalog = catalog or load_catalog()
    load_rules()                                       # validate rule metadata before any work
    final = settings.duckdb_file
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = final.with_name(final.name + f".{os.getpid()}.tmp")
    temporary.unlink(missing_ok=True)
    previous = {} if force else _previous(final)
    report = BuildReport(path=final)
    try:
        with duckdb.connect(":memory:") as con:
            # Small row groups: a lookup of a few codes then reads a few zone-mapped groups, not all.
            con.execute(f"ATTACH ? AS built (ROW_GROUP_SIZE {ROW_GROUP_SIZE})", [str(temporary)])
            con.execute("USE built")
            con.execute(SCHEMA)
            _load_all(con, catalog, settings, previous, final, report, progress)
            con.execute("USE memory")
            con.execute("DETACH built")
        os.replace(temporary, final)
    finally:
        temporary.unlink(missing_ok=True)
    report.seconds = time.perf_counter() - started
    return report


def _load_releases(con, catalog, fixed: dict[str, dict], tables: dict, final: Path, report: BuildReport,
                   progress: Progress) -> None:
    """Insert each release in catalog order: parsed (waiting for its worker) or copied when unchanged."""
    total = len(catalog.releases) + 1
    for step, release in enumerate(catalog.releases, start=1):
        progress(step - 1, total, f"{release.id}: reading")
        if release.id in tables:
            table = tables.pop(release.id).result()     # dropped once inserted: one parsed file held at a time
            _insert(con, "rvu", table)
            rows, reused = table.num_rows, False
        else:
            rows, reused = _copy_release(con, final, release.id), True
        con.execute("INSERT INTO releases VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [release.id, release.cy, release.quarter, release.effective, release.url,
                     fixed[release.id]["source_file"], fixed[release.id]["sha256"], rows, reused])
        (report.reused if reused else report.releases).append(release.id)
        report.rows += rows


def _load_all(con, catalog, settings, previous, final, report: BuildReport, progress: Progress) -> None:
    total = len(catalog.releases) + 1
    files = {release.id: fetch_release(release, settings) for release in catalog.releases}
    fixed = {r.id: {"release_id": r.id, "cy": r.cy, "effective": r.effective, "sha256": files[r.id].sha256,
                    "source_file": shown_origin(files[r.id].origin, settings)} for r in catalog.releases}
    changed = [r.id for r in catalog.releases if previous.get(r.id) != files[r.id].sha256]
    with _Parsers(len(changed)) as parsers:
        tables = {rid: parsers.submit(files[rid].raw, files[rid].origin, fixed[rid]) for rid in changed}
        del files
        _load_releases(con, catalog, fixed, tables, final, report, progress)
    progress(total - 1, total, "proposed rules")
    _load_proposed(con, catalog, settings, report)
    report.skipped += load_locality_tables(con, catalog, settings, lambda origin: shown_origin(origin, settings))
    load_indicator_table(con, catalog, settings, lambda origin: shown_origin(origin, settings))
    con.execute(CURRENT)
    info = {"schema_version": SCHEMA_VERSION, "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "build_id": uuid.uuid4().hex, "rows": str(report.rows)}
    con.executemany("INSERT INTO build_info VALUES (?, ?)", list(info.items()))
    progress(total, total, f"done: {report.rows} rows")
