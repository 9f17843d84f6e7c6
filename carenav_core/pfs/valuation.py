"""Valuation evidence: for each code, the last N final CYs in which it exists plus the newest proposed
rule that prices it. CFs come from the rule metadata, never from the CMS file; payment = total x CF,
rounded half-up to cents (national, unadjusted by GPCIs)."""
from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa

from carenav_core.errors import NotBuiltError
from carenav_core.pfs.rows import STATUS_MEANINGS, ValuationRow, payment
from carenav_core.pfs.rules import Rule, RuleBook, load_rules

_COLUMNS = ("hcpcs, mod, description, status, work_rvu, pe_nonfac_rvu, pe_fac_rvu, mp_rvu, total_nonfac, "
            "total_fac, nonfac_na, fac_na, pctc, global_days, file_cf, source_file, sha256")
_ALL = f"""SELECT 'final' AS kind, release_id AS vintage, cy, effective, {_COLUMNS} FROM current_rvu
UNION ALL
SELECT 'proposed' AS kind, rule_id AS vintage, cy, NULL::DATE AS effective, {_COLUMNS} FROM proposed_rvu"""


@dataclass(frozen=True, kw_only=True)
class _CodeIndex:
    """The valuation records of one build (latest release per CY, proposed rules) in Arrow, with the
    row positions of each code: a lookup is a dictionary hit and a `take` of a few rows."""
    table: pa.Table
    positions: dict[str, list[int]]
    newest_final: int = 0          # the newest final CY of the build (a code missing from it was deleted or replaced)
    first_final: int = 0           # the first final CY loaded (a code first seen later was new in its first year)

    def records(self, codes: list[str], modifiers: bool) -> list[dict]:
        rows = [i for code in codes for i in self.positions.get(code, ())]
        found = self.table.take(pa.array(rows, type=pa.int64())).to_pylist() if rows else []
        return [r for r in found if modifiers or not r["mod"]]


_indexes: OrderedDict[str, _CodeIndex] = OrderedDict()
_indexes_lock = threading.Lock()


def _code_index(con: duckdb.DuckDBPyConnection) -> _CodeIndex:
    """The index of the build `con` reads, loaded once per process and build (a rebuild has a new
    build_id, so a reader of the new file never sees the old build's records)."""
    build_id = con.execute("SELECT value FROM build_info WHERE key = 'build_id'").fetchall()[0][0]
    with _indexes_lock:
        if build_id not in _indexes:
            table = con.sql(_ALL).to_arrow_table()
            positions: dict[str, list[int]] = defaultdict(list)
            for position, code in enumerate(table.column("hcpcs").to_pylist()):
                positions[code].append(position)
            finals = [cy for cy, kind in zip(table.column("cy").to_pylist(), table.column("kind").to_pylist())
                      if kind == "final"]
            _indexes[build_id] = _CodeIndex(table=table, positions=dict(positions), newest_final=max(finals, default=0),
                                           first_final=min(finals, default=0))
            while len(_indexes) > 2:
                _indexes.popitem(last=False)
        return _indexes[build_id]


def newest_final_cy(con: duckdb.DuckDBPyConnection) -> int:
    """The newest final CY whose RVUs the build holds (0 when none), read from the build's cached index."""
    return _code_index(con).newest_final


def open_reader(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the database file at `path` as it is now; NotBuiltError if none.

    The file is attached to a private in-memory database: `duckdb.connect(path)` would return the
    instance DuckDB caches per path in this process, i.e. the previous build after a rebuild renamed
    a new file into place. Use `reader_cursor` for a per-thread cursor.
    """
    if not path.exists():
        raise NotBuiltError(f"no fee-schedule database at {path}; run `carenav build` first")
    con = duckdb.connect(":memory:")
    con.execute("SET threads = 1")      # lookups touch a few row groups; one thread has the lowest latency
    try:
        con.execute("ATTACH ? AS fee (READ_ONLY)", [str(path)])
        con.execute("USE fee")
        con.execute("SELECT 1 FROM current_rvu LIMIT 0")
    except duckdb.Error as exc:
        con.close()
        raise NotBuiltError(f"the fee-schedule database {path} cannot be read ({str(exc).splitlines()[0]}); "
                            "rebuild it with `carenav build --force`") from exc
    return con


def reader_cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A cursor (one per thread) on a connection from `open_reader`; cursors do not inherit USE."""
    cursor = con.cursor()
    cursor.execute("USE fee")
    return cursor


def _row(record: dict, rule: Rule | None) -> ValuationRow:
    proposed = record["kind"] == "proposed"
    effective = record["effective"]
    cf, others = rule.cf_for(effective if effective else None) if rule else (None, ())
    cf_value = cf.value if cf else None
    totals = {k: _rvu(record[k]) for k in ("work_rvu", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu", "total_nonfac", "total_fac")}
    label = (f"[CY{record['cy']} NPRM Addendum B]" if proposed
             else f"[PFS CY{record['cy']} {record['vintage'].upper()}]")
    return ValuationRow(
        hcpcs=record["hcpcs"], mod=record["mod"] or "", description=record["description"] or "",
        cy=record["cy"], proposed=proposed, vintage=record["vintage"],
        effective_date=effective.isoformat() if isinstance(effective, date) else "",
        status=record["status"] or "", status_meaning=STATUS_MEANINGS.get(record["status"] or "", "Unknown status"),
        **totals, nonfac_na=record["nonfac_na"] or "", fac_na=record["fac_na"] or "",
        pctc=record["pctc"] or "", global_days=record["global_days"] or "",
        cf=cf_value, cf_label=cf.label if cf else "no conversion factor recorded for this rule",
        other_cfs=others,
        payment_nonfac=payment(totals["total_nonfac"], cf_value), payment_fac=payment(totals["total_fac"], cf_value),
        label=label, rule_id=rule.rule_id if rule else "", fr_citation=rule.fr_citation if rule else "",
        fr_url=rule.fr_url if rule else "", file_cf=_rvu(record["file_cf"]),
        source_file=record["source_file"] or "", sha256=record["sha256"] or "")


def _rvu(value) -> Decimal | None:
    """DuckDB DECIMAL(18,6) -> the value as CMS printed it (2 places for RVUs, 4 for CFs)."""
    if value is None:
        return None
    value = Decimal(value)
    places = max(2, -value.normalize().as_tuple().exponent)
    return value.quantize(Decimal(1).scaleb(-places))


def value(con: duckdb.DuckDBPyConnection, codes: list[str] | tuple[str, ...], years: int = 4,
          rules: RuleBook | None = None, modifiers: bool = False) -> tuple[list[ValuationRow], list[str]]:
    """Valuation rows for `codes` (sorted by code, base row first, vintages ascending) and the codes
    that no loaded release prices (`unpriced`)."""
    rules = rules or load_rules()
    wanted = sorted({c.upper() for c in codes})
    if not wanted:
        return [], []
    records = _code_index(con).records(wanted, modifiers)
    chosen = _select_vintages(records, years)
    rows = [_row(r, _rule_for(r, rules)) for r in chosen]
    priced = {r.hcpcs for r in rows}
    return rows, [c for c in wanted if c not in priced]


def first_final_years(con: duckdb.DuckDBPyConnection, codes: list[str] | tuple[str, ...]
                      ) -> tuple[dict[str, int], int]:
    """Each code's first final CY in the loaded releases (codes no final release holds left out), and the first
    final CY loaded: a code first seen after that year was new in its first year."""
    index = _code_index(con)
    firsts: dict[str, int] = {}
    for record in index.records(sorted({c.upper() for c in codes}), False):
        if record["kind"] == "final":
            firsts[record["hcpcs"]] = min(firsts.get(record["hcpcs"], record["cy"]), record["cy"])
    return firsts, index.first_final


def _rule_for(record: dict, rules: RuleBook) -> Rule | None:
    if record["kind"] == "proposed":
        return rules.proposed.get(record["vintage"])
    return rules.final.get(record["cy"])


def _select_vintages(records: list[dict], years: int) -> list[dict]:
    """Per code: the last `years` final CYs it exists in, plus its newest proposed rule."""
    by_code: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_code[record["hcpcs"]].append(record)
    chosen = []
    for code in sorted(by_code):
        finals = sorted({r["cy"] for r in by_code[code] if r["kind"] == "final"})[-years:]
        proposals = [r for r in by_code[code] if r["kind"] == "proposed"]
        newest = max((r["cy"], r["vintage"]) for r in proposals)[1] if proposals else None
        keep = [r for r in by_code[code] if (r["kind"] == "final" and r["cy"] in finals)
                or (r["kind"] == "proposed" and r["vintage"] == newest)]
        keep.sort(key=lambda r: (r["mod"] != "", r["mod"], r["kind"] == "proposed", r["cy"]))
        chosen.extend(keep)
    return chosen
