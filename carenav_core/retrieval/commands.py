"""`carenav search QUESTION [--k N] [--json] [--since DATE]` and
`carenav index [--force] [--background | --status] [--quiet]`."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from datetime import date

from carenav_core.codes.detect import detect
from carenav_core.progress import TerminalProgress, silent
from carenav_core.retrieval.background import index_log, start_background_index
from carenav_core.retrieval.index import IndexBusyError, index_documents
from carenav_core.retrieval.progress import eta_words, index_progress, progress_note
from carenav_core.retrieval.search import code_cited, merge, retrieve
from carenav_core.retrieval.store import Store
from carenav_core.settings import Settings


def register(subparsers) -> None:
    """Add the `search` and `index` subcommands."""
    search = subparsers.add_parser("search", help="search the indexed Federal Register rule text")
    search.add_argument("question", help="question or keywords")
    search.add_argument("--k", type=int, default=5, help="how many retrieved chunks (default 5)")
    search.add_argument("--since", type=date.fromisoformat, help="only documents published on/after YYYY-MM-DD")
    search.add_argument("--cited", type=int, default=2, help="code-cited chunks per code named (default 2)")
    search.add_argument("--json", action="store_true", help="print hits as JSON")
    search.set_defaults(func=run_search)
    index = subparsers.add_parser("index", help="embed the Federal Register documents into the store")
    index.add_argument("--force", action="store_true", help="re-embed everything (e.g. after changing embedder)")
    index.add_argument("--background", action="store_true", help="start indexing in a separate process and return")
    index.add_argument("--status", action="store_true", help="print how far the rule-text index is, and return")
    index.add_argument("--quiet", action="store_true", help="no progress bar (the background indexer)")
    index.set_defaults(func=run_index)


def run_search(args: argparse.Namespace, settings: Settings) -> int:
    """Hybrid hits first, then the paragraphs naming the question's codes that best answer it."""
    store = Store(settings)
    try:
        retrieved = retrieve(store, args.question, args.k, ("rules",), since=args.since)
        shown = frozenset(h.chunk_id for h in retrieved.hits)
        found = merge(retrieved, code_cited(store, list(detect(args.question).explicit), args.cited,
                                            question=args.question, skip=shown))
        note = progress_note(index_progress(store))
    finally:
        store.close()
    hits = found.hits
    for warning in found.warnings + ((note,) if note else ()):
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps([asdict(h) for h in hits], indent=2))
    else:
        for rank, hit in enumerate(hits, start=1):
            print(f"{rank}. {hit.label} {hit.rule_id} ({hit.kind}, {hit.published}) {hit.heading}\n"
                  f"   {hit.url}\n   {hit.text[:300]}\n")
    return 2 if retrieved.warnings and not hits else 0


def run_index(args: argparse.Namespace, settings: Settings) -> int:
    """Embed changed FR documents (all with --force); or start that in the background; or report progress."""
    if args.background:
        child = start_background_index(settings, force=args.force)
        print(f"rule text: indexing in the background (process {child.pid}; log {index_log(settings)}); "
              "progress: `carenav index --status` or the Data page")
        return 0
    store = Store(settings)
    try:
        if args.status:
            return _print_status(store)
        report = index_documents(settings, store, progress=silent if args.quiet else TerminalProgress(),
                                 force=args.force)
    except IndexBusyError as exc:
        print(f"rule text: {exc}", file=sys.stderr)
        return 0
    finally:
        store.close()
    print(f"rules: {report.documents} documents; embedded {len(report.embedded_documents)} "
          f"({report.chunks_embedded} chunks, {report.chunks_per_second:.1f}/s), "
          f"unchanged {len(report.unchanged_documents)}, removed {len(report.removed_documents)}")
    return 0


def _print_status(store: Store) -> int:
    progress = index_progress(store)
    if progress.complete:
        print(f"rule text complete: {progress.total:,} paragraphs")
        return 0
    pace = f"; {progress.rate:.1f} paragraphs/s, ETA {eta_words(progress.eta_seconds)}" if progress.rate else ""
    print(f"{progress_note(progress)}{pace}")
    return 0 if progress.running else 1
