"""`carenav eval chat`: the CLI edge of the chat harness (builds the collaborators, calls the core)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from carenav_core.cli import command_group
from carenav_core.progress import TerminalProgress, silent
from carenav_core.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `eval chat` and `eval answers` (next to `eval screener`, whichever module registers first)."""
    evaluations = command_group(subparsers, "eval", "evaluation harnesses")
    chat = evaluations.add_parser("chat", help="run the golden questions through the chat pipeline")
    chat.add_argument("--seed", type=int, default=7, help="seed of the golden set and the scripted replies")
    chat.add_argument("--questions", type=int, default=None, help="run only the first N questions (default all 180)")
    chat.add_argument("--out", type=Path, default=None, help="also write the JSON results to this file")
    chat.add_argument("--json", action="store_true", help="print the JSON results instead of the summary")
    chat.set_defaults(func=run_chat_eval_command)
    answers = evaluations.add_parser("answers", help="score answer usefulness: required facts, off-topic quotes, "
                                     "hostile sentences shown (data/eval/answers.toml)")
    answers.add_argument("--writer", choices=("deterministic", "scripted"), default="deterministic",
                         help="deterministic writer (no model), or the scripted model double (faithful and hostile)")
    answers.add_argument("--seed", type=int, default=7, help="seed of the scripted replies")
    answers.add_argument("--questions", type=int, default=None, help="run only the first N questions (default all)")
    answers.add_argument("--id", action="append", default=[], help="run only the question with this id (repeatable)")
    answers.add_argument("--out", type=Path, default=None, help="also write the JSON results to this file")
    answers.add_argument("--json", action="store_true", help="print the JSON results instead of the summary")
    answers.set_defaults(func=run_answers_eval_command)


def run_chat_eval_command(args: argparse.Namespace, settings: Settings) -> int:
    from carenav_core.backends import Backends
    from carenav_core.eval.chat import oracle_for, run_chat_evaluation, summary_lines
    from carenav_core.pfs.valuation import open_reader
    from carenav_core.retrieval.store import Store
    oracle = oracle_for(settings)
    backends = Backends(settings=settings, fee_db=open_reader(settings.duckdb_file), store=Store(settings))
    try:
        progress = TerminalProgress() if sys.stderr.isatty() else silent
        results = run_chat_evaluation(backends, oracle, seed=args.seed, questions=args.questions, progress=progress)
    finally:
        backends.close()
    text = json.dumps(results, indent=2, ensure_ascii=False)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    sys.stdout.write(text + "\n" if args.json else "\n".join(summary_lines(results)) + "\n")
    return 0 if results["passed"] else 1


def run_answers_eval_command(args: argparse.Namespace, settings: Settings) -> int:
    """`carenav eval answers`: exit 0 when the targets are met (>= 90% of facts, no off-topic quote, no
    hostile sentence shown), 1 otherwise."""
    from carenav_core.backends import Backends
    from carenav_core.eval.answers import run_answers_evaluation, summary_lines
    from carenav_core.eval.chat import oracle_for
    from carenav_core.pfs.valuation import open_reader
    from carenav_core.retrieval.store import Store
    oracle = oracle_for(settings)
    backends = Backends(settings=settings, fee_db=open_reader(settings.duckdb_file), store=Store(settings))
    try:
        progress = TerminalProgress() if sys.stderr.isatty() else silent
        results = run_answers_evaluation(backends, oracle, writer=args.writer, seed=args.seed,
                                         questions=args.questions, ids=args.id, progress=progress)
    finally:
        backends.close()
    _write(results, args.out)
    sys.stdout.write(json.dumps(results, indent=2, ensure_ascii=False) + "\n" if args.json
                     else "\n".join(summary_lines(results)) + "\n")
    return 0 if results["passed"] else 1


def _write(results: dict, out: Path | None) -> None:
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
