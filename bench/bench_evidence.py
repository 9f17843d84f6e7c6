"""The evidence step of one question (detect -> value -> code-cited SQL) on the full data,
against a pandas baseline measured in the same run on the same CMS files.

Baseline: pandas reads the PPRRVU CSV of each CY's latest release once up front (load time reported
on its own), indexes the frame by HCPCS, then per question detects codes, takes the base rows of those
codes, keeps each code's last N calendar years and computes national payments (total RVUs x the CY's
conversion factor, rounded to cents) into records. Ours: `value(con, codes, years)` on the built
DuckDB (Decimal rows with labels, CF provenance, status meanings), plus `code_cited` in PostgreSQL
for the full evidence step as `chat.pipeline.prepare` runs it.

    CARENAV_MIRROR=../shared/data python bench/bench_evidence.py [--questions 1000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import cProfile
import csv
import io
import pstats
import random
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CPU, interleaved, load_note, percentiles, verdict  # noqa: E402

import pandas as pd  # noqa: E402

from carenav_core.chat.pipeline import CITED_PER_CODE  # noqa: E402
from carenav_core.codes import detect, load_families  # noqa: E402
from carenav_core.pfs.parse import REQUIRED_PPRRVU, _header, _map_columns  # noqa: E402
from carenav_core.pfs.rules import load_rules  # noqa: E402
from carenav_core.pfs.sources import fetch_release, load_catalog  # noqa: E402
from carenav_core.pfs.valuation import open_reader, value  # noqa: E402
from carenav_core.retrieval.search import code_cited  # noqa: E402
from carenav_core.retrieval.store import Store  # noqa: E402
from carenav_core.chat.figures import compute_figures  # noqa: E402
from carenav_core.chat.pipeline import mark_focus  # noqa: E402
from carenav_core.chat.plan import plan_question  # noqa: E402
from carenav_core.settings import Settings  # noqa: E402

TEMPLATES = ["How is {c} valued?", "What did CMS pay for {c} in 2025?", "{c} vs {d}", "code {c}?",
             "Tell me about {f}", "{f} and {c} payment", "What changed for {f} per 89 FR 97710?",
             "Is {c} billable with $45.00 copay?", "compare {c}/{d} across years", "telehealth in CY2025"]
NUMBERS = ("work_rvu", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu", "total_nonfac", "total_fac")


def questions(con, n: int, seed: int = 7) -> list[str]:
    """n varied questions naming codes of CY2026, families and neither (as bench_pfs.py)."""
    rng = random.Random(seed)
    codes = [r[0] for r in con.execute("SELECT DISTINCT hcpcs FROM current_rvu WHERE cy = 2026").fetchall()]
    names = [s for f in load_families() for s in f.synonyms]
    return [rng.choice(TEMPLATES).format(c=rng.choice(codes), d=rng.choice(codes), f=rng.choice(names))
            for _ in range(n)]


def _latest_per_cy(catalog) -> list:
    latest = {}
    for release in catalog.releases:
        if release.cy not in latest or release.effective > latest[release.cy].effective:
            latest[release.cy] = release
    return [latest[cy] for cy in sorted(latest)]


def _read_pprrvu(raw: bytes, origin: str, cy: int) -> pd.DataFrame:
    """pandas.read_csv of one PPRRVU file; the header row and columns located as the product does."""
    head = list(csv.reader(io.StringIO(raw[:20_000].decode("latin-1"), newline="")))
    index, names = _header(head, origin)
    columns = _map_columns(names, REQUIRED_PPRRVU, origin, index + 1)
    frame = pd.read_csv(io.BytesIO(raw), skiprows=index + 1, header=None, usecols=list(columns.values()),
                        dtype=str, keep_default_na=False, encoding="latin-1")
    frame.columns = [field for field, _ in sorted(columns.items(), key=lambda kv: kv[1])]
    frame = frame[frame.hcpcs.str.strip() != ""]
    for name in NUMBERS:
        frame[name] = pd.to_numeric(frame[name].str.replace(",", ""), errors="coerce")
    return frame.assign(cy=cy)


def load_baseline(settings: Settings) -> pd.DataFrame:
    """Every CY's latest PPRRVU file in one frame indexed (sorted) by HCPCS."""
    frames = []
    for release in _latest_per_cy(load_catalog()):
        fetched = fetch_release(release, settings)
        frames.append(_read_pprrvu(fetched.raw, fetched.origin, release.cy))
    return pd.concat(frames).set_index("hcpcs").sort_index()


def baseline_lookup(frame: pd.DataFrame, cfs: dict[int, float], question: str, years: int) -> list[dict]:
    """detect + pandas filter + last `years` CYs per code + payments, as records."""
    codes = detect(question).codes
    if not codes:
        return []
    rows = frame.loc[frame.index.intersection(list(codes))]
    rows = rows[rows["mod"] == ""]
    recent = rows.groupby(level=0)["cy"].rank(method="dense", ascending=False) <= years
    rows = rows[recent]
    cf = rows["cy"].map(cfs)
    rows = rows.assign(cf=cf, payment_nonfac=(rows.total_nonfac * cf).round(2),
                       payment_fac=(rows.total_fac * cf).round(2))
    return rows.reset_index().to_dict("records")


def ours_value(con, question: str, years: int):
    return value(con, detect(question).codes, years=years)


def ours_plan_figures(con, question: str, years: int):
    """What issue 10 adds to the evidence step, alone: the question plan, focus marks and computed figures
    (on the rows of the same lookup; the lookup itself is timed as "ours")."""
    detection = detect(question)
    plan = plan_question(question, detection, TODAY)
    rows = value(con, detection.codes, years=years)[0] if detection.codes else []
    started, cpu = time.perf_counter(), time.process_time()
    compute_figures(mark_focus(rows, plan_question(question, detection, TODAY)), plan)
    return (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000


def ours_evidence(con, store: Store, question: str, years: int):
    """The evidence step of chat.pipeline.prepare: detect, plan, value, focus, computed figures, code-cited
    paragraphs chosen for the question (locality pricing runs only for questions naming a place; none of these do)."""
    detection = detect(question)
    plan = plan_question(question, detection, TODAY)
    rows = value(con, detection.codes, years=years)[0] if detection.codes else []
    figures = compute_figures(mark_focus(rows, plan), plan)
    cited = code_cited(store, list(detection.codes), CITED_PER_CODE, question=question) if detection.codes else ()
    return rows, figures, cited




def small_row_groups(path: Path, folder: Path, rows_per_group: int):
    """What-if (not the product): the valuation tables copied into a database whose row groups hold
    `rows_per_group` rows (the product builds with 2,048; try other sizes with --row-group-size)."""
    import duckdb
    target = folder / "small_row_groups.duckdb"
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{path}' AS src (READ_ONLY)")
        con.execute(f"ATTACH '{target}' AS small (ROW_GROUP_SIZE {int(rows_per_group)})")
        for table in ("current_rvu", "proposed_rvu"):
            con.execute(f"CREATE TABLE small.{table} AS SELECT * FROM src.{table} ORDER BY hcpcs, mod, cy")
        con.execute("CREATE TABLE small.proposed_rules AS SELECT * FROM src.proposed_rules")
    return open_reader(target)


def profile_ours(con, asked: list[str], years: int) -> None:
    """Where our per-question time goes: the build check and code-index lookup vs the Python around it."""
    from carenav_core.pfs.valuation import _code_index
    query, whole = [], []
    for question in asked:
        codes = sorted({c.upper() for c in detect(question).codes})
        if not codes:
            continue
        started = time.perf_counter()
        _code_index(con).records(codes, False)
        query.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        value(con, codes, years=years)
        whole.append((time.perf_counter() - started) * 1000)
    q50, w50 = percentiles(query)[0], percentiles(whole)[0]
    print(f"profile (questions with codes): value() p50 {w50:.3f} ms, of which the build check + code-index "
          f"lookup p50 {q50:.3f} ms ({q50 / w50:.0%}); Python rows/CF/labels the rest")
    profiler = cProfile.Profile()
    profiler.enable()
    for question in asked[:300]:
        ours_value(con, question, years)
    profiler.disable()
    print("cProfile of detect+value over 300 questions:")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="passes over the questions (samples = q x repeat)")
    parser.add_argument("--row-group-size", type=int, default=0,
                        help="also time value() on a copy with row groups this small (0: skip)")
    parser.add_argument("--profile", action="store_true", help="always print the profile of our lookup")
    args = parser.parse_args()
    settings = Settings()
    if settings.mirror is None:
        sys.exit("set CARENAV_MIRROR (e.g. ../shared/data): the pandas baseline reads the CMS files from it")
    years = settings.years
    con = open_reader(settings.duckdb_file)
    store = Store(settings)
    asked = questions(con, args.questions)
    rules = load_rules()
    cfs = {r.cy: float(rules.final[r.cy].cf_for(r.effective)[0].value)      # CF in force on the release used
           for r in _latest_per_cy(load_catalog()) if r.cy in rules.final}
    print(f"evidence bench: {len(asked)} questions x {args.repeat}, years={years}; {load_note()}")

    started = time.perf_counter()
    frame = load_baseline(settings)
    print(f"pandas baseline load (read + parse {frame['cy'].nunique()} PPRRVU CSVs, index): "
          f"{time.perf_counter() - started:.2f} s, {len(frame):,} rows")

    contenders = {"pandas": lambda q: baseline_lookup(frame, cfs, q, years),
                  "ours": lambda q: ours_value(con, q, years),
                  "evidence": lambda q: ours_evidence(con, store, q, years)}
    folder = tempfile.TemporaryDirectory()
    if args.row_group_size:
        small = small_row_groups(settings.duckdb_file, Path(folder.name), args.row_group_size)
        contenders["what-if"] = lambda q: ours_value(small, q, years)
    interleaved(contenders, asked[:50], 1)                                   # warm every path
    samples = interleaved(contenders, asked, args.repeat)
    time_plan(con, asked, years, args.repeat)
    report(samples, args.row_group_size)
    b50, b95 = percentiles(samples["pandas"])
    m50, m95 = percentiles(samples["ours"])
    if args.profile or min(b50 / m50, b95 / m95) < 5:
        profile_ours(con, asked, years)
    if args.row_group_size:
        small.close()
    folder.cleanup()


def report(samples: dict[str, list[float]], row_group_size: int) -> None:
    b50, b95 = percentiles(samples["pandas"])
    m50, m95 = percentiles(samples["ours"])
    f50, f95 = percentiles(samples["evidence"])
    print(f"pandas baseline detect+filter+payments : p50 {b50:7.3f} ms  p95 {b95:7.3f} ms")
    print(f"ours detect+value (DuckDB)             : p50 {m50:7.3f} ms  p95 {m95:7.3f} ms  "
          f"speed-up vs pandas p50 {b50 / m50:.2f}x, p95 {b95 / m95:.2f}x "
          f"({verdict(min(b50 / m50, b95 / m95) >= 5)}: >= 5x)")
    print(f"ours evidence step (detect+value+code-cited SQL): p50 {f50:7.3f} ms  p95 {f95:7.3f} ms  "
          f"({verdict(f95 < 50)}: p95 < 50 ms; product budget 200 ms); "
          f"speed-up vs pandas valuation-only p50 {b50 / f50:.2f}x, p95 {b95 / f95:.2f}x")
    if "what-if" in samples:
        w50, w95 = percentiles(samples["what-if"])
        print(f"what-if, NOT the product: detect+value on a copy with {row_group_size}-row row groups: "
              f"p50 {w50:7.3f} ms  p95 {w95:7.3f} ms  speed-up vs pandas p50 {b50 / w50:.2f}x, p95 {b95 / w95:.2f}x")
    c_b, c_m = percentiles(CPU["pandas"]), percentiles(CPU["ours"])
    print(f"CPU time of this process (load-insensitive): pandas p50 {c_b[0]:.3f} ms p95 {c_b[1]:.3f} ms; ours "
          f"detect+value p50 {c_m[0]:.3f} ms p95 {c_m[1]:.3f} ms; speed-up p50 {c_b[0] / c_m[0]:.2f}x, "
          f"p95 {c_b[1] / c_m[1]:.2f}x")
    if "what-if" in CPU:
        c_w = percentiles(CPU["what-if"])
        print(f"  CPU what-if {row_group_size}-row row groups: p50 {c_w[0]:.3f} ms p95 {c_w[1]:.3f} ms; speed-up "
              f"p50 {c_b[0] / c_w[0]:.2f}x, p95 {c_b[1] / c_w[1]:.2f}x")
    if PLAN_MS:
        p50, p95 = percentiles(PLAN_MS)
        c50, c95 = percentiles(PLAN_CPU)
        print(f"plan + focus + computed figures (issue 10) alone: p50 {p50:.3f} ms p95 {p95:.3f} ms "
              f"(CPU p50 {c50:.3f} ms p95 {c95:.3f} ms) ({verdict(p95 < 1)}: adds < 1 ms p95)")
    print(f"{load_note()}")


PLAN_MS: list[float] = []
PLAN_CPU: list[float] = []
TODAY = date(2026, 12, 1)


def time_plan(con, asked: list[str], years: int, repeat: int) -> None:
    for _ in range(repeat):
        for question in asked:
            wall, cpu = ours_plan_figures(con, question, years)
            PLAN_MS.append(wall)
            PLAN_CPU.append(cpu)


if __name__ == "__main__":
    main()
