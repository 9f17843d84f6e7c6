"""Run the bench suite, or named parts of it, each script in a fresh Python (same interpreter),
streaming its output. `carenav bench` calls this file.

    python bench/run_all.py [all|evidence|retrieval|app|screener|guard|pfs|index ...] [-- extra args]
Extra arguments after `--` go to every script run (use them with a single part).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# part -> scripts (bench/<name>.py); "all" is evidence, retrieval, screener, app and the guard overhead.
PARTS: dict[str, tuple[str, ...]] = {
    "evidence": ("bench_evidence",),          # detect+value+code-cited vs pandas
    "retrieval": ("bench_langchain",),        # ours vs LangChain PGVector vs numpy brute force
    "screener": ("bench_screener",),          # screening latency, deterministic and scripted Ollama
    "app": ("bench_app",),                    # cold start, submit-to-table, peak RSS in Chromium
    "guard": ("bench_guard",),                # output-guard overhead per sentence
    "pfs": ("bench_pfs",),                    # full build time (temporary folder) + lookups
    "index": ("bench_retrieval",),            # retrieval quality, embedding rate, 100k synthetic HNSW
    "load": ("bench_load",),                  # N = 1, 5, 10, 20 concurrent sessions on one server
}
ALL = ("evidence", "retrieval", "screener", "app", "guard")


def scripts_for(parts: list[str]) -> list[str]:
    """Scripts of the named parts, in order, without repeats; ValueError names an unknown part."""
    unknown = [p for p in parts if p != "all" and p not in PARTS]
    if unknown:
        raise ValueError(f"unknown bench part(s) {', '.join(unknown)}; expected all or {', '.join(PARTS)}")
    names = [n for p in parts for n in (ALL if p == "all" else (p,))]
    return list(dict.fromkeys(s for n in names for s in PARTS[n]))


def run(parts: list[str], extra: list[str]) -> int:
    """Run each script with this interpreter; returns the number of scripts that failed."""
    failed = []
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": os.pathsep.join(filter(None, [str(BENCH.parent), os.environ.get("PYTHONPATH")]))}
    for script in scripts_for(parts or ["all"]):
        print(f"=== {script}.py {' '.join(extra)}", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, str(BENCH / f"{script}.py"), *extra], cwd=BENCH.parent, env=env)
        print(f"=== {script}.py exit {code} after {time.perf_counter() - started:.0f} s", flush=True)
        if code:
            failed.append(script)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return len(failed)


def main(argv: list[str]) -> int:
    parts, extra = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    try:
        return 1 if run(parts, extra) else 0
    except ValueError as exc:
        print(f"run_all: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
