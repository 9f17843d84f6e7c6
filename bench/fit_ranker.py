"""Fit the re-ranker's weights (data/retrieval_ranker.toml) on the TUNING half of the labelled queries.

For every positive tuning query (data/eval/retrieval_queries.toml's tuning half and the fitting-only
data/eval/retrieval_training.toml), the product's own candidate pools and features (carenav_core.retrieval.
rank) are computed on the built index; a candidate is relevant when its label is one of the query's
relevant labels. Each feature is standardised (mean, scale over all candidates) and the weights minimise a
pairwise logistic loss (RankNet with a linear scorer): for every relevant/irrelevant pair of one query's
candidates, log(1 + exp(-(w . (x_relevant - x_irrelevant)))), each query's pairs weighing as much as
another's, plus an L2 penalty. On the tuning half this beat a pointwise (class-balanced) logistic
regression on the same features: recall@5 0.673 vs 0.642. The held-out half is never read here;
bench/bench_retrieval.py reports it.

The query adapter (carenav_core/retrieval/adapter.py, data/retrieval_adapter.npz) is fitted here too, on the
same tuning queries. The re-ranker must learn from vector features as good as a new question's, not from
questions the adapter was fitted on: the tuning queries are split in FOLDS, each fold's candidates are pooled
and featured with an adapter fitted on the other folds (out of fold), and the shipped adapter is then fitted
on all of them.

    CARENAV_MIRROR=../shared/data CARENAV_DATA_DIR=<a full build> python bench/fit_ranker.py [--write]
"""
from __future__ import annotations

import argparse
import sys
from concurrent.futures import Future
from datetime import date
from pathlib import Path

import numpy as np
from pgvector.sqlalchemy import Vector
from sqlalchemy import text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from carenav_core.retrieval.adapter import ADAPTER_FILE, QueryAdapter, fit_adapter, save_adapter  # noqa: E402
from carenav_core.retrieval.labelled import fitting_queries  # noqa: E402
from carenav_core.retrieval.rank import FEATURES, RANKER_FILE, features  # noqa: E402
from carenav_core.retrieval.search import POOL, candidates  # noqa: E402
from carenav_core.retrieval.store import Store  # noqa: E402
from carenav_core.settings import Settings  # noqa: E402

L2 = 0.01          # ridge on the standardised weights; 0.001-0.1 gave the same tuning recall@5 (+-0.01)
FOLDS = 5          # out-of-fold adapters for the re-ranker's training features
SEEDS = 5          # adapters fitted from different mini-batch orders and averaged (tuning-half CV of one seed: 0.48-0.51)
COLLECTIONS = ("rules",)
_DOCUMENTS = text("SELECT label, embedding FROM chunks WHERE collection = 'rules' ORDER BY id").columns(embedding=Vector())


def _done(value) -> Future:
    future: Future = Future()
    future.set_result(value)
    return future


def fit_query_adapter(store: Store) -> tuple[QueryAdapter, list, dict[int, QueryAdapter]]:
    """(the adapter fitted on every positive tuning query, those queries, each query's out-of-fold adapter)."""
    queries = list(fitting_queries())
    with store.engine.connect() as conn:
        rows = conn.execute(_DOCUMENTS).all()
    row_of = {r.label: n for n, r in enumerate(rows)}
    documents = np.array([np.asarray(r.embedding, dtype=np.float32) for r in rows])
    vectors = np.array([store.embedder.embed_query(q.question) for q in queries], dtype=np.float32)

    def adapter(members: list[int]) -> QueryAdapter:
        pairs = [(n, row_of[label]) for n in members for label in sorted(queries[n].relevant) if label in row_of]
        x, y = vectors[[n for n, _ in pairs]], np.array([r for _, r in pairs])
        matrix = np.mean([fit_adapter(x, y, documents, seed=seed) for seed in range(SEEDS)], axis=0)
        return QueryAdapter(matrix=matrix, embedder=store.embedder.name, collections=frozenset(COLLECTIONS))

    order = np.random.default_rng(1).permutation(len(queries))
    folds = [order[k::FOLDS].tolist() for k in range(FOLDS)]
    out_of_fold = {}
    for k, fold in enumerate(folds):
        fitted = adapter([n for other in folds if other is not fold for n in other])
        out_of_fold.update({n: fitted for n in fold})
    return adapter(list(range(len(queries)))), queries, out_of_fold


def training_data(store: Store, queries: list, adapters: dict[int, QueryAdapter]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per positive tuning query: its candidates' features (pooled and featured with its out-of-fold
    adapter) and 0/1 relevance."""
    xs, ys = [], []
    with store.engine.begin() as conn:            # candidates() sets the product's HNSW width itself
        for n, query in enumerate(queries):
            raw = _done(store.embedder.embed_query(query.question))
            found = candidates(conn, store, query.question, COLLECTIONS, None, POOL, raw, adapters[n])
            xs.append(features(found.index, found.query, found.positions, found.bm25, found.similarity, found.coverage))
            ys.append(np.array([found.index.labels[p] in query.relevant for p in found.positions], dtype=float))
    return xs, ys


def fit(xs: list[np.ndarray], ys: list[np.ndarray], l2: float = L2, steps: int = 2000, rate: float = 0.5):
    """(mean, scale, weights) minimising the query-balanced pairwise logistic loss by gradient descent."""
    every = np.vstack(xs)
    mean, scale = every.mean(0), every.std(0)
    scale = np.where(scale > 0, scale, 1.0)
    differences, weights = [], []
    for x, y in zip(xs, ys):
        z = (x - mean) / scale
        relevant, other = z[y > 0], z[y == 0]
        if len(relevant) and len(other):
            pairs = (relevant[:, None, :] - other[None, :, :]).reshape(-1, z.shape[1])
            differences.append(pairs)
            weights.append(np.full(len(pairs), 1.0 / len(pairs)))
    d, q = np.vstack(differences), np.concatenate(weights)
    q /= q.mean()
    weight = np.zeros(d.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(d @ weight))          # the chance the pair is ordered wrongly
        weight -= rate * (-(d.T @ (p * q)) / len(d) + l2 * weight)
    return mean, scale, weight


def toml_text(mean, scale, weight, queries: int, candidates_n: int, positives: int) -> str:
    lines = [f"# Re-ranker weights (carenav_core/retrieval/rank.py), written by bench/fit_ranker.py on {date.today()}.",
             "# Fitted on TUNING queries only (the tuning half of data/eval/retrieval_queries.toml and the fitting-only",
             f"# data/eval/retrieval_training.toml): {queries} queries, {candidates_n} candidates, {positives} relevant;",
             f"# pairwise logistic loss (linear RankNet), L2 {L2}, standardised features. Vector features out of fold:",
             f"# each query pooled with a query adapter fitted on the other {FOLDS - 1} of {FOLDS} folds.",
             "# score = sum(weight * (feature - mean) / scale); the held-out half is reported by bench/bench_retrieval.py.", ""]
    for name, m, s, w in zip(FEATURES, mean, scale, weight):
        lines += ["[[feature]]", f'name = "{name}"', f"mean = {m:.6g}", f"scale = {s:.6g}", f"weight = {w:.6g}", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true",
                        help=f"write {RANKER_FILE.relative_to(ROOT)} and {ADAPTER_FILE.relative_to(ROOT)}")
    args = parser.parse_args()
    store = Store(Settings())
    adapter, queries, out_of_fold = fit_query_adapter(store)
    xs, ys = training_data(store, queries, out_of_fold)
    mean, scale, weight = fit(xs, ys)
    for name, w in zip(FEATURES, weight):
        print(f"{name:16s} {w:+.3f}")
    body = toml_text(mean, scale, weight, len(xs), sum(map(len, ys)), int(sum(y.sum() for y in ys)))
    if args.write:
        RANKER_FILE.write_text(body, encoding="utf-8")
        save_adapter(ADAPTER_FILE, adapter.matrix, adapter.embedder, tuple(adapter.collections))
        print(f"wrote {RANKER_FILE} and {ADAPTER_FILE}")
    store.close()


if __name__ == "__main__":
    main()
