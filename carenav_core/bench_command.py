"""`carenav bench`: a thin runner for the benchmark scripts in bench/ (they stay out of the package).

Each script runs in a fresh Python with this interpreter and streams what it prints; see
bench/README.md for what each measures and its baseline.
"""
from __future__ import annotations

import argparse
import shlex
import subprocess
import sys

from carenav_core.errors import ConfigError
from carenav_core.settings import PROJECT_ROOT, Settings

RUNNER = PROJECT_ROOT / "bench" / "run_all.py"
PARTS = ("all", "evidence", "retrieval", "screener", "app", "guard", "pfs", "index")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("bench", help="run the benchmarks in bench/ (figures vs same-run baselines)")
    # no `choices=`: with nargs="*" argparse checks the empty list itself against them and rejects it
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"which benchmarks: {', '.join(PARTS)} (default all)")
    parser.add_argument("--args", dest="extra", default="",
                        help="extra arguments passed to each script, e.g. --args='--questions 200'")
    parser.set_defaults(func=run_bench)


def run_bench(args: argparse.Namespace, settings: Settings) -> int:
    if not RUNNER.exists():
        raise ConfigError(f"no benchmark runner at {RUNNER}; `carenav bench` runs from a source checkout "
                          "that has the bench/ folder")
    unknown = [p for p in args.parts if p not in PARTS]
    if unknown:
        raise ConfigError(f"unknown bench part(s) {', '.join(unknown)}; expected one or more of {', '.join(PARTS)}")
    command = [sys.executable, str(RUNNER), *(args.parts or ["all"])]
    if args.extra:
        command += ["--", *shlex.split(args.extra)]
    return subprocess.call(command, cwd=PROJECT_ROOT)
