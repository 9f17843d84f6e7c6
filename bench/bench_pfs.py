"""Issue 2 figures: full build time for all releases, and detect+value latency over 1,000 varied
questions on the full database, with peak memory. Baseline measured in the same run: the same
lookup done by re-reading nothing but a pandas filter over the already-loaded current_rvu table.

Run: CARENAV_MIRROR=../shared/data python bench/bench_pfs.py
"""
from __future__ import annotations

import random
import resource
import statistics
import tempfile
import time
from pathlib import Path

from carenav_core.codes import detect, load_families
from carenav_core.pfs import build as pfs_build
from carenav_core.pfs.build import build
from carenav_core.pfs.valuation import open_reader, value
from carenav_core.settings import Settings

TEMPLATES = ["How is {c} valued?", "What did CMS pay for {c} in 2025?", "{c} vs {d}", "code {c}?",
             "Tell me about {f}", "{f} and {c} payment", "What changed for {f} per 89 FR 97710?",
             "Is {c} billable with $45.00 copay?", "compare {c}/{d} across years", "telehealth in CY2025"]


def questions(con, n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    codes = [r[0] for r in con.execute("SELECT DISTINCT hcpcs FROM current_rvu WHERE cy = 2026").fetchall()]
    names = [s for f in load_families() for s in f.synonyms]
    return [rng.choice(TEMPLATES).format(c=rng.choice(codes), d=rng.choice(codes), f=rng.choice(names))
            for _ in range(n)]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.95) - 1]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp))
        workers = pfs_build.PARSE_WORKERS
        pfs_build.PARSE_WORKERS = 1                               # baseline: every file parsed in this process
        started = time.perf_counter()
        build(settings, force=True)
        alone = time.perf_counter() - started
        pfs_build.PARSE_WORKERS = workers
        started = time.perf_counter()
        report = build(settings, force=True)
        took = time.perf_counter() - started
        print(f"full build: {len(report.releases)} releases, {report.rows} rows in {took:.2f} s with {workers} "
              f"parsing workers (target < 30 s); in one process {alone:.2f} s (x{alone / took:.2f})")
        started = time.perf_counter()
        again = build(settings)
        print(f"rebuild with nothing changed: {len(again.reused)} releases reused in {time.perf_counter() - started:.2f} s")
        con = open_reader(settings.duckdb_file)
        asked = questions(con, 1000)
        value(con, ["G0556"])                                     # warm
        samples = []
        for question in asked:
            t0 = time.perf_counter()
            value(con, detect(question).codes)
            samples.append((time.perf_counter() - t0) * 1000)
        p50, p95 = percentiles(samples)
        base = con.execute("SELECT * FROM current_rvu").df()
        baseline = []
        for question in asked:
            t0 = time.perf_counter()
            codes = detect(question).codes
            base[base.hcpcs.isin(codes) & (base["mod"] == "")].to_dict("records")
            baseline.append((time.perf_counter() - t0) * 1000)
        b50, b95 = percentiles(baseline)
        print(f"detect+value over {len(asked)} questions: p50 {p50:.2f} ms, p95 {p95:.2f} ms (target p95 < 5 ms)")
        print(f"baseline (detect + pandas filter of an in-memory frame, no CF/payment): p50 {b50:.2f} ms, p95 {b95:.2f} ms;"
              f" ratio p95 ours/baseline {p95 / b95:.2f}")
        print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
