"""`carenav search QUESTION [--k N] [--json] [--since DATE]` and `carenav index [--force]`."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from datetime import date

from carenav_core.codes.detect import detect
from carenav_core.progress import TerminalProgress
from carenav_core.retrieval.index import index_documents
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
    index.set_defaults(func=run_index)


def run_search(args: argparse.Namespace, settings: Settings) -> int:
    """Hybrid hits first, then paragraphs citing the codes the question names."""
    store = Store(settings)
    try:
        retrieved = retrieve(store, args.question, args.k, ("rules",), since=args.since)
        found = merge(retrieved, code_cited(store, list(detect(args.question).explicit), args.cited))
    finally:
        store.close()
    hits = found.hits
    for warning in found.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps([asdict(h) for h in hits], indent=2))
    else:
        for rank, hit in enumerate(hits, start=1):
            print(f"{rank}. {hit.label} {hit.rule_id} ({hit.kind}, {hit.published}) {hit.heading}\n"
                  f"   {hit.url}\n   {hit.text[:300]}\n")
    return 2 if retrieved.warnings and not hits else 0


def run_index(args: argparse.Namespace, settings: Settings) -> int:
    """Embed changed FR documents (all with --force)."""
    store = Store(settings)
    try:
        report = index_documents(settings, store, progress=TerminalProgress(), force=args.force)
    finally:
        store.close()
    print(f"rules: {report.documents} documents; embedded {len(report.embedded_documents)} "
          f"({report.chunks_embedded} chunks, {report.chunks_per_second:.1f}/s), "
          f"unchanged {len(report.unchanged_documents)}, removed {len(report.removed_documents)}")
    return 0
