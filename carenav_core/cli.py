"""`carenav` command line. Each feature module registers its own subcommand in COMMANDS."""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from carenav_core.errors import CareNavError
from carenav_core.settings import Settings

# module path -> that module defines `register(subparsers)`; each parser sets `func(args, settings) -> int`.
COMMANDS = (
    "carenav_core.pfs.commands",        # build, value
    "carenav_core.retrieval.commands",  # search, index
    "carenav_core.chat.commands",       # ask
    "carenav_core.screener.commands",   # screen, eval screener
    "carenav_core.bench_command",       # bench (runs bench/ scripts)
    "carenav_core.eval.commands",       # eval chat
)


def command_group(subparsers: argparse._SubParsersAction, name: str, help: str) -> argparse._SubParsersAction:
    """The subparsers of a command shared by several modules (e.g. `eval chat`, `eval screener`),
    creating the command the first time a module asks for it."""
    if name in subparsers.choices:
        parser = subparsers.choices[name]
        return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.add_parser(name, help=help).add_subparsers(dest=f"{name}_target", required=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="carenav", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail to stderr")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        importlib.import_module(module).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args, Settings()) or 0)
    except CareNavError as exc:
        print(f"carenav {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`carenav ask … | head`): stop quietly. Python's recipe (library/signal,
        # "Note on SIGPIPE"): point stdout at devnull so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
