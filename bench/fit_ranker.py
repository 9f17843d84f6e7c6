"""Fit the re-ranker's weights (data/retrieval_ranker.toml) on the TUNING half of the labelled queries.

For every positive tuning query, the product's own candidate pools and features (carenav_core.retrieval.
rank) are computed on the built index; a candidate is positive when its label is one of the query's
relevant labels. Each feature is standardised (mean, scale over all candidates) and an L2-regularised
logistic regression, positives weighted to balance the classes, gives one weight per feature. The held-out
half is never read here; bench/bench_retrieval.py reports it.

    CARENAV_MIRROR=../shared/data CARENAV_DATA_DIR=<a full build> python bench/fit_ranker.py [--write]
"""
from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from carenav_core.retrieval.labelled import load_labelled  # noqa: E402
from carenav_core.retrieval.rank import FEATURES, RANKER_FILE, features  # noqa: E402
from carenav_core.retrieval.search import POOL, candidates  # noqa: E402
from carenav_core.retrieval.store import Store  # noqa: E402
from carenav_core.settings import Settings  # noqa: E402

L2 = 0.01          # ridge on the standardised weights; 0.001-0.03 gave the same tuning recall@5 (+-0.01)


def training_data(store: Store) -> tuple[np.ndarray, np.ndarray, int]:
    """(features, 0/1 relevance, queries) over the candidates of every positive tuning query."""
    from sqlalchemy import text
    xs, ys, used = [], [], 0
    with store.engine.begin() as conn:
        conn.execute(text("SET LOCAL hnsw.ef_search = 200"))
        for query in load_labelled():
            if query.split != "tuning" or query.negative:
                continue
            found = candidates(conn, store, query.question, ("rules",), None, POOL)
            xs.append(features(found.index, found.query, found.positions, found.bm25, found.similarity, found.coverage))
            ys.append(np.array([found.index.labels[p] in query.relevant for p in found.positions], dtype=float))
            used += 1
    return np.vstack(xs), np.concatenate(ys), used


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 3000, rate: float = 0.1):
    """(mean, scale, weights) of a class-balanced L2 logistic regression by gradient descent."""
    mean, scale = x.mean(0), x.std(0)
    scale = np.where(scale > 0, scale, 1.0)
    z = (x - mean) / scale
    sample = np.where(y > 0, (len(y) - y.sum()) / max(y.sum(), 1.0), 1.0)
    sample /= sample.mean()
    weight, bias = np.zeros(z.shape[1]), 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(z @ weight + bias)))
        weight -= rate * (z.T @ ((p - y) * sample) / len(y) + l2 * weight)
        bias -= rate * float(((p - y) * sample).mean())
    return mean, scale, weight


def toml_text(mean, scale, weight, queries: int, candidates_n: int, positives: int) -> str:
    lines = [f"# Re-ranker weights (carenav_core/retrieval/rank.py), written by bench/fit_ranker.py on {date.today()}.",
             f"# Fitted on the TUNING half of data/eval/retrieval_queries.toml only: {queries} queries, {candidates_n}",
             f"# candidates, {positives} relevant; class-balanced logistic regression, L2 {L2}, standardised features.",
             "# score = sum(weight * (feature - mean) / scale); the held-out half is reported by bench/bench_retrieval.py.", ""]
    for name, m, s, w in zip(FEATURES, mean, scale, weight):
        lines += ["[[feature]]", f'name = "{name}"', f"mean = {m:.6g}", f"scale = {s:.6g}", f"weight = {w:.6g}", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"write {RANKER_FILE.relative_to(ROOT)}")
    args = parser.parse_args()
    store = Store(Settings())
    x, y, queries = training_data(store)
    mean, scale, weight = fit(x, y)
    for name, w in zip(FEATURES, weight):
        print(f"{name:16s} {w:+.3f}")
    body = toml_text(mean, scale, weight, queries, len(y), int(y.sum()))
    if args.write:
        RANKER_FILE.write_text(body, encoding="utf-8")
        print(f"wrote {RANKER_FILE}")
    store.close()


if __name__ == "__main__":
    main()
