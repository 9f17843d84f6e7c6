"""App: cold start of `streamlit run app.py` to the first page rendered in headless Chromium,
submit-to-valuation-table latency with the deterministic writer, and peak RSS of the Streamlit server
process (psutil on its pid) after answering 100 questions.

The app runs on a private snapshot so the embedded PostgreSQL really starts cold and nothing else
writes to it: the product index is copied with pg_dump/pg_restore (pgserver's own binaries) into a
scratch cluster, and the DuckDB file is copied; the app reads them through CARENAV_PG_DIR and
CARENAV_DUCKDB_PATH. Baselines measured in the same run: a one-line Streamlit page's cold start, the
in-process time to the valuation event (`chat.pipeline.answer`, same questions), and the server's RSS
right after its first page.

    python bench/bench_app.py [--questions 100] [--latency 10] [--cold 3]
Loopback only (127.0.0.1); Chromium is /usr/bin/chromium.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, load_note, percentiles, verdict  # noqa: E402

import psutil  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--no-first-run"]
CHAT_BOX = "Ask about Medicare PFS valuation…"
TABLE = '[data-testid="stDataFrame"]'
LATENCY_QUESTIONS = ["How is G0556 valued?", "What is APCM and how is it valued?", "99490 payment in 2025",
                     "chronic care management 99487", "G0557 vs G0558", "What did CMS pay for 99214?",
                     "Tell me about principal care management", "How is 99453 valued?",
                     "compare 99213/99215 across years", "transitional care management 99495"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin(name: str) -> str:
    import pgserver
    return str(Path(pgserver.__file__).parent / "pginstall" / "bin" / name)


def snapshot(folder: Path) -> dict[str, str]:
    """Copy the product index (pg_dump -> scratch cluster) and DuckDB file; env for the app."""
    import pgserver
    from carenav_core.retrieval.store import embedded_url
    from carenav_core.settings import Settings
    settings = Settings()
    source = embedded_url(settings.pg_folder).replace("postgresql+psycopg://", "postgresql://")
    dump = folder / "index.dump"
    subprocess.run([pg_bin("pg_dump"), "-Fc", "-f", str(dump), "--dbname", source], check=True)
    server = pgserver.get_server(folder / "pg", cleanup_mode=None)
    subprocess.run([pg_bin("pg_restore"), "--no-owner", "-d", server.get_uri(), str(dump)], check=True)
    chunks = server.psql("SELECT collection, count(*) FROM chunks GROUP BY 1 ORDER BY 1;")
    stop_cluster(folder / "pg")
    shutil.copy2(settings.duckdb_file, folder / "carenav.duckdb")
    print(f"snapshot: index restored into {folder / 'pg'}: {' '.join(chunks.split())}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARENAV_")}
    return {**env, "CARENAV_PG_DIR": str(folder / "pg"), "CARENAV_DUCKDB_PATH": str(folder / "carenav.duckdb")}


def stop_cluster(pg: Path) -> None:
    """Stop the scratch cluster (only ours: its own data folder) so the next start is cold."""
    if (pg / "postmaster.pid").exists():
        subprocess.run([pg_bin("pg_ctl"), "-D", str(pg), "-m", "fast", "-w", "stop"],
                       check=False, capture_output=True)


@contextmanager
def served(script: Path, env: dict[str, str]):
    """`streamlit run script` on 127.0.0.1; yields (process, url, started) once healthy."""
    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
                                "--server.port", str(port), "--server.address", "127.0.0.1",
                                "--browser.gatherUsageStats", "false"], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"streamlit run {script.name} did not become healthy in 90 s")
        yield process, url, started
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


class PeakRss:
    """Samples the RSS of one pid every 50 ms in a thread; `peak` and `latest` in MiB."""

    def __init__(self, pid: int) -> None:
        self.process, self.peak, self.latest, self._stop = psutil.Process(pid), 0.0, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.latest = self.process.memory_info().rss / 2**20
            except psutil.Error:
                return
            self.peak = max(self.peak, self.latest)
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def first_page(chromium, url: str, started: float, ready: str | None) -> float:
    """Seconds from process start until the page shows `ready` text (placeholder of the chat box)."""
    page = chromium.new_page()
    page.goto(url)
    if ready:
        page.get_by_placeholder(ready).wait_for(timeout=90_000)
    else:
        page.get_by_text("hello").first.wait_for(timeout=90_000)
    elapsed = time.perf_counter() - started
    page.close()
    return elapsed


def cold_starts(chromium, env: dict[str, str], pg: Path, runs: int, folder: Path) -> None:
    hello = folder / "hello.py"
    hello.write_text("import streamlit as st\nst.write('hello')\n", encoding="utf-8")
    ours, bare, health = [], [], []
    for _ in range(runs):
        stop_cluster(pg)
        with served(hello, env) as (_, url, started):
            bare.append(first_page(chromium, url, started, None))
        with served(ROOT / "app.py", env) as (_, url, started):
            health.append(time.perf_counter() - started)
            ours.append(first_page(chromium, url, started, CHAT_BOX))
    o50, b50 = sorted(ours)[len(ours) // 2], sorted(bare)[len(bare) // 2]
    print(f"cold start to first page in Chromium ({runs} runs, embedded PostgreSQL stopped before each): "
          f"median {o50:.2f} s, max {max(ours):.2f} s (all {', '.join(f'{s:.2f}' for s in ours)}); "
          f"server healthy after median {sorted(health)[len(health) // 2]:.2f} s ({verdict(max(ours) < 5)}: < 5 s)")
    print(f"  baseline one-line Streamlit page cold start: median {b50:.2f} s; ratio ours/baseline {o50 / b50:.2f}")


def ask(page, question: str) -> float:
    """Submit one question; seconds until its answer is complete (its Sources expander is shown)."""
    done = page.get_by_text("Sources", exact=True).count()
    box = page.get_by_placeholder(CHAT_BOX)
    box.fill(question)
    started = time.perf_counter()
    box.press("Enter")
    page.get_by_text("Sources", exact=True).nth(done).wait_for(timeout=60_000)
    return time.perf_counter() - started


def table_latency(page, question: str) -> float:
    """Seconds from Enter until the new valuation table is visible (polled every 10 ms)."""
    tables = page.locator(TABLE).count()
    done = page.get_by_text("Sources", exact=True).count()
    box = page.get_by_placeholder(CHAT_BOX)
    box.fill(question)
    started = time.perf_counter()
    box.press("Enter")
    page.locator(TABLE).nth(tables).wait_for(state="visible", timeout=60_000)
    elapsed = time.perf_counter() - started
    page.get_by_text("Sources", exact=True).nth(done).wait_for(timeout=60_000)
    return elapsed


def in_process_baseline(env: dict[str, str], questions: list[str]) -> list[float]:
    """Seconds to the valuation event of `answer()` in a fresh Python with the same snapshot."""
    code = ("import sys,time,json; from carenav_core.settings import Settings; "
            "from carenav_core.backends import open_backends; from carenav_core.chat.pipeline import answer; "
            "b=open_backends(Settings()); list(answer('G0556', b)); out=[]\n"
            "for q in json.loads(sys.argv[1]):\n"
            " t=time.perf_counter(); next(answer(q, b)); out.append(time.perf_counter()-t)\n"
            "print(json.dumps(out))")
    import json
    result = subprocess.run([sys.executable, "-c", code, json.dumps(questions)], cwd=ROOT, env=env,
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def many_questions(n: int) -> list[str]:
    from bench_evidence import questions
    from carenav_core.pfs.valuation import open_reader
    from carenav_core.settings import Settings
    con = open_reader(Settings().duckdb_file)
    try:
        return questions(con, n, seed=11)
    finally:
        con.close()


def run_session(chromium, env: dict[str, str], args) -> None:
    with served(ROOT / "app.py", env) as (process, url, started):
        rss = PeakRss(process.pid)
        page = chromium.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        page.get_by_placeholder(CHAT_BOX).wait_for(timeout=90_000)
        after_first_page = rss.latest
        first_answer = table_latency(page, "How is G0556 valued?")
        print(f"first answer after a cold start (embedded PostgreSQL + ONNX model load): table in {first_answer:.2f} s")
        samples = []
        for _ in range(args.rounds):
            for question in LATENCY_QUESTIONS[:args.latency]:
                samples.append(table_latency(page, question))
            page.close()
            page = chromium.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            page.get_by_placeholder(CHAT_BOX).wait_for(timeout=90_000)
        baseline = in_process_baseline(env, LATENCY_QUESTIONS[:args.latency] * args.rounds)
        p50, p95 = percentiles(samples)
        b50, b95 = percentiles(baseline)
        print(f"submit -> valuation table visible in Chromium ({len(samples)} asks of {args.latency} questions): "
              f"median {p50:.2f} s, p95 {p95:.2f} s ({verdict(p50 < 1.5)}: median < 1.5 s); {load_note()}")
        print(f"  baseline in-process answer() to the valuation event: median {b50 * 1000:.0f} ms, p95 {b95 * 1000:.0f} ms;"
              f" browser/in-process ratio {p50 / b50:.1f}")
        answered = drive(chromium, url, many_questions(args.questions), page)
        rss.stop()
        print(f"server RSS: after first page {after_first_page:.0f} MiB; peak {rss.peak:.0f} MiB and now "
              f"{rss.latest:.0f} MiB after {answered} more questions (+{len(samples) + 1} above); "
              f"peak/first-page ratio {rss.peak / after_first_page:.2f}; {load_note()}")
        postgres = [p for p in psutil.process_iter(["cmdline"]) if env["CARENAV_PG_DIR"] in " ".join(p.info["cmdline"] or [])]
        total = sum(p.memory_info().rss for p in postgres) / 2**20
        print(f"  scratch PostgreSQL processes ({len(postgres)}): {total:.0f} MiB RSS summed (shared pages counted each time)")


def drive(chromium, url: str, questions: list[str], page) -> int:
    """Answer every question (a fresh session every 10, like separate users); returns how many."""
    finished = []
    for index, question in enumerate(questions):
        if index % 10 == 0:
            page.close()
            page = chromium.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            page.get_by_placeholder(CHAT_BOX).wait_for(timeout=90_000)
        finished.append(ask(page, question))
    page.close()
    p50, p95 = percentiles(finished)
    print(f"{len(questions)} varied questions answered in full (deterministic writer): p50 {p50:.2f} s, p95 {p95:.2f} s")
    return len(questions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100, help="questions for the memory run")
    parser.add_argument("--latency", type=int, default=10, help="questions for submit-to-table latency")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the latency questions")
    parser.add_argument("--cold", type=int, default=3, help="cold starts")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright
    print(f"app bench; {load_note()}")
    with tempfile.TemporaryDirectory(prefix="carenav-bench-app-") as tmp:
        folder = Path(tmp)
        env = snapshot(folder)
        try:
            with sync_playwright() as p:
                chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    cold_starts(chromium, env, folder / "pg", args.cold, folder)
                    stop_cluster(folder / "pg")
                    run_session(chromium, env, args)
                finally:
                    chromium.close()
        finally:
            stop_cluster(folder / "pg")


if __name__ == "__main__":
    main()
