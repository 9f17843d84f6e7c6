"""Issue 13 figures, each next to a pandas baseline measured in the same run on the same CMS files:

1. one code x every locality x every loaded year (`locality_rows`, Decimal amounts with labels, CF and
   provenance) vs pandas: each CY's latest PPRRVU and GPCI file read once up front (load time printed on
   its own), per code a filter of the RVU frame, a cross join with that CY's GPCIs and float payments
   rounded to cents, as records. Target: p95 < 20 ms.
2. a 1,000-line claim file (`read_claim` + `price_claim`: every reduction, citations, per-line errors)
   vs pandas: the same lines merged with the RVU and GPCI frames, fees, and a groupby rank for 100/50%.
   Target: < 1 s.
3. the full build of every release in a temporary folder (target < 30 s), with the share of the
   locality tables and policy indicators timed on their own.

    CARENAV_MIRROR=../shared/data python bench/bench_locality.py [--codes 200] [--repeat 3] [--no-build]
"""
from __future__ import annotations

import argparse
import csv
import io
import random
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CPU, interleaved, load_note, percentiles, verdict  # noqa: E402

import duckdb  # noqa: E402
import pandas as pd  # noqa: E402

from carenav_core.pfs.build import build, shown_origin  # noqa: E402
from carenav_core.pfs.gpci import fetch_locality_file, load_locality_tables, locality_files  # noqa: E402
from carenav_core.pfs.indicators import load_indicator_table  # noqa: E402
from carenav_core.pfs.locality import directory, locality_records, locality_rows  # noqa: E402
from carenav_core.pfs.parse import REQUIRED_PPRRVU, _header, _map_columns  # noqa: E402
from carenav_core.pfs.pricer import price_claim, read_claim  # noqa: E402
from carenav_core.pfs.rules import load_rules  # noqa: E402
from carenav_core.pfs.sources import fetch_release, load_catalog  # noqa: E402
from carenav_core.pfs.valuation import open_reader  # noqa: E402
from carenav_core.settings import Settings  # noqa: E402

RVU_NUMBERS = ("work_rvu", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu")


def _latest_per_cy(catalog) -> dict[int, object]:
    latest = {}
    for release in catalog.releases:
        if release.cy not in latest or release.effective > latest[release.cy].effective:
            latest[release.cy] = release
    return latest


def _pprrvu_frame(raw: bytes, origin: str, cy: int) -> pd.DataFrame:
    head = list(csv.reader(io.StringIO(raw[:20_000].decode("latin-1"), newline="")))
    index, names = _header(head, origin)
    columns = _map_columns(names, REQUIRED_PPRRVU, origin, index + 1)
    frame = pd.read_csv(io.BytesIO(raw), skiprows=index + 1, header=None, usecols=list(columns.values()),
                        dtype=str, keep_default_na=False, encoding="latin-1")
    frame.columns = [f for f, _ in sorted(columns.items(), key=lambda kv: kv[1])]
    frame = frame[frame.hcpcs.str.strip() != ""]
    for name in RVU_NUMBERS:
        frame[name] = pd.to_numeric(frame[name], errors="coerce")
    return frame.assign(cy=cy)


def _gpci_frame(raw: bytes, cy: int) -> pd.DataFrame:
    """A GPCI file with pandas: the header is the first line with three GPCI columns."""
    lines = raw.decode("latin-1").splitlines()
    start = next(i for i, line in enumerate(lines) if line.lower().count("gpci") >= 3)
    frame = pd.read_csv(io.StringIO("\n".join(lines[start:])), dtype=str, keep_default_na=False)
    words = {c: set(re.split(r"[^a-z0-9]+", c.lower())) for c in frame.columns}

    def column(*wanted) -> str:
        return next(c for c, w in words.items() if all(any(x in w for x in alt.split("|")) for alt in wanted))
    pick = {"mac": column("mac|contractor"), "locality": column("locality", "number"), "gw": column("gpci", "pw|work"),
            "gpe": column("gpci", "pe"), "gmp": column("gpci", "mp")}
    frame = frame[list(pick.values())].set_axis(list(pick), axis=1)
    frame = frame[frame["mac"].str.strip().str.isdigit()]
    for name in ("gw", "gpe", "gmp"):
        frame[name] = pd.to_numeric(frame[name])
    return frame.assign(cy=cy, mac=frame["mac"].str.strip().str.zfill(5), locality=frame["locality"].str.zfill(2))


def load_baseline(settings: Settings) -> tuple[pd.DataFrame, pd.DataFrame, dict[int, float]]:
    catalog = load_catalog()
    latest = _latest_per_cy(catalog)
    rvus = pd.concat(_pprrvu_frame(f.raw, f.origin, cy) for cy, r in latest.items() for f in [fetch_release(r, settings)])
    gpci_entries = {}
    for entry in locality_files(catalog):
        cy = next(r.cy for r in catalog.releases if r.id == entry.release)
        if entry.kind == "gpci" and (cy not in gpci_entries or entry.release == latest[cy].id):
            gpci_entries[cy] = entry
    gpcis = pd.concat(_gpci_frame(fetch_locality_file(e, settings)[0], cy) for cy, e in gpci_entries.items())
    rules = load_rules()
    cfs = {cy: float(rules.final[cy].cf_for(r.effective)[0].value) for cy, r in latest.items()}
    return rvus.set_index("hcpcs").sort_index(), gpcis, cfs


def baseline_code(rvus: pd.DataFrame, gpcis: pd.DataFrame, cfs: dict[int, float], code: str) -> list[dict]:
    rows = rvus.loc[[code]] if code in rvus.index else rvus.iloc[0:0]
    rows = rows[rows["mod"] == ""].reset_index()
    joined = rows.merge(gpcis, on="cy")
    cf = joined["cy"].map(cfs)
    joined["payment_nonfac"] = ((joined.work_rvu * joined.gw + joined.pe_nonfac_rvu * joined.gpe
                                 + joined.mp_rvu * joined.gmp) * cf).round(2)
    joined["payment_fac"] = ((joined.work_rvu * joined.gw + joined.pe_fac_rvu * joined.gpe
                              + joined.mp_rvu * joined.gmp) * cf).round(2)
    return joined.to_dict("records")


def ours_code(con, code: str) -> list[dict]:
    return locality_records(locality_rows(con, [code]).rows)





def claim_text(con, lines: int, seed: int = 11, pool: int = 0) -> str:
    """A synthetic claim: active codes (all of them, or a pool of `pool` codes per year, as a practice's
    file repeats its codes), every year, random localities, modifiers and ~3% bad lines."""
    rng = random.Random(seed)
    book = directory(con)
    by_year = {cy: [c for (c,) in con.execute("SELECT DISTINCT hcpcs FROM current_rvu WHERE cy = ? AND mod = '' "
                                               "AND status = 'A' ORDER BY hcpcs", [cy]).fetchall()] for cy in book.gpci}
    if pool:
        by_year = {cy: random.Random(seed).sample(codes, pool) for cy, codes in by_year.items()}
    out = ["code,modifier,units,facility,locality,date_of_service"]
    for _ in range(lines):
        cy = rng.choice(sorted(book.gpci))
        place = rng.choice(book.localities(cy)).key
        code = rng.choice(by_year[cy]) if rng.random() > 0.03 else "XXXXX"
        modifier = rng.choice(["", "", "", "", "50", "80", "62", "51"])
        out.append(f"{code},{modifier},{rng.choice([1, 1, 1, 2])},{rng.choice('YN')},{place},"
                   f"{cy}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
    return "\n".join(out) + "\n"


def baseline_claim(text: str, rvus: pd.DataFrame, gpcis: pd.DataFrame, cfs: dict[int, float]) -> pd.DataFrame:
    claim = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    claim["cy"] = claim["date_of_service"].str[:4].astype(int)
    claim[["mac", "locality"]] = claim["locality"].str.split(":", expand=True)
    base = rvus[rvus["mod"] == ""].reset_index()[["hcpcs", "cy", *RVU_NUMBERS]]
    lines = claim.merge(base, left_on=["code", "cy"], right_on=["hcpcs", "cy"]).merge(gpcis, on=["cy", "mac", "locality"])
    pe = lines["pe_fac_rvu"].where(lines["facility"] == "Y", lines["pe_nonfac_rvu"])
    lines["fee"] = ((lines.work_rvu * lines.gw + pe * lines.gpe + lines.mp_rvu * lines.gmp) * lines["cy"].map(cfs)).round(2)
    rank = lines.groupby("date_of_service")["fee"].rank(method="first", ascending=False)
    lines["allowed"] = (lines["fee"] * rank.map(lambda r: 1.0 if r == 1 else 0.5)).round(2)
    return lines


def build_figures(settings: Settings) -> None:
    with tempfile.TemporaryDirectory() as folder:
        target = settings.model_copy(update={"data_dir": Path(folder)})
        started, cpu = time.perf_counter(), time.process_time()
        report = build(target, force=True)
        total, total_cpu = time.perf_counter() - started, time.process_time() - cpu
        catalog = load_catalog()
        with duckdb.connect() as con:
            started = time.perf_counter()
            load_locality_tables(con, catalog, target, lambda o: shown_origin(o, target))
            tables = time.perf_counter() - started
            started = time.perf_counter()
            load_indicator_table(con, catalog, target, lambda o: shown_origin(o, target))
            indicators = time.perf_counter() - started
    print(f"build: {len(report.releases)} releases + locality tables + indicators, full (forced) build "
          f"{total:.2f} s ({verdict(total < 30)}: < 30 s; CPU of all its threads {total_cpu:.2f} s); of which, timed alone: GPCI/LOCCO/ANES/OPPSCAP tables "
          f"{tables:.2f} s, policy indicators {indicators:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--claims", type=int, default=5, help="timed runs of the 1,000-line claim")
    parser.add_argument("--no-build", action="store_true", help="skip the full build timing")
    args = parser.parse_args()
    settings = Settings()
    if settings.mirror is None:
        sys.exit("set CARENAV_MIRROR (e.g. ../shared/data): the pandas baseline reads the CMS files from it")
    print(f"locality bench; {load_note()}")
    if not args.no_build:
        build_figures(settings)
    con = open_reader(settings.duckdb_file)
    started = time.perf_counter()
    rvus, gpcis, cfs = load_baseline(settings)
    print(f"pandas baseline load (7 PPRRVU + 7 GPCI files, index): {time.perf_counter() - started:.2f} s")
    codes = [c for (c,) in con.execute("SELECT DISTINCT hcpcs FROM current_rvu WHERE mod = '' ORDER BY hcpcs").fetchall()]
    sample = random.Random(5).sample(codes, args.codes)
    contenders = {"pandas": lambda c: baseline_code(rvus, gpcis, cfs, c), "ours": lambda c: ours_code(con, c),
                  "rows": lambda c: locality_rows(con, [c])}
    interleaved(contenders, sample[:20], 1)                                  # warm both paths
    samples = interleaved(contenders, sample, args.repeat)
    (b50, b95), (o50, o95) = percentiles(samples["pandas"]), percentiles(samples["ours"])
    r50, r95 = percentiles(samples["rows"])
    rows = sum(len(locality_rows(con, [c]).rows) for c in sample[:20]) / 20
    print(f"one code x all localities x all years ({rows:.0f} rows per code on average, {len(sample)} codes x "
          f"{args.repeat}): pandas p50 {b50:.2f} ms p95 {b95:.2f} ms; ours p50 {o50:.2f} ms p95 {o95:.2f} ms "
          f"({verdict(o95 < 20)}: p95 < 20 ms; speed-up vs pandas p50 {b50 / o50:.2f}x, p95 {b95 / o95:.2f}x); "
          f"typed rows alone (no JSON records) p50 {r50:.2f} ms p95 {r95:.2f} ms ({verdict(r95 < 20)})")
    (cb50, cb95), (co50, co95), (cr50, cr95) = (percentiles(CPU[n]) for n in ("pandas", "ours", "rows"))
    print(f"  CPU time of this process (load-insensitive): pandas p50 {cb50:.2f} p95 {cb95:.2f} ms; ours rows+records "
          f"p50 {co50:.2f} p95 {co95:.2f} ms ({verdict(co95 < 20)}); typed rows p50 {cr50:.2f} p95 {cr95:.2f} ms "
          f"({verdict(cr95 < 20)}); speed-up rows+records vs pandas p50 {cb50 / co50:.2f}x")
    for pool, what in ((100, "codes from a pool of 100 per year"), (0, "worst case: ~900 distinct codes")):
        text = claim_text(con, 1000, pool=pool)
        ours_times, pandas_times, cpu = [], [], []
        for _ in range(args.claims):
            started, cpu_started = time.perf_counter(), time.process_time()
            lines, errors = read_claim(text)
            claim = price_claim(con, lines, errors)
            ours_times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu_started)
            started = time.perf_counter()
            baseline_claim(text, rvus, gpcis, cfs)
            pandas_times.append(time.perf_counter() - started)
        print(f"1,000-line claim, {what} ({len({l.claim.code for l in claim.lines})} codes; {len(claim.lines)} "
              f"priced, {len(claim.errors)} reported): ours median {sorted(ours_times)[len(ours_times) // 2]:.3f} s, "
              f"max {max(ours_times):.3f} s ({verdict(max(ours_times) < 1)}: < 1 s), CPU median "
              f"{sorted(cpu)[len(cpu) // 2]:.3f} s; pandas fees + 100/50 rank only: median "
              f"{sorted(pandas_times)[len(pandas_times) // 2]:.3f} s")
    print(load_note())


if __name__ == "__main__":
    main()
