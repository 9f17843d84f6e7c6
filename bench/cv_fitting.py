"""Which queries to fit on, decided inside the TUNING half (the held-out half is never read here).

The tuning half of data/eval/retrieval_queries.toml is cut in five folds; for each fold, the query adapter and the
re-ranker are fitted on the other four (with or without the fitting-only data/eval/retrieval_training.toml) and
recall@5 / MRR are measured on the fold through the product's own candidates, features and duplicate removal.
Within a fold the re-ranker's training features use that fold's adapter in-sample (both variants alike), so the
figures sit below bench_retrieval.py's; compare the variants with each other.

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

from fit_ranker import _DOCUMENTS, COLLECTIONS, SEEDS, _done, fit  # noqa: E402

from carenav_core.retrieval.adapter import QueryAdapter, fit_adapter  # noqa: E402
from carenav_core.retrieval.dedup import drop_near_duplicates, duplicate_groups  # noqa: E402
from carenav_core.retrieval.labelled import TRAINING_FILE, load_labelled, recall_at, reciprocal_rank  # noqa: E402
from carenav_core.retrieval.rank import features  # noqa: E402
from carenav_core.retrieval.search import POOL, candidates  # noqa: E402
from carenav_core.retrieval.store import Store  # noqa: E402
from carenav_core.settings import Settings  # noqa: E402

FOLDS = 5


def main() -> None:
    store = Store(Settings())
    tuning = [q for q in load_labelled() if q.split == "tuning" and not q.negative]
    extra = [q for q in load_labelled(TRAINING_FILE) if not q.negative]
    with store.engine.connect() as conn:
        rows = conn.execute(_DOCUMENTS).all()
        texts = dict(conn.execute(text("SELECT label, text FROM chunks WHERE collection = 'rules'")).all())
    row_of = {r.label: n for n, r in enumerate(rows)}
    documents = np.array([np.asarray(r.embedding, dtype=np.float32) for r in rows])
    vector = {q.question: store.embedder.embed_query(q.question) for q in tuning + extra}

    def adapter(queries) -> QueryAdapter:
        pairs = [(q, row_of[label]) for q in queries for label in sorted(q.relevant) if label in row_of]
        x, y = np.array([vector[q.question] for q, _ in pairs]), np.array([r for _, r in pairs])
        matrix = np.mean([fit_adapter(x, y, documents, seed=s) for s in range(SEEDS)], axis=0)
        return QueryAdapter(matrix=matrix, embedder=store.embedder.name, collections=frozenset(COLLECTIONS))

    def featured(queries, fitted: QueryAdapter):
        out = []
        with store.engine.begin() as conn:
            for q in queries:
                found = candidates(conn, store, q.question, COLLECTIONS, None, POOL, _done(vector[q.question]), fitted)
                labels = [found.index.labels[p] for p in found.positions]
                out.append((features(found.index, found.query, found.positions, found.bm25, found.similarity,
                                     found.coverage), np.array([label in q.relevant for label in labels], float), labels))
        return out

    def measured(model, data, queries) -> list[tuple[float, float]]:
        mean, scale, weight = model
        out = []
        for (x, _, labels), q in zip(data, queries):
            order = np.argsort(-(((x - mean) / scale) @ weight), kind="stable")
            ranked = drop_near_duplicates([labels[i] for i in order][:40], lambda label: texts[label])[:10]
            groups = duplicate_groups({label: texts.get(label, label) for label in q.relevant})
            out.append((recall_at(ranked, groups, 5), reciprocal_rank(ranked, groups)))
        return out

    order = np.random.default_rng(7).permutation(len(tuning))
    folds = [[tuning[i] for i in order[k::FOLDS]] for k in range(FOLDS)]
    names = {"tuning": "adapter and re-ranker fitted on the tuning folds only",
             "adapter": "adapter + training file, re-ranker on the tuning folds",
             "both": "adapter and re-ranker + training file (the product)"}
    results: dict[str, list] = {name: [] for name in names}
    for k, held in enumerate(folds):
        train = [q for j, fold in enumerate(folds) if j != k for q in fold]
        plain, more = adapter(train), adapter(train + extra)
        train_plain, train_more = featured(train, plain), featured(train, more)
        fitted = {"tuning": (fit(*zip(*[(x, y) for x, y, _ in train_plain])), featured(held, plain)),
                  "adapter": (fit(*zip(*[(x, y) for x, y, _ in train_more])), None),
                  "both": (fit(*zip(*[(x, y) for x, y, _ in train_more + featured(extra, more)])), None)}
        held_more = featured(held, more)
        for name, (model, data) in fitted.items():
            results[name] += measured(model, data or held_more, held)
        print(f"fold {k + 1}/{FOLDS}: " + ", ".join(f"{n} {statistics.mean(r for r, _ in results[n]):.3f}"
                                                   for n in names), flush=True)
    print(f"{len(tuning)} tuning queries in {FOLDS} folds, {len(extra)} fitting-only queries")
    for name, label in names.items():
        print(f"{label:58s} recall@5 {statistics.mean(r for r, _ in results[name]):.3f}  "
              f"MRR {statistics.mean(m for _, m in results[name]):.3f}")
    store.close()


if __name__ == "__main__":
    main()
