"""Shared by the bench scripts: percentiles, machine load, the repository on sys.path."""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p95) of `samples` (inclusive quantiles; same units as the samples)."""
    if len(samples) < 2:
        return (samples[0], samples[0]) if samples else (float("nan"), float("nan"))
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return statistics.median(samples), cuts[94]


def load_note() -> str:
    """The 1/5/15-minute load averages and core count, printed next to every figure."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f}/{five:.2f}/{fifteen:.2f} on {os.cpu_count()} cores"


def verdict(ok: bool) -> str:
    return "target met" if ok else "TARGET NOT MET"


CPU: dict[str, list[float]] = {}     # CPU ms per item and contender of the last `interleaved` run (this process)


def interleaved(contenders: dict, items: list, repeat: int) -> dict[str, list[float]]:
    """Wall-clock milliseconds per item for each contender, run item by item in rotation so that changes in
    machine load hit every contender alike; this process's CPU milliseconds go to CPU."""
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for name in contenders:
        CPU[name] = []
    for _ in range(repeat):
        for item in items:
            for name, function in contenders.items():
                started, cpu = time.perf_counter(), time.process_time()
                function(item)
                samples[name].append((time.perf_counter() - started) * 1000)
                CPU[name].append((time.process_time() - cpu) * 1000)
    return samples
