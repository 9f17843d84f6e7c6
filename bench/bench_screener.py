"""Screener: latency of one screen for the 100 synthetic families of `carenav eval screener`,
with the deterministic writer and with the scripted Ollama test double (loopback HTTP server speaking
Ollama's /api/chat, faithful and hostile replies), both over the product's retrieval (exact search of
the `programs` collection in PostgreSQL, ONNX query embeddings). Baseline in the same run: the rules
engine alone (`screen`, no retrieval, no explanation) on the same families; the evaluation's lexical
stand-in search is timed too, to separate retrieval from the rest.

    python bench/bench_screener.py [--families 100] [--repeat 3]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CPU, interleaved, load_note, percentiles, verdict  # noqa: E402

from carenav_core.llm import ModelClient  # noqa: E402
from carenav_core.retrieval.store import Store  # noqa: E402
from carenav_core.screener.assemble import run_screen  # noqa: E402
from carenav_core.screener.edges import program_search  # noqa: E402
from carenav_core.screener.engine import screen  # noqa: E402
from carenav_core.screener.evaluation import LexicalSearch, ScriptedModel, generate_families  # noqa: E402
from carenav_core.screener.profile import normalize  # noqa: E402
from carenav_core.eval.ollama_double import OllamaDouble  # noqa: E402
from carenav_core.settings import Settings  # noqa: E402




def line(label: str, samples: list[float], base: float, target: str = "") -> str:
    p50, p95 = percentiles(samples)
    return f"{label:58s} p50 {p50:8.2f} ms  p95 {p95:8.2f} ms  p50 ratio to rules-only {p50 / base:8.1f}{target}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    settings = Settings()
    families = generate_families(args.seed, args.families)
    store = Store(settings)
    search = program_search(store)
    lexical = LexicalSearch()
    print(f"screener bench: {len(families)} synthetic families x {args.repeat}; {load_note()}")
    for family in families[:10]:                     # warm: store, ONNX model, imports
        run_screen(normalize(family.answers), on=family.on, search=search, model=None)

    import ollama
    model = ScriptedModel(args.seed)
    with OllamaDouble(responder=model) as server:
        client = ModelClient(client=ollama.Client(host=server.url), model="scripted")

        def scripted_one(family) -> None:
            model.family = family
            run_screen(normalize(family.answers), on=family.on, search=search, model=client)
        query_cache = getattr(store.embedder, "_query", None)

        def cold_one(family) -> None:       # every query embedded afresh: no query-embedding cache
            if query_cache is not None:
                query_cache.cache_clear()
            run_screen(normalize(family.answers), on=family.on, search=search, model=None)
        samples = interleaved({
            "rules": lambda f: screen(normalize(f.answers), on=f.on),
            "cold": cold_one,
            "deterministic": lambda f: run_screen(normalize(f.answers), on=f.on, search=search, model=None),
            "lexical": lambda f: run_screen(normalize(f.answers), on=f.on, search=lexical, model=None),
            "scripted": scripted_one}, families, args.repeat)
    rules, deterministic, lexical_only, scripted = (samples[k] for k in ("rules", "deterministic", "lexical", "scripted"))
    one_by_one, batched = embedding_what_if(families, store)
    base = percentiles(rules)[0]
    p95 = percentiles(deterministic)[1]
    print(line("baseline: rules engine only", rules, base))
    print(line("deterministic writer, store retrieval (product)", deterministic, base,
               f"  ({verdict(p95 < 300)}: p95 < 300 ms)"))
    print(line("deterministic writer, store retrieval, query cache emptied", samples["cold"], base,
               f"  ({verdict(percentiles(samples['cold'])[1] < 300)}: p95 < 300 ms)"))
    print(line("deterministic writer, lexical stand-in search", lexical_only, base))
    print(line("scripted Ollama double (loopback HTTP), store retrieval", scripted, base))
    c50, c95 = percentiles(CPU["deterministic"])
    s50, s95 = percentiles(CPU["scripted"])
    print(f"{'CPU time incl. ONNX threads, deterministic':58s} p50 {c50:8.2f} ms  p95 {c95:8.2f} ms"
          f"  ({verdict(c95 < 300)} on CPU time)")
    print(f"{'CPU time incl. ONNX threads, scripted double':58s} p50 {s50:8.2f} ms  p95 {s95:8.2f} ms")
    print(line("  of which: candidate query embeddings, one ONNX call each", one_by_one, base))
    print(line("  what-if, NOT the product: the same queries in one batch", batched, base))
    print(load_note())


def embedding_what_if(families, store: Store) -> tuple[list[float], list[float]]:
    """Per family: ONNX time for its candidates' queries one call each (as gather_evidence does now)
    and in one embed_documents batch (a possible change)."""
    from carenav_core.screener.engine import Classification
    from carenav_core.screener.evidence import candidate_query
    embedder = store.embedder
    single, batch = [], []
    for family in families:
        profile = normalize(family.answers)
        queries = [candidate_query(profile, r) for r in screen(profile, on=family.on)
                   if r.classification is not Classification.EXCLUDED]
        started = time.perf_counter()
        for query in queries:
            embedder._batch([query])                # the model run itself (embed_query may be cached)
        single.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        embedder.embed_documents(queries)
        batch.append((time.perf_counter() - started) * 1000)
    return single, batch


if __name__ == "__main__":
    main()
