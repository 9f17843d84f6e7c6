"""A linear adapter on the question's embedding (issue 12): the vector search and the re-ranker's vector
features use `q + q @ A` (normalised) instead of the embedder's `q`, where `A` (384 x 384) is fitted by
bench/fit_ranker.py on the TUNING half of the labelled queries: each tuning question should be nearer its
relevant paragraphs than every other paragraph of the corpus (a softmax over the whole corpus, temperature
0.05), with an L2 penalty that keeps `A` near zero (the adapter near the identity).

Why the question side only: paragraphs keep the embedder's own vectors, so the index, its HNSW graph and
its build are unchanged; the adapter costs one 384 x 384 product a question (~0.02 ms). It belongs to the
embedder and collections it was fitted for (recorded in the file) and is used for nothing else: another
embedder (Ollama) or the screener's program corpus gets the embedder's vector unchanged.

Measured (bench/README.md, "rule-text ranking"): out of fold inside the tuning half (bench/cv_fitting.py), recall@5
0.648 without the adapter, 0.665 with it; held-out half, product ranking 0.758 (session 5, fitted without it) ->
0.784 (0.787 with session 9's blended re-ranker fit), vector-only 0.457 -> 0.476. A missing or damaged file is
logged and questions go unadapted (the weights, fitted with it, then give 0.740; 0.761 with the session 9 fit).
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from carenav_core.errors import ConfigError
from carenav_core.settings import PROJECT_ROOT

log = logging.getLogger(__name__)

ADAPTER_FILE = PROJECT_ROOT / "data" / "retrieval_adapter.npz"
# Fitting settings, chosen on the tuning half out of fold (bench/README.md): 20 passes of Adam at 0.001, L2 0.1.
EPOCHS, RATE, L2, TEMPERATURE, BATCH = 20, 1e-3, 0.1, 0.05, 64


@dataclass(frozen=True, eq=False, kw_only=True)
class QueryAdapter:
    """`matrix` (d x d float32) for questions embedded by `embedder` and searched in `collections`."""
    matrix: np.ndarray
    embedder: str
    collections: frozenset[str]

    def apply(self, vector: np.ndarray) -> np.ndarray:
        """The adapted unit vector of one embedded question."""
        q = np.asarray(vector, dtype=np.float32)
        adapted = q + q @ self.matrix
        norm = float(np.linalg.norm(adapted))
        return (adapted / norm).astype(np.float32) if norm > 0 else q

    @property
    def digest(self) -> str:
        """sha256 of the matrix (data/retrieval_ranker.toml records the adapter its weights were fitted with)."""
        return hashlib.sha256(np.ascontiguousarray(self.matrix, dtype=np.float32).tobytes()).hexdigest()

    def fits(self, embedder, collections: tuple[str, ...]) -> bool:
        """True when this adapter was fitted for this embedder (name and dimension) and these collections."""
        return (getattr(embedder, "name", None) == self.embedder
                and getattr(embedder, "dimension", None) == len(self.matrix)
                and bool(collections) and set(collections) <= self.collections)


@lru_cache(maxsize=4)
def load_adapter(path: Path = ADAPTER_FILE) -> QueryAdapter | None:
    """The fitted adapter, or None when the file does not exist (questions are then searched unadapted).
    A file that exists but is not an adapter raises ConfigError naming the file and the problem."""
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            matrix = np.array(data["matrix"], dtype=np.float32)
            embedder = str(data["embedder"])
            collections = frozenset(str(c) for c in np.atleast_1d(data["collections"]))
    except Exception as exc:  # a damaged zip fails in many ways: BadZipFile, EOFError, zlib.error, ValueError...
        raise ConfigError(f"{path}: expected an .npz with matrix (d x d), embedder and collections: "
                          f"{type(exc).__name__}: {exc}") from exc
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or not np.isfinite(matrix).all():
        raise ConfigError(f"{path}: matrix must be square and finite, got shape {matrix.shape}")
    if not embedder or not collections:
        raise ConfigError(f"{path}: embedder and collections must name what the adapter was fitted for")
    matrix.setflags(write=False)
    return QueryAdapter(matrix=matrix, embedder=embedder, collections=collections)


@lru_cache(maxsize=4)
def _shipped(path: Path) -> QueryAdapter | None:
    """load_adapter, except that a missing or damaged file is logged (once) and questions go unadapted: the
    search still works, with the weaker ranking bench/README.md measures ("no query adapter")."""
    try:
        adapter = load_adapter(path)
    except ConfigError as exc:
        log.error("%s; rule-text questions are searched without the query adapter", exc)
        return None
    if adapter is None:
        log.warning("%s is missing; rule-text questions are searched without the query adapter "
                    "(bench/fit_ranker.py --write makes it)", path)
    return adapter


def adapter_for(embedder, collections: tuple[str, ...], path: Path = ADAPTER_FILE) -> QueryAdapter | None:
    """The shipped adapter when it fits this embedder and these collections, else None."""
    adapter = _shipped(path)
    return adapter if adapter is not None and adapter.fits(embedder, collections) else None


def save_adapter(path: Path, matrix: np.ndarray, embedder: str, collections: tuple[str, ...], note: str = "") -> None:
    """Write an adapter file (bench/fit_ranker.py --write); `note` says how it was fitted."""
    np.savez_compressed(path, matrix=np.asarray(matrix, dtype=np.float32), embedder=np.array(embedder),
                        collections=np.array(sorted(collections)), note=np.array(note))
    load_adapter.cache_clear()
    _shipped.cache_clear()


def fit_adapter(questions: np.ndarray, targets: np.ndarray, documents: np.ndarray, *, epochs: int = EPOCHS,
                rate: float = RATE, l2: float = L2, temperature: float = TEMPERATURE, batch: int = BATCH,
                seed: int = 0) -> np.ndarray:
    """The matrix A minimising, over (question vector, relevant document row) pairs, the cross-entropy of the
    relevant row under a softmax of the adapted question's cosine to every document (`documents`: unit rows),
    plus l2/2 |A|^2; mini-batch Adam, deterministic for a seed. `questions[i]` goes with `targets[i]`."""
    questions = np.asarray(questions, dtype=np.float32)
    documents = np.asarray(documents, dtype=np.float32)
    targets = np.asarray(targets, dtype=int)
    if len(questions) != len(targets) or not len(questions):
        raise ValueError(f"need as many targets as questions (got {len(questions)} and {len(targets)}), at least one")
    d = questions.shape[1]
    matrix, first, second = (np.zeros((d, d), np.float32) for _ in range(3))
    rng, step = np.random.default_rng(seed), 0
    for _ in range(epochs):
        order = rng.permutation(len(questions))
        for start in range(0, len(order), batch):
            rows = order[start:start + batch]
            q = questions[rows]
            adapted = q + q @ matrix
            norms = np.linalg.norm(adapted, axis=1, keepdims=True)
            unit = adapted / norms
            logits = unit @ documents.T / temperature
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            p[np.arange(len(rows)), targets[rows]] -= 1          # d loss / d logits
            d_unit = (p @ documents) / temperature / len(rows)
            d_adapted = (d_unit - unit * (d_unit * unit).sum(axis=1, keepdims=True)) / norms
            gradient = q.T @ d_adapted + l2 * matrix
            step += 1
            first = 0.9 * first + 0.1 * gradient
            second = 0.999 * second + 0.001 * gradient * gradient
            matrix -= rate * (first / (1 - 0.9 ** step)) / (np.sqrt(second / (1 - 0.999 ** step)) + 1e-8)
    return matrix
