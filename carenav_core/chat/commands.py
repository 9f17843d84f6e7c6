"""`carenav ask "question" [--json]`."""
from __future__ import annotations

import argparse
import sys

from carenav_core.backends import open_backends
from carenav_core.chat.answer import Answer
from carenav_core.chat.events import ChatEvent, FactorEvent, TokenEvent, ValuationEvent, WarningEvent
from carenav_core.chat.pipeline import answer
from carenav_core.pfs.commands import print_table
from carenav_core.pfs.rows import AMA_NOTICE, shows_cpt
from carenav_core.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ask", help="answer a question with valuation evidence and cited rule text")
    parser.add_argument("question")
    parser.add_argument("--json", action="store_true", help="print the events as JSON lines")
    parser.set_defaults(func=run_ask)


def run_ask(args: argparse.Namespace, settings: Settings) -> int:
    backends = open_backends(settings)
    if backends.fee_db is None:
        print("warning: no fee-schedule database could be opened; run `carenav build`", file=sys.stderr)
    seen: list[ChatEvent] = []
    try:
        for event in answer(args.question, backends):
            seen.append(event)
            if args.json:
                print(event.to_json(), flush=True)
            else:
                _print(event)
        if not args.json:
            _print_end(Answer.from_events(args.question, seen))
    finally:
        backends.close()
    return 0


def _print(event: ChatEvent) -> None:
    if isinstance(event, FactorEvent) and event.anesthesia:
        first = event.anesthesia[0]
        national = f"; national {first.national}" if first.national is not None else ""
        print(f"anesthesia conversion factors, CY{first.cy} (ANES file CY{first.file_cy}{national}; * = asked):")
        shown = [r for r in event.anesthesia if r.asked] or []
        for local in dict.fromkeys([*shown, event.anesthesia[0], event.anesthesia[-1]]):
            print(f"  {'*' if local.asked else ' '} {local.state:3s} {local.key:9s} {local.name[:40]:40s} ${local.amount}")
        print(f"  ({len(event.anesthesia)} localities, lowest and highest shown; --json gives all)\n")
    if isinstance(event, FactorEvent) and event.gpci:
        print(f"GPCIs, CY{event.gpci[0].cy} (work / PE / MP; * = asked; --json gives every locality):")
        for place in [r for r in event.gpci if r.asked] or event.gpci[:3]:
            print(f"  {'*' if place.asked else ' '} {place.state:3s} {place.key:9s} {place.name[:36]:36s} "
                  f"{place.work} / {place.pe} / {place.mp}")
            if place.earlier is not None:
                was = place.earlier
                print(f"  {'':3s} {'':9s} {'CY' + str(was.cy) + ' (was)':36s} {was.gpci_work} / {was.gpci_pe} / "
                      f"{was.gpci_mp}")
        print()
    if isinstance(event, FactorEvent) and event.rows:
        print("national PFS conversion factors (* = asked):")
        for row in event.rows:
            change = f"{row.percent:+}% vs {row.prior_label}" if row.percent is not None else ""
            check = f"  ({row.confirmed})" if row.tag != "O" else ""     # a figure not read from a CMS source
            print(f"  {'*' if row.in_focus else ' '} {row.label:30s} ${row.amount}  {change}{check}")
        print()
    if isinstance(event, ValuationEvent):      # the rows the question asks about first, as the chat page shows them
        focus = [r for r in event.rows if r.in_focus]
        print_table(focus or event.rows)
        context = len(event.rows) - len(focus) if focus else 0
        if context:         # the family's other codes and years, shown on the chat page one click away
            print(f"(+{context} rows of related codes and years for context; --json gives them)")
        if event.unpriced:
            print("not priced in any loaded release: " + ", ".join(event.unpriced))
        if shows_cpt(event.rows):
            print(AMA_NOTICE)
        print()
    elif isinstance(event, TokenEvent):
        print(event.text, end="" if event.text.endswith(("\n", " ")) else " ", flush=True)
    elif isinstance(event, WarningEvent):
        print(f"\n[warning] {event.message}", file=sys.stderr)


def _print_end(done: Answer) -> None:
    # the notes the app shows beside the answer, on standard output too (a reader of the printed answer sees "both
    # are in the same locality" or "ZIP codes are not mapped"), each once and not when the prose already says it
    said = " ".join(done.text.split())
    notes = dict.fromkeys(w.message for w in done.warnings if " ".join(w.message.split()) not in said)
    if notes:
        print("\n\nNotes:")
        for note in notes:
            print(f"  - {note}")
    print("\n\nSources cited:")
    for source in done.cited:
        about = "; ".join(part for part in (source.published, source.speaker) if part) or source.kind
        print(f"  {source.label} {source.title[:70]} ({about}) {source.url}")
    if done.also_retrieved:
        print("Also retrieved: " + " ".join(s.label for s in done.also_retrieved))
    print(f"(written by: {done.writer}; sentences withheld: {len(done.withheld)})")
