"""`carenav screen` (and `carenav eval screener`): CLI edges that build collaborators and call the core."""
from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import date
from pathlib import Path
from carenav_core.cli import command_group
from carenav_core.errors import ConfigError
from carenav_core.screener.assemble import run_screen
from carenav_core.backends import open_backends
from carenav_core.retrieval.store import Store
from carenav_core.screener.edges import program_search
from carenav_core.screener.profile import normalize
from carenav_core.screener.render import report_markdown
from carenav_core.settings import Settings


ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def iso_date(text: str) -> date:
    """A command-line date, YYYY-MM-DD only; anything else is an argparse error that says the form expected (argparse
    names the option: "argument --date: ...").

    >>> iso_date("2026-06-01")
    datetime.date(2026, 6, 1)
    >>> iso_date("06/01/2026")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: '06/01/2026': use the form YYYY-MM-DD, for example 2026-06-01
    """
    if not ISO_DATE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r}: use the form YYYY-MM-DD, for example 2026-06-01")
    try:
        return date.fromisoformat(text)
    except ValueError as exc:       # the form is right, the day is not (2026-02-30)
        raise argparse.ArgumentTypeError(f"{text!r} is not a calendar date ({exc}); use the form YYYY-MM-DD, for "
                                         "example 2026-06-01") from exc


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `screen` and `eval screener`."""
    screen = subparsers.add_parser("screen", help="screen an older adult or caregiver for 12 WA programs")
    screen.add_argument("--answers", type=Path, required=True, help="intake answers as a JSON object")
    screen.add_argument("--json", action="store_true", help="print the report as JSON instead of Markdown")
    screen.add_argument("--date", type=iso_date, default=None, help="screening date, YYYY-MM-DD (default today)")
    screen.set_defaults(func=run_screen_command)
    evaluations = command_group(subparsers, "eval", "evaluation harnesses")
    evaluate = evaluations.add_parser("screener", help="run the synthetic-family screener evaluation")
    evaluate.add_argument("--seed", type=int, default=7, help="seed of the synthetic families")
    evaluate.add_argument("--families", type=int, default=100, help="how many families")
    evaluate.add_argument("--lexical", action="store_true",
                          help="use the in-memory lexical stand-in instead of the pgvector program store")
    evaluate.add_argument("--out", type=Path, default=None, help="write the JSON results here too")
    evaluate.set_defaults(func=run_eval_command)
    data = command_group(subparsers, "data", "checks of the project's dated data")
    check = data.add_parser("check", help="list program figures that have ended, end within 90 days or have no value")
    check.add_argument("--on", type=iso_date, default=None, help="date to check, YYYY-MM-DD (default today)")
    check.add_argument("--days", type=int, default=90, help="how far ahead an ending value is listed (default 90)")
    check.set_defaults(func=run_data_check_command)


def _no_repeats(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object whose keys are each written once: a repeated answer ("age": 70, ..., "age": 45) is refused, not
    silently decided by the last one."""
    keys = [k for k, _ in pairs]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError("answered more than once: " + ", ".join(repeated) + " (keep one answer each)")
    return dict(pairs)


def read_answers(path: Path) -> dict:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_no_repeats)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"answers file {path}: byte {exc.start} is not UTF-8 text; save the answers as "
                          "UTF-8 JSON") from exc
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"answers file {path}: {exc}; expected a JSON object of intake answers") from exc
    except ValueError as exc:       # _no_repeats
        raise ConfigError(f"answers file {path}: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"answers file {path}: expected a JSON object, got {type(raw).__name__}")
    return raw


def evaluation_search(store: Store):
    """The store's program search when its `programs` collection answers, else None (the lexical
    stand-in), with a note on stderr saying which."""
    from carenav_core.retrieval.search import exact_search
    probe = exact_search(store, "programs", "income limit", 1)
    if probe.hits:
        return program_search(store)
    print(f"note: the program store is not available ({'; '.join(probe.warnings) or 'empty'}); "
          "using the lexical stand-in (run `carenav build`)", file=sys.stderr)
    return None


def run_screen_command(args: argparse.Namespace, settings: Settings) -> int:
    profile = normalize(read_answers(args.answers))
    backends = open_backends(settings)
    try:
        report = run_screen(profile, on=args.date or date.today(), search=program_search(backends.store),
                            model=backends.model)
    finally:
        backends.close()
    sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n" if args.json else report_markdown(report))
    return 0


def run_eval_command(args: argparse.Namespace, settings: Settings) -> int:
    from carenav_core.screener.evaluation import run_evaluation
    store = Store(settings)
    try:
        search = None if args.lexical else evaluation_search(store)
        results = run_evaluation(seed=args.seed, families=args.families, search=search)
    finally:
        store.close()
    text = json.dumps(results, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    sys.stdout.write(text + "\n")
    return 0 if results["passed"] else 1


def run_data_check_command(args: argparse.Namespace, settings: Settings) -> int:
    """Print one line per finding; exit 1 when there is any, 0 when the data is clean for the date."""
    from carenav_core.params import freshness
    from carenav_core.screener.thresholds import load_thresholds
    on = args.on or date.today()
    findings = freshness(load_thresholds().parameters, on, horizon_days=args.days)
    for f in findings:
        sys.stdout.write(f"{f.problem:<9}  {f.key:<36}  {f.detail}  ({Path(f.source).name})\n")
    count = len(findings)
    sys.stdout.write(f"{count} finding{'s' if count != 1 else ''} on {on} "
                     f"(values ending within {args.days} days, ended, pending or missing)\n")
    return 1 if findings else 0
