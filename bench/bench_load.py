"""Load: N concurrent analysts on one `streamlit run app.py` (loopback), each a Playwright browser context in
headless Chromium asking varied questions one after another. For N = 1, 5, 10, 20 it prints p50/p95 of
submit -> valuation table visible and submit -> answer done (its Sources expander shown), errors (time-outs,
exceptions shown on the page), and the Streamlit server's RSS: idle before the level, peak during it, and
(peak - idle) / N per session. Targets (issue 14): 0 errors, p95 submit -> table <= 2 s at N = 10.

The app reads a private data folder (default bench/out/load, built once: every CMS release of the mirror
into DuckDB, three FR documents into its own embedded PostgreSQL), with the deterministic writer.
Client and server share this machine's cores: the browsers' CPU is part of the figures (stated).

    python bench/bench_load.py [--levels 1 5 10 20] [--questions 3] [--data bench/out/load]
Bounded: every wait has a 60 s time-out and each level stops after --level-timeout seconds; loopback only.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, load_note, percentiles, verdict  # noqa: E402
from bench_app import CHAT_BOX, CHROMIUM, CHROMIUM_ARGS, TABLE, PeakRss, served  # noqa: E402

import psutil  # noqa: E402

QUESTIONS = ("How is G0556 valued?", "99490 payment in 2025", "chronic care management 99487",
             "G0557 vs G0558", "What did CMS pay for 99214?", "How is 99453 valued?",
             "compare 99213/99215 across years", "transitional care management 99495",
             "What is APCM and how is it valued?", "How has 99490 been paid since 2023?",
             "99457 remote monitoring valuation", "advance care planning 99497")
FR_DOCUMENTS = ("2024-25382", "2025-08676", "2021-23972")
WAIT_MS = 60_000


def prepare(folder: Path) -> dict[str, str]:
    """Build the private data once (fee schedule + three FR documents); the app's environment."""
    from sqlalchemy import text

    from carenav_core.pfs.build import build
    from carenav_core.retrieval.index import index_documents
    from carenav_core.retrieval.store import Store
    from carenav_core.settings import Settings
    mirror = Path(os.environ.get("CARENAV_MIRROR") or ROOT.parent / "shared" / "data").resolve()
    settings = Settings(data_dir=folder, mirror=mirror, pg_dir=folder / "pg", database_url=None, embedder="onnx")
    folder.mkdir(parents=True, exist_ok=True)
    if not settings.duckdb_file.exists():
        print(f"building the fee schedule into {settings.duckdb_file} (once)")
        build(settings)
    store = Store(settings)
    with store.engine.connect() as conn:
        chunks = conn.execute(text("SELECT count(*) FROM chunks WHERE collection = 'rules'")).scalar()
    if not chunks:
        print(f"indexing {', '.join(FR_DOCUMENTS)} into {settings.pg_folder} (once)")
        chunks = index_documents(settings, store, only=FR_DOCUMENTS).chunks_embedded
    store.close()
    print(f"rule-text index in {settings.pg_folder}: {chunks} chunks")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARENAV_")}
    return {**env, "CARENAV_DATA_DIR": str(folder), "CARENAV_PG_DIR": str(folder / "pg"),
            "CARENAV_MIRROR": str(mirror)}


async def ask(page, question: str) -> tuple[float, float]:
    """(seconds to the new valuation table, seconds to the answer's Sources expander)."""
    tables = await page.locator(TABLE).count()
    done = await page.get_by_text("Sources", exact=True).count()
    box = page.get_by_placeholder(CHAT_BOX)
    await box.fill(question)
    started = time.perf_counter()
    await box.press("Enter")
    await page.locator(TABLE).nth(tables).wait_for(state="visible", timeout=WAIT_MS)
    table = time.perf_counter() - started
    await page.get_by_text("Sources", exact=True).nth(done).wait_for(timeout=WAIT_MS)
    return table, time.perf_counter() - started


async def session(browser, url: str, index: int, count: int, results: dict) -> None:
    """One analyst: a fresh context (own cookies, own Streamlit session) asking `count` questions."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = await context.new_page()
        await page.goto(url, timeout=WAIT_MS)
        await page.get_by_placeholder(CHAT_BOX).wait_for(timeout=WAIT_MS)
        for turn in range(count):
            question = QUESTIONS[(index * count + turn) % len(QUESTIONS)]
            try:
                table, done = await ask(page, question)
                results["table"].append(table)
                results["done"].append(done)
            except Exception as exc:  # a time-out or a closed page is an error of this ask, not the run
                results["errors"].append(f"session {index} {question!r}: {type(exc).__name__}")
        for shown in await page.locator('[data-testid="stException"]').all_inner_texts():
            results["errors"].append(f"session {index}: exception on the page: {' '.join(shown.split())[:300]}")
    except Exception as exc:  # the page never loaded
        results["errors"].append(f"session {index} did not start: {type(exc).__name__}: {exc}")
    finally:
        await context.close()


class StreamlitSocket:
    """One session over Streamlit's own WebSocket protocol (/_stcore/stream, protobuf BackMsg/ForwardMsg),
    as the browser speaks it, without a browser: what the server does, not what Chromium renders."""

    def __init__(self, ws) -> None:
        self.ws, self.chat_input_id, self.page_hash = ws, "", ""

    async def rerun(self, question: str | None = None) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg
        message = BackMsg()
        message.rerun_script.page_script_hash = self.page_hash
        if question is not None:
            widget = message.rerun_script.widget_states.widgets.add()
            widget.id = self.chat_input_id
            widget.chat_input_value.data = question
        await self.ws.send(message.SerializeToString())

    async def run(self, started: float, times: dict) -> None:
        """Read until the script finishes; record when the first table and the Sources expander came."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
        while True:
            message = ForwardMsg()
            message.ParseFromString(await asyncio.wait_for(self.ws.recv(), WAIT_MS / 1000))
            kind = message.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = message.new_session.page_script_hash
            elif kind == "delta":
                self.delta(message.delta, time.perf_counter() - started, times)
            elif kind == "script_finished":
                return

    def delta(self, delta, elapsed: float, times: dict) -> None:
        kind = delta.WhichOneof("type")
        if kind == "new_element":
            element = delta.new_element.WhichOneof("type")
            if element == "chat_input":
                self.chat_input_id = delta.new_element.chat_input.id
            elif element == "dataframe":
                times.setdefault("table", elapsed)
            elif element == "exception":
                times.setdefault("exception", delta.new_element.exception.message[:200])
        elif kind == "add_block" and delta.add_block.expandable.label == "Sources":
            times.setdefault("done", elapsed)


async def socket_session(url: str, index: int, count: int, results: dict) -> None:
    """One analyst over the WebSocket protocol: open the Chat page, ask `count` questions in turn."""
    import websockets
    try:
        async with websockets.connect(url.replace("http://", "ws://") + "/_stcore/stream", subprotocols=["streamlit"],
                                      origin=url, max_size=None, open_timeout=WAIT_MS / 1000) as ws:
            session = StreamlitSocket(ws)
            await session.rerun()
            await session.run(time.perf_counter(), {})
            for turn in range(count):
                question = QUESTIONS[(index * count + turn) % len(QUESTIONS)]
                times: dict = {}
                started = time.perf_counter()
                await session.rerun(question)
                await session.run(started, times)
                record(results, index, question, times)
    except Exception as exc:  # connection refused, time-out, closed socket
        results["errors"].append(f"session {index}: {type(exc).__name__}: {exc}")


def record(results: dict, index: int, question: str, times: dict) -> None:
    if "exception" in times or "table" not in times or "done" not in times:
        results["errors"].append(f"session {index} {question!r}: {times.get('exception') or 'no table/sources'}")
        return
    results["table"].append(times["table"])
    results["done"].append(times["done"])


async def level(browser, url: str, sessions: int, count: int, timeout: float) -> dict:
    """`sessions` analysts at once (browser contexts, or WebSocket sessions when `browser` is None)."""
    results: dict = {"table": [], "done": [], "errors": []}
    tasks = [session(browser, url, i, count, results) if browser else socket_session(url, i, count, results)
             for i in range(sessions)]
    try:
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=timeout)
    except asyncio.TimeoutError:
        results["errors"].append(f"level stopped after {timeout:.0f} s")
    return results


def report(n: int, results: dict, idle: float, rss: PeakRss, wall: float, cpu: float) -> None:
    t50, t95 = percentiles(results["table"])
    d50, d95 = percentiles(results["done"])
    per_session = (rss.peak - idle) / n
    print(f"| {n} | {len(results['table'])} | {len(results['errors'])} | {t50:5.2f} / {t95:5.2f} | "
          f"{d50:5.2f} / {d95:5.2f} | {idle:6.0f} -> {rss.peak:6.0f} | {per_session:7.1f} | {cpu:4.0f}% "
          f"| {wall:6.1f} |")
    for error in results["errors"][:5]:
        print(f"|    error: {error}")


async def run_levels(url: str, pid: int, args) -> dict[int, dict]:
    from playwright.async_api import async_playwright
    async with async_playwright() as p:
        browser = None
        if args.driver == "browser":
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        await level(browser, url, 1, 1, args.level_timeout)           # warm-up: store, embedder, first run
        print("| N | asks | errors | table p50 / p95 s | done p50 / p95 s | server RSS idle -> peak MiB "
              "| MiB/session | server CPU | wall s |")
        print("|---|---|---|---|---|---|---|---|---|")
        summary = {n: await measured_level(browser, url, pid, n, args) for n in args.levels}
        if browser:
            await browser.close()
    return summary


async def measured_level(browser, url: str, pid: int, n: int, args) -> dict:
    """One level with the server's RSS (idle before, peak during) and CPU share over its wall time."""
    server = psutil.Process(pid)
    await asyncio.sleep(2)
    idle, cpu0, started = server.memory_info().rss / 2**20, sum(server.cpu_times()[:2]), time.perf_counter()
    rss = PeakRss(pid)
    results = await level(browser, url, n, args.questions, args.level_timeout)
    rss.stop()
    wall = time.perf_counter() - started
    report(n, results, idle, rss, wall, 100 * (sum(server.cpu_times()[:2]) - cpu0) / wall)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 5, 10, 20], help="concurrent sessions")
    parser.add_argument("--questions", type=int, default=3, help="questions per session")
    parser.add_argument("--level-timeout", type=float, default=300, help="seconds before a level is stopped")
    parser.add_argument("--driver", choices=("socket", "browser"), default="socket",
                        help="Streamlit's WebSocket protocol (light) or Playwright contexts in Chromium")
    parser.add_argument("--data", type=Path, default=ROOT / "bench" / "out" / "load", help="private data folder")
    args = parser.parse_args()
    if max(args.levels) > 40 or args.questions > 20:
        parser.error("bounded: at most 40 sessions and 20 questions each")
    env = prepare(args.data.resolve())
    print(f"load bench ({args.driver} driver); {load_note()}; {args.questions} questions per session, "
          "deterministic writer")
    with served(ROOT / "app.py", env) as (process, url, _):
        summary = asyncio.run(run_levels(url, process.pid, args))
    ten = summary.get(10)
    if ten is not None:
        _, t95 = percentiles(ten["table"])
        print(f"N = 10: {len(ten['errors'])} errors, p95 submit -> table {t95:.2f} s "
              f"({verdict(not ten['errors'] and t95 <= 2.0)}: 0 errors, p95 <= 2 s); {load_note()}")


if __name__ == "__main__":
    main()
