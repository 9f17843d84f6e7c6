"""Retrieval benchmark: recall@5, MRR and nDCG@10 of vector-only, keyword-only and hybrid search on
the labelled queries (data/eval/retrieval_queries.toml), held-out half and tuning half separately,
for the product's ranking and for each issue-12 step switched off; chunks embedded per second;
retrieval p50/p95 on the real corpus and on 100,000 synthetic chunks (HNSW) against exact brute
force over the same vectors; embedded server cold and warm start.

    CARENAV_MIRROR=../shared/data python bench/bench_retrieval.py [--synthetic 100000] [--skip-build]
    CARENAV_MIRROR=../shared/data python bench/bench_retrieval.py --quality-only --skip-build
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from carenav_core.retrieval.labelled import Figures, LabelledQuery, load_labelled, score  # noqa: E402
from carenav_core.retrieval.search import RANKING, Ranking, retrieve  # noqa: E402
from carenav_core.retrieval.store import Store  # noqa: E402
from carenav_core.settings import Settings  # noqa: E402


def chunk_texts(store: Store) -> dict[str, str]:
    """label -> text of every `rules` chunk (groups near-duplicate relevant paragraphs)."""
    from sqlalchemy import text
    with store.engine.connect() as conn:
        return dict(conn.execute(text("SELECT label, text FROM chunks WHERE collection = 'rules'")).all())


def quality(store: Store, queries: tuple[LabelledQuery, ...], mode: str, split: str,
            ranking: Ranking = RANKING, texts: dict[str, str] | None = None) -> Figures:
    """recall@5, MRR and nDCG@10 of one ranker on one split ("heldout", "tuning" or "all")."""
    def rank(question: str) -> list[str]:
        return [h.label for h in retrieve(store, question, 10, ("rules",), mode=mode, ranking=ranking).hits]
    return score(queries, rank, chunk_texts(store) if texts is None else texts, split)


# Each issue-12 step switched off in turn (ablations): a re-ranker feature's weight set to 0 (not refitted),
# the query adapter, duplicate removal; comment/response pairing switched on; and the re-ranker replaced by reciprocal rank fusion.
ABLATIONS = {"no section features": {"off": ("section_bm25", "section_vector", "neighbour_bm25", "section_coverage")},
             "no question-word share": {"off": ("coverage", "section_coverage")},
             "no speaker/decision features": {"off": ("decision", "response", "summary")},
             "no code/rule features": {"off": ("names_codes", "misses_codes", "named_rule")},
             "no query adapter": {"adapt": False},
             "no duplicate removal": {"dedup": False}, "with comment/response pairing": {"pair": True}}


def bench_quality(store: Store, queries: tuple[LabelledQuery, ...]) -> None:
    """The labelled-set figures: three rankers with the product ranking, then the ablations (hybrid)."""
    texts = chunk_texts(store)
    print(f"labelled queries: {sum(q.split == 'heldout' for q in queries)} held-out, "
          f"{sum(q.split == 'tuning' for q in queries)} tuning ({sum(q.negative for q in queries)} negatives, "
          "which have no relevant paragraph and are left out of the means)")
    for mode in ("vector", "keyword", "hybrid"):
        for split in ("heldout", "tuning"):
            print(quality(store, queries, mode, split, texts=texts).line(f"{mode} (product ranking)"))
    for split in ("heldout", "tuning"):
        print(quality(store, queries, "vector", split, Ranking(adapt=False), texts).line("vector, no query adapter"))
    variants = {"fusion only (no re-ranker)": Ranking(learned=False)} | {
        name: dataclasses.replace(RANKING, **change) for name, change in ABLATIONS.items()}
    for name, ranking in variants.items():
        for split in ("heldout", "tuning"):
            print(quality(store, queries, "hybrid", split, ranking, texts).line(f"hybrid, {name}"))


def bench_weak_match(store: Store, queries: tuple[LabelledQuery, ...]) -> None:
    """The best hit's re-ranker score of each labelled query, positives and negatives per half, against the
    weak-match line (search.WEAK_MATCH: chosen on the tuning half; the held-out half is read, never fitted)."""
    from carenav_core.retrieval.search import WEAK_MATCH
    for split in ("tuning", "heldout"):
        for negative in (False, True):
            chosen = [q for q in queries if q.split == split and q.negative == negative]
            best = sorted(hits[0].score if hits else 0.0 for hits in
                          (retrieve(store, q.question, 5, ("rules",)).hits for q in chosen))
            below = sum(score < WEAK_MATCH for score in best)
            print(f"{split:8} {'negatives' if negative else 'positives'}: {len(chosen):3d} queries, best score "
                  f"min {best[0]:.2f} / median {statistics.median(best):.2f} / max {best[-1]:.2f}; "
                  f"{below} below the weak-match line {WEAK_MATCH}")


def _percentiles(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    return f"p50 {ms[len(ms) // 2]:.1f} ms, p95 {ms[int(len(ms) * 0.95) - 1]:.1f} ms"


def bench_real_corpus(store: Store, queries: tuple[LabelledQuery, ...]) -> None:
    """Latency of one question: query embedding, then hybrid SQL vs exact cosine scan."""
    from carenav_core.retrieval.search import exact_search
    embedder = store.embedder
    timings: dict[str, list[float]] = {"query embedding": [], "hybrid retrieve": [], "exact scan": []}
    for q in queries * 3:
        for label, run in (("query embedding", lambda: embedder.embed_query(q.question)),
                           ("hybrid retrieve", lambda: retrieve(store, q.question, 5, ("rules",))),
                           ("exact scan", lambda: exact_search(store, "rules", q.question, 5))):
            forget = getattr(getattr(embedder, "_query", None), "cache_clear", None)
            if forget:
                forget()            # time the model run, not the product's query-embedding cache
            started = time.perf_counter()
            run()
            timings[label].append(time.perf_counter() - started)
    for label, samples in timings.items():
        note = "" if label == "query embedding" else " (incl. query embedding)"
        print(f"real corpus, {label}{note}: {_percentiles(samples)}")


def synthetic_vectors(store: Store, n: int, rng: np.random.Generator) -> np.ndarray:
    """n unit vectors shaped like the real corpus: real chunk embeddings plus Gaussian noise
    (uniform random vectors have no neighbourhoods, which no ANN index can exploit)."""
    from sqlalchemy import text
    with store.engine.connect() as conn:
        real = np.array([json.loads(v) for v in conn.execute(text(
            "SELECT embedding::text FROM chunks WHERE collection = 'rules'")).scalars()], dtype=np.float32)
    noisy = real[rng.integers(0, len(real), n)] + rng.normal(0, 0.03, (n, real.shape[1])).astype(np.float32)
    return noisy / np.linalg.norm(noisy, axis=1, keepdims=True)


def bench_synthetic(store: Store, n: int, queries: int = 200) -> None:
    """HNSW vs exact brute force (SQL scan and numpy) over the same n vectors, in one run."""
    import pgserver
    import psycopg
    from pgvector.psycopg import register_vector
    rng = np.random.default_rng(7)
    vectors = synthetic_vectors(store, n, rng)
    probes = synthetic_vectors(store, queries, rng)
    with tempfile.TemporaryDirectory() as folder:
        server = pgserver.get_server(Path(folder) / "pg", cleanup_mode="stop")
        # prepare_threshold=None: a server-side prepared plan would ignore the later enable_indexscan=off
        with psycopg.connect(server.get_uri(), autocommit=True, prepare_threshold=None) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            register_vector(conn)
            _load_synthetic(conn, vectors)
            _time_queries(conn, vectors, probes)
        server.cleanup()


def _load_synthetic(conn, vectors: np.ndarray) -> None:
    conn.execute(f"CREATE TABLE synth (id int PRIMARY KEY, embedding vector({vectors.shape[1]}))")
    started = time.perf_counter()
    with conn.cursor().copy("COPY synth (id, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["int4", "vector"])
        for i, v in enumerate(vectors):
            copy.write_row((i, v))
    print(f"synthetic {len(vectors):,} x {vectors.shape[1]}: COPY {time.perf_counter() - started:.1f} s", end="; ")
    conn.execute("SET maintenance_work_mem = '1GB'")
    started = time.perf_counter()
    conn.execute("CREATE INDEX ON synth USING hnsw (embedding vector_cosine_ops)")
    print(f"HNSW build {time.perf_counter() - started:.1f} s")


def _time_queries(conn, vectors: np.ndarray, probes: np.ndarray) -> None:
    sql = "SELECT id FROM synth ORDER BY embedding <=> %s LIMIT 10"
    truth, samples = [], []
    for p in probes:
        started = time.perf_counter()
        scores = vectors @ p
        truth.append(set(np.argpartition(-scores, 10)[:10].tolist()))
        samples.append(time.perf_counter() - started)
    print(f"  top-10 exact numpy brute force (float32): {_percentiles(samples)}")
    for label, settings_sql, count in (("HNSW ef_search=40", "SET enable_indexscan = on; SET hnsw.ef_search = 40", 200),
                                       ("HNSW ef_search=200", "SET hnsw.ef_search = 200", 200),
                                       ("exact SQL scan", "SET enable_indexscan = off", 40)):
        for statement in settings_sql.split("; "):
            conn.execute(statement)
        samples, found = [], []
        for p, t in zip(probes[:count], truth[:count]):
            started = time.perf_counter()
            ids = {r[0] for r in conn.execute(sql, (p,)).fetchall()}
            samples.append(time.perf_counter() - started)
            found.append(len(ids & t) / 10)
        print(f"  top-10 {label}: {_percentiles(samples)}, recall@10 vs exact {statistics.mean(found):.3f}")


def bench_server_start() -> None:
    """Cold (initdb + start) and warm (existing data folder) start of the embedded server,
    each in a fresh Python process as `carenav` would see it."""
    with tempfile.TemporaryDirectory() as folder:
        code = ("import time,pgserver,sys; t=time.perf_counter(); "
                "pgserver.get_server(sys.argv[1], cleanup_mode='stop'); print(time.perf_counter()-t)")
        for label in ("cold", "warm"):
            out = subprocess.run([sys.executable, "-c", code, str(Path(folder) / "pg")],
                                 capture_output=True, text=True, check=True).stdout
            print(f"embedded server {label} start: {float(out.strip().splitlines()[-1]):.2f} s")


def bench_embedding(store: Store, sample: int = 256) -> None:
    """Chunks embedded per second by the configured embedder, on real chunks of the CY2025 excerpt."""
    from carenav_core.retrieval.fr import load_fr_documents
    from carenav_core.retrieval.index import document_chunks
    document = load_fr_documents(ROOT / "data" / "sources.toml")[0]
    chunks = document_chunks(store.settings, document)[:sample]
    embedder = store.embedder
    started = time.perf_counter()
    embedder.embed_documents([c.embed_text for c in chunks])
    seconds = time.perf_counter() - started
    print(f"embedding ({embedder.name}): {len(chunks) / seconds:.1f} chunks/s over {len(chunks)} chunks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--synthetic", type=int, default=100_000)
    parser.add_argument("--skip-build", action="store_true", help="use the existing index as is")
    parser.add_argument("--quality-only", action="store_true", help="only the labelled-set figures and latency")
    parser.add_argument("--weak-match", action="store_true",
                        help="only the best hit's score of positives and negatives per half, against WEAK_MATCH")
    args = parser.parse_args()
    settings = Settings()
    store = Store(settings)
    if not args.skip_build:
        from carenav_core.progress import TerminalProgress
        from carenav_core.retrieval.index import index_documents
        report = index_documents(settings, store, progress=TerminalProgress())
        print(f"indexed {report.documents} documents: {report.chunks_embedded} chunks embedded at "
              f"{report.chunks_per_second:.1f} chunks/s")
    queries = load_labelled()
    if args.weak_match:
        bench_weak_match(store, queries)
        return
    bench_quality(store, queries)
    bench_real_corpus(store, queries)
    if args.quality_only:
        return
    bench_embedding(store)
    bench_server_start()
    if args.synthetic:
        bench_synthetic(store, args.synthetic)


if __name__ == "__main__":
    main()
