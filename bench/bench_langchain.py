"""Our retrieval against LangChain's PGVector (`langchain-postgres`) and exact numpy brute
force, on the same chunks, the same ONNX vectors and the same PostgreSQL server.

Our chunks and their stored vectors are copied into LangChain's own tables (`add_embeddings`, through
an Embeddings class that only returns our precomputed vectors: nothing is downloaded) in a scratch
database `carenav_bench_langchain` on the embedded server of data/pg (dropped afterwards; the product
database is only read). Query vectors are computed once with our ONNX embedder, so every timing below
is search only. recall@10 is measured against numpy brute force over the same vectors.

    pip install -r bench/requirements-bench.txt && pip install --no-deps langchain-postgres==0.0.19
    python bench/bench_langchain.py [--probes 200] [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, load_note, percentiles, verdict  # noqa: E402

import numpy as np  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402

from carenav_core.retrieval import search as product_search  # noqa: E402
from carenav_core.retrieval import store as product_store  # noqa: E402
from carenav_core.settings import Settings  # noqa: E402

SCRATCH_DB = "carenav_bench_langchain"
K = 10


def load_chunks(engine) -> tuple[list[str], list[str], np.ndarray]:
    """Labels, texts and stored vectors of the `rules` collection (the FR chunks). Chunks are keyed by
    label (unique per collection and stable across re-indexing; ids are not)."""
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT label, text, embedding::text FROM chunks WHERE collection = 'rules' "
                                 "ORDER BY label")).all()
    vectors = np.array([json.loads(r[2]) for r in rows], dtype=np.float32)
    return [r[0] for r in rows], [r[1] for r in rows], vectors


def probe_texts(n: int, chunk_texts: list[str]) -> list[str]:
    """The labelled retrieval questions, then analyst-style snippets (first words of random chunks)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_retrieval import load_queries
    questions = [q["question"] for q in load_queries()]
    rng = random.Random(7)
    while len(questions) < n:
        words = rng.choice(chunk_texts).split()
        start = rng.randrange(max(1, len(words) - 12))
        questions.append(" ".join(words[start:start + 12]))
    return questions[:n]


class PrecomputedEmbeddings:
    """LangChain Embeddings that only look vectors up (chunk text -> our stored ONNX vector)."""

    def __init__(self, by_text: dict[str, list[float]]) -> None:
        self.by_text = by_text

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.by_text[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.by_text[text]


def scratch_url(engine, name: str) -> str:
    """(Re)create a scratch database on the same server; its SQLAlchemy URL."""
    admin = engine.url.set(database="postgres")
    with create_engine(admin, isolation_level="AUTOCOMMIT").connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        conn.execute(text(f"CREATE DATABASE {name}"))
    return engine.url.set(database=name).render_as_string(hide_password=False)


def drop_scratch(engine, name: str) -> None:
    admin = engine.url.set(database="postgres")
    with create_engine(admin, isolation_level="AUTOCOMMIT").connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


def load_langchain(url: str, ids, texts, vectors, ef_search: int):
    """A PGVector store holding our chunks; its engine sets hnsw.ef_search like ours."""
    from langchain_postgres import PGVector
    lc_engine = create_engine(url, connect_args={"options": f"-c hnsw.ef_search={ef_search}"})
    embeddings = PrecomputedEmbeddings(dict(zip(texts, vectors.tolist())))
    store = PGVector(embeddings=embeddings, connection=lc_engine, embedding_length=vectors.shape[1],
                     collection_name="rules", use_jsonb=True, pre_delete_collection=True)
    started = time.perf_counter()
    for start in range(0, len(ids), 500):
        stop = start + 500
        store.add_embeddings(texts[start:stop], vectors[start:stop].tolist(),
                             metadatas=[{"label": i} for i in ids[start:stop]],
                             ids=list(ids[start:stop]))
    print(f"langchain-postgres: loaded {len(ids):,} chunks x {vectors.shape[1]} in {time.perf_counter() - started:.1f} s")
    return store, lc_engine


def uses_index(engine, probe: np.ndarray) -> bool:
    """EXPLAIN of the statement PGVector.similarity_search_by_vector sends (collection join, ORDER BY
    distance, LIMIT): does the planner pick the HNSW index?"""
    with engine.connect() as conn:
        conn.execute(text(f"SET hnsw.ef_search = {product_search.EF_SEARCH}"))
        plan = conn.execute(text(
            "EXPLAIN SELECT e.id, e.embedding <=> CAST(:q AS vector) AS distance FROM langchain_pg_embedding e "
            "JOIN langchain_pg_collection c ON e.collection_id = c.uuid "
            "WHERE e.collection_id = (SELECT uuid FROM langchain_pg_collection LIMIT 1) "
            "ORDER BY distance ASC LIMIT 10"), {"q": json.dumps(probe.tolist())}).scalars().all()
    return any("lc_hnsw" in line for line in plan)


class FixedQueryEmbedder:
    """Our embedder's name/dimension with precomputed query vectors (so `retrieve` times search only)."""

    def __init__(self, real, vectors: dict[str, np.ndarray]) -> None:
        self.name, self.dimension, self.vectors = real.name, real.dimension, vectors

    def embed_query(self, text: str) -> np.ndarray:
        return self.vectors[text]

    def embed_documents(self, texts):
        raise RuntimeError("the benchmark never embeds documents")


_OURS_VECTOR = text("""SELECT label FROM chunks WHERE collection = ANY(:collections)
                       ORDER BY embedding <=> :qvec LIMIT :k""").bindparams(
    product_search.bindparam("qvec", type_=product_search.Vector()))


def our_vector_search(engine, qvec: np.ndarray) -> list[str]:
    """The `semantic` ranker of the product's hybrid SQL on its own (HNSW, ef_search as the product)."""
    with engine.begin() as conn:
        conn.execute(text(f"SET LOCAL hnsw.ef_search = {product_search.EF_SEARCH}"))
        return list(conn.execute(_OURS_VECTOR, {"qvec": qvec, "collections": ["rules"], "k": K}).scalars())


def our_retrieve(store, question: str) -> list[str]:
    """The product's `retrieve` (hybrid SQL, vector-only weights) with the query vector precomputed."""
    return [h.label for h in product_search.retrieve(store, question, K, ("rules",), mode="vector").hits]


def our_hybrid(store, question: str) -> list[str]:
    return [h.label for h in product_search.retrieve(store, question, K, ("rules",)).hits]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    try:
        import langchain_postgres  # noqa: F401
    except ImportError as exc:
        sys.exit(f"langchain-postgres is not installed ({exc}); see bench/requirements-bench.txt")
    settings = Settings()
    plain_store = product_store.Store(settings)
    ids, texts, vectors = load_chunks(plain_store.engine)
    probes = probe_texts(args.probes, texts)
    qvecs = {p: plain_store.embedder.embed_query(p) for p in probes}
    store = product_store.Store(settings, embedder=FixedQueryEmbedder(plain_store.embedder, qvecs))
    print(f"retrieval vs LangChain: {len(ids):,} chunks, {len(probes)} probes x {args.repeat}, k={K}; {load_note()}")
    engines = []
    try:
        plain, plain_engine = load_langchain(scratch_url(store.engine, SCRATCH_DB), ids, texts, vectors,
                                             product_search.EF_SEARCH)
        indexed, indexed_engine = load_langchain(scratch_url(store.engine, SCRATCH_DB + "_hnsw"), ids, texts,
                                                 vectors, product_search.EF_SEARCH)
        engines = [plain_engine, indexed_engine]
        with indexed_engine.begin() as conn:
            started = time.perf_counter()
            conn.execute(text("CREATE INDEX lc_hnsw ON langchain_pg_embedding "
                              "USING hnsw (embedding vector_cosine_ops)"))
        print(f"langchain copy 2: HNSW index (pgvector defaults, as ours) built in {time.perf_counter() - started:.1f} s")
        for engine in engines:
            with engine.begin() as conn:
                conn.execute(text("ANALYZE"))               # planner statistics for the fresh tables
        print(f"langchain copy 2 plan uses the HNSW index: {uses_index(indexed_engine, vectors[0])}")
        run(store, store.engine, plain, indexed, ids, vectors, probes, qvecs, args.repeat)
    finally:
        for engine in engines:
            engine.dispose()
        drop_scratch(store.engine, SCRATCH_DB)
        drop_scratch(store.engine, SCRATCH_DB + "_hnsw")
    now_labels, _, now_vectors = load_chunks(store.engine)
    if now_labels != ids or not np.array_equal(now_vectors, vectors):
        print("WARNING: the rules collection changed during the run (another process re-indexed data/pg); "
              "our figures read the live table, LangChain's a snapshot: rerun on a quiet index")


def run(store, engine, plain, indexed, ids, vectors, probes, qvecs, repeat: int) -> None:
    id_array = np.array(ids)

    def brute(p):
        scores = vectors @ qvecs[p]
        top = np.argpartition(-scores, K)[:K]
        return id_array[top[np.argsort(-scores[top])]].tolist()

    def langchain(store):
        return lambda p: [d.metadata["label"] for d in store.similarity_search_by_vector(qvecs[p].tolist(), k=K)]

    truth = {p: set(brute(p)) for p in probes}
    contenders = {"numpy brute force (exact, in process)": brute,
                  "ours: vector SQL (HNSW, ef_search=200)": lambda p: our_vector_search(engine, qvecs[p]),
                  "ours: retrieve(mode='vector') (product fn)": lambda p: our_retrieve(store, p),
                  "ours: retrieve hybrid (product default)": lambda p: our_hybrid(store, p),
                  "langchain PGVector (default: no index)": langchain(plain),
                  "langchain PGVector + HNSW (ef_search=200)": langchain(indexed)}
    print_table(measure(contenders, probes, truth, repeat))


def measure(contenders: dict, probes: list[str], truth: dict, repeat: int) -> dict:
    """Per contender: latency samples (ms) interleaved probe by probe, and mean recall@10."""
    samples = {name: [] for name in contenders}
    found = {name: [] for name in contenders}
    for name, fn in contenders.items():          # warm each path (pools, plans, caches)
        for p in probes[:20]:
            fn(p)
    for _ in range(repeat):
        for p in probes:
            for name, fn in contenders.items():
                started = time.perf_counter()
                got = fn(p)
                samples[name].append((time.perf_counter() - started) * 1000)
                found[name].append(len(set(got[:K]) & truth[p]) / K)
    return {name: (samples[name], statistics.mean(found[name])) for name in contenders}


def print_table(results: dict) -> None:
    print(f"{'search (query vector precomputed)':46s} {'p50 ms':>8s} {'p95 ms':>8s} {'recall@10':>10s}")
    for name, (samples, recall) in results.items():
        p50, p95 = percentiles(samples)
        print(f"{name:46s} {p50:8.2f} {p95:8.2f} {recall:10.3f}")
    for mine in ("ours: retrieve(mode='vector') (product fn)", "ours: vector SQL (HNSW, ef_search=200)"):
        ours, ours_recall = percentiles(results[mine][0]), results[mine][1]
        for name in ("langchain PGVector (default: no index)", "langchain PGVector + HNSW (ef_search=200)"):
            theirs, recall = percentiles(results[name][0]), results[name][1]
            print(f"{mine.split(' (')[0]} vs {name}: speed-up p50 {theirs[0] / ours[0]:.2f}x, "
                  f"p95 {theirs[1] / ours[1]:.2f}x; recall@10 {ours_recall:.3f} vs {recall:.3f} "
                  f"({verdict(ours[1] < theirs[1] and ours[0] < theirs[0] and ours_recall >= recall - 0.01)}: "
                  "faster at equal recall@10)")
    print(load_note())


if __name__ == "__main__":
    main()
