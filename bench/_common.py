"""Shared by the bench scripts: percentiles, machine load, the repository on sys.path."""
from __future__ import annotations

import os
import statistics
import sys
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
