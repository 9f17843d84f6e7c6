"""Fit the query adapter (data/retrieval_adapter.npz) and the re-ranker's weights (data/retrieval_ranker.toml)
on the TUNING half of the labelled queries.

For every positive query of the tuning half of data/eval/retrieval_queries.toml, the product's own candidate
pools and features (carenav_core.retrieval.rank) are computed on the built index; a candidate is relevant when its label is one of the query's
relevant labels. Each feature is standardised (mean, scale over all candidates) and two linear scorers are
fitted: one minimises a pairwise logistic loss (RankNet): for every relevant/irrelevant pair of one query's
candidates, log(1 + exp(-(w . (x_relevant - x_irrelevant)))), each query's pairs weighing as much as
another's; the other a listwise softmax cross-entropy (ListNet); both with an L2 penalty. The shipped weights
are their sum, each scaled to unit length. On the tuning half, out of fold, the pairwise loss beat a pointwise
(class-balanced) logistic regression (recall@5 0.673 vs 0.642) and the blend beat either loss alone. The held-out half is never read here;
bench/bench_retrieval.py reports it.

The query adapter (carenav_core/retrieval/adapter.py, data/retrieval_adapter.npz) is fitted here too, on the
same tuning queries. The re-ranker must learn from vector features as good as a new question's, not from
questions the adapter was fitted on: the tuning queries are split in FOLDS, each fold's candidates are pooled
and featured with an adapter fitted on the other folds (out of fold), and the shipped adapter is then fitted
on all of them. bench/cv_fitting.py runs this whole fit inside the tuning half to compare choices.

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


class Corpus:
    """The rule-text paragraphs' stored vectors (row per label) and the questions' raw embeddings, read once."""

    def __init__(self, store: Store) -> None:
        self.store = store
        with store.engine.connect() as conn:
            rows = conn.execute(_DOCUMENTS).all()
        self.row_of = {r.label: n for n, r in enumerate(rows)}
        self.documents = np.array([np.asarray(r.embedding, dtype=np.float32) for r in rows])
        self._vectors: dict[str, np.ndarray] = {}

    def vector(self, question: str) -> np.ndarray:
        if question not in self._vectors:
            self._vectors[question] = np.asarray(self.store.embedder.embed_query(question), dtype=np.float32)
        return self._vectors[question]

    def adapter(self, queries: list) -> QueryAdapter:
        """An adapter fitted on `queries` (SEEDS mini-batch orders averaged)."""
        pairs = [(q, self.row_of[label]) for q in queries for label in sorted(q.relevant) if label in self.row_of]
        x = np.array([self.vector(q.question) for q, _ in pairs])
        y = np.array([row for _, row in pairs])
        matrix = np.mean([fit_adapter(x, y, self.documents, seed=seed) for seed in range(SEEDS)], axis=0)
        return QueryAdapter(matrix=matrix, embedder=self.store.embedder.name, collections=frozenset(COLLECTIONS))

    def featured(self, queries: list, adapters) -> tuple[list[np.ndarray], list[np.ndarray], list[list[str]]]:
        """Per query: its candidates' features (pooled with `adapters[i]`, an adapter or False), 0/1 relevance
        and labels."""
        xs, ys, labels = [], [], []
        with self.store.engine.begin() as conn:            # candidates() sets the product's HNSW width itself
            for query, adapt in zip(queries, adapters):
                found = candidates(conn, self.store, query.question, COLLECTIONS, None, POOL,
                                   _done(self.vector(query.question)), adapt)
                xs.append(features(found.index, found.query, found.positions, found.bm25, found.similarity,
                                   found.coverage))
                labels.append([found.index.labels[p] for p in found.positions])
                ys.append(np.array([label in query.relevant for label in labels[-1]], dtype=float))
        return xs, ys, labels


def fit_all(corpus: Corpus, queries: list, adapt: bool = True):
    """(adapter or None, (mean, scale, weights), candidates, relevant) fitted on `queries`. With `adapt`, the
    re-ranker learns from out-of-fold vectors: each fold's candidates pooled with an adapter fitted on the others."""
    if not adapt:
        xs, ys, _ = corpus.featured(queries, [False] * len(queries))
        return None, fit(xs, ys), sum(map(len, ys)), int(sum(y.sum() for y in ys))
    order = np.random.default_rng(1).permutation(len(queries))
    folds = [order[k::FOLDS].tolist() for k in range(FOLDS)]
    out_of_fold: dict[int, QueryAdapter] = {}
    for fold in folds:
        fitted = corpus.adapter([queries[n] for other in folds if other is not fold for n in other])
        out_of_fold.update({n: fitted for n in fold})
    xs, ys, _ = corpus.featured(queries, [out_of_fold[n] for n in range(len(queries))])
    return corpus.adapter(queries), fit(xs, ys), sum(map(len, ys)), int(sum(y.sum() for y in ys))


def fit_pairwise(xs: list[np.ndarray], ys: list[np.ndarray], l2: float = L2, steps: int = 2000, rate: float = 0.5):
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


def fit_listwise(xs: list[np.ndarray], ys: list[np.ndarray], l2: float = L2, steps: int = 1500, rate: float = 0.5):
    """(mean, scale, weights) minimising the softmax cross-entropy between each query's candidate scores and its
    relevant candidates (ListNet with a linear scorer; each query weighs the same), plus an L2 penalty."""
    every = np.vstack(xs)
    mean, scale = every.mean(0), every.std(0)
    scale = np.where(scale > 0, scale, 1.0)
    lists = [((x - mean) / scale, y / y.sum()) for x, y in zip(xs, ys) if y.sum() > 0]
    weight = np.zeros(every.shape[1])
    for _ in range(steps):
        gradient = np.zeros_like(weight)
        for z, target in lists:
            s = z @ weight
            p = np.exp(s - s.max())
            gradient += z.T @ (p / p.sum() - target)
        weight -= rate * (gradient / len(lists) + l2 * weight)
    return mean, scale, weight


def fit(xs: list[np.ndarray], ys: list[np.ndarray]):
    """(mean, scale, weights): the sum of the pairwise and the listwise solutions, each scaled to unit length.
    Out of fold inside the tuning half (recall@5 / MRR): pairwise 0.665 / 0.630, listwise 0.673 / 0.662, this
    blend 0.683 / 0.643 (bench/README.md, session 9)."""
    mean, scale, pairwise = fit_pairwise(xs, ys)
    _, _, listwise = fit_listwise(xs, ys)
    return mean, scale, pairwise / np.linalg.norm(pairwise) + listwise / np.linalg.norm(listwise)


def toml_text(mean, scale, weight, queries: int, candidates_n: int, positives: int, adapter: QueryAdapter) -> str:
    lines = [f"# Re-ranker weights (carenav_core/retrieval/rank.py), written by bench/fit_ranker.py on {date.today()}.",
             "# Fitted on the TUNING half of data/eval/retrieval_queries.toml only:",
             f"# {queries} queries, {candidates_n} candidates, {positives} relevant;",
             f"# unit-length sum of a pairwise logistic (linear RankNet) and a listwise softmax (ListNet) fit, L2 {L2} each,",
             "# standardised features. Vector features out of fold:",
             f"# each query pooled with a query adapter fitted on the other {FOLDS - 1} of {FOLDS} folds.",
             "# score = sum(weight * (feature - mean) / scale); the held-out half is reported by bench/bench_retrieval.py.",
             f"# adapter sha256: {adapter.digest}", ""]
    for name, m, s, w in zip(FEATURES, mean, scale, weight):
        lines += ["[[feature]]", f'name = "{name}"', f"mean = {m:.6g}", f"scale = {s:.6g}", f"weight = {w:.6g}", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true",
                        help=f"write {RANKER_FILE.relative_to(ROOT)} and {ADAPTER_FILE.relative_to(ROOT)}")
    args = parser.parse_args()
    store = Store(Settings())
    queries = list(fitting_queries())
    adapter, (mean, scale, weight), candidates_n, positives = fit_all(Corpus(store), queries)
    for name, w in zip(FEATURES, weight):
        print(f"{name:16s} {w:+.3f}")
    body = toml_text(mean, scale, weight, len(queries), candidates_n, positives, adapter)
    if args.write:
        RANKER_FILE.write_text(body, encoding="utf-8")
        save_adapter(ADAPTER_FILE, adapter.matrix, adapter.embedder, tuple(adapter.collections),
                     note=f"bench/fit_ranker.py {date.today()}: {len(queries)} tuning queries, {SEEDS} seeds averaged")
        print(f"wrote {RANKER_FILE} and {ADAPTER_FILE}")
    store.close()


if __name__ == "__main__":
    main()
