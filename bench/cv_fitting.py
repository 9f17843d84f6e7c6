"""Fitting choices decided inside the TUNING half (the held-out half is never read here).

The tuning half of data/eval/retrieval_queries.toml is cut in five folds; for each fold, bench/fit_ranker.py's
whole fit (the query adapter, and the re-ranker on out-of-fold adapted vectors) runs on the other four, and
recall@5 / MRR are measured on the fold through the product's own candidates, features and duplicate removal.
Variants: no adapter; the adapter; the adapter with the fitting-only data/eval/retrieval_training.toml added
(without its queries that point at a paragraph the evaluated fold names, as that file is kept apart from the
held-out half).

    CARENAV_MIRROR=../shared/data CARENAV_DATA_DIR=<a full build> python bench/cv_fitting.py
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np
from sqlalchemy import text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fit_ranker import Corpus, fit_all  # noqa: E402

from carenav_core.retrieval.dedup import drop_near_duplicates, duplicate_groups  # noqa: E402
from carenav_core.retrieval.labelled import TRAINING_FILE, load_labelled, recall_at, reciprocal_rank  # noqa: E402
from carenav_core.retrieval.store import Store  # noqa: E402
from carenav_core.settings import Settings  # noqa: E402

FOLDS = 5
VARIANTS = {"none": "no adapter (re-ranker only)", "adapter": "adapter + re-ranker (the product's fit)",
            "extra": "adapter + re-ranker, fitting-only queries added"}


def measured(corpus: Corpus, texts: dict[str, str], fitted, queries: list) -> list[tuple[float, float]]:
    """(recall@5, reciprocal rank) of each query under a fitted (adapter, ranker)."""
    adapter, (mean, scale, weight), _, _ = fitted
    xs, _, labels = corpus.featured(queries, [adapter or False] * len(queries))
    out = []
    for x, found, query in zip(xs, labels, queries):
        order = np.argsort(-(((x - mean) / scale) @ weight), kind="stable")
        ranked = drop_near_duplicates([found[i] for i in order][:40], lambda label: texts[label])[:10]
        groups = duplicate_groups({label: texts.get(label, label) for label in query.relevant})
        out.append((recall_at(ranked, groups, 5), reciprocal_rank(ranked, groups)))
    return out


def main() -> None:
    store = Store(Settings())
    corpus = Corpus(store)
    with store.engine.connect() as conn:
        texts = dict(conn.execute(text("SELECT label, text FROM chunks WHERE collection = 'rules'")).all())
    tuning = [q for q in load_labelled() if q.split == "tuning" and not q.negative]
    extra = [q for q in load_labelled(TRAINING_FILE) if not q.negative] if TRAINING_FILE.exists() else []
    order = np.random.default_rng(7).permutation(len(tuning))
    folds = [[tuning[i] for i in order[k::FOLDS]] for k in range(FOLDS)]
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
    for k, held in enumerate(folds):
        train = [q for j, fold in enumerate(folds) if j != k for q in fold]
        named = {label for q in held for label in q.relevant}
        extra_k = [q for q in extra if not named & set(q.relevant)]
        for name, fitted in (("none", fit_all(corpus, train, adapt=False)), ("adapter", fit_all(corpus, train)),
                             ("extra", fit_all(corpus, train + extra_k))):
            results[name] += measured(corpus, texts, fitted, held)
        print(f"fold {k + 1}/{FOLDS}: " + ", ".join(
            f"{name} {statistics.mean(r for r, _ in results[name]):.3f}" for name in VARIANTS), flush=True)
    print(f"{len(tuning)} tuning queries in {FOLDS} folds, {len(extra)} fitting-only queries")
    for name, label in VARIANTS.items():
        print(f"{label:50s} recall@5 {statistics.mean(r for r, _ in results[name]):.3f}  "
              f"MRR {statistics.mean(m for _, m in results[name]):.3f}")
    store.close()


if __name__ == "__main__":
    main()
