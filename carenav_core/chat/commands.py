"""`carenav ask "question" [--json]`."""
from __future__ import annotations

import argparse
import sys

from carenav_core.chat.events import DoneEvent, SourcesEvent, TokenEvent, ValuationEvent, WarningEvent
from carenav_core.chat.pipeline import answer
from carenav_core.chat.writers import ollama_writer_from_settings
from carenav_core.errors import NotBuiltError
from carenav_core.pfs.commands import print_table
from carenav_core.pfs.rows import AMA_NOTICE, shows_cpt
from carenav_core.pfs.valuation import open_reader
from carenav_core.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ask", help="answer a question with valuation evidence and cited rule text")
    parser.add_argument("question")
    parser.add_argument("--json", action="store_true", help="print the events as JSON lines")
    parser.set_defaults(func=run_ask)


def run_ask(args: argparse.Namespace, settings: Settings) -> int:
    try:
        fee_db = open_reader(settings.duckdb_file)
    except NotBuiltError as exc:
        print(f"warning: {exc}", file=sys.stderr)
        fee_db = None
    for event in answer(args.question, settings, fee_db=fee_db, writer=ollama_writer_from_settings(settings)):
        if args.json:
            print(event.to_json(), flush=True)
        else:
            _print(event)
    return 0


def _print(event) -> None:
    if isinstance(event, ValuationEvent):
        print_table(event.rows)
        if event.unpriced:
            print("not priced in any loaded release: " + ", ".join(event.unpriced))
        if shows_cpt(event.rows):
            print(AMA_NOTICE)
        print()
    elif isinstance(event, TokenEvent):
        print(event.text, end="" if event.text.endswith(("\n", " ")) else " ", flush=True)
    elif isinstance(event, WarningEvent) and event.kind != "withheld":
        print(f"\n[warning] {event.message}", file=sys.stderr)
    elif isinstance(event, SourcesEvent):
        print("\n\nSources cited:")
        for source in event.cited:
            print(f"  {source.label} {source.title[:70]} ({source.published}) {source.url}")
        if event.also_retrieved:
            print("Also retrieved: " + " ".join(s.label for s in event.also_retrieved))
    elif isinstance(event, DoneEvent):
        print(f"(written by: {event.writer}; sentences withheld: {event.withheld})")
