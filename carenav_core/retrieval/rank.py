"""The hybrid ranker's two halves that live in memory: BM25 over PostgreSQL's own lexemes, and a linear
re-ranker over features of each candidate paragraph (issue 12).

Why in memory: PostgreSQL's `ts_rank` has no inverse document frequency and ranks every matching row
(~40 ms a question on the 5,196-paragraph corpus); BM25 over a per-process snapshot of the collection's
lexemes takes about a millisecond and ranks better (bench/bench_retrieval.py). The snapshot holds lexeme
counts and a few facts per paragraph, not text or vectors (pgvector still finds the nearest paragraphs),
and is rebuilt when the `documents` table says the collection changed (a document indexed in the
background, a re-index).

The re-ranker scores each candidate (the keyword and vector pools together) with a weighted sum of
standardised features: how well its words and its meaning match, how well the best paragraph of its
section matches (an answer's paragraphs sit together under one heading), whether CMS states a decision
in it ("After consideration of public comments, we are finalizing..."), who speaks, whether it names the
question's codes or belongs to the rule the question names. The weights come from
data/retrieval_ranker.toml, fitted by bench/fit_ranker.py on the tuning half of the labelled queries only.
"""
from __future__ import annotations

import math
import threading
import tomllib
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import Connection, text

from carenav_core.errors import ConfigError
from carenav_core.retrieval.chunk import RESPONSE
from carenav_core.retrieval.plan import QueryPlan
from carenav_core.settings import PROJECT_ROOT

# BM25 (Robertson & Zaragoza 2009), the textbook values. With the re-ranker, tuning-half recall@5: k1 1.2 b 0.75
# 0.670, k1 2.0 b 0.9 0.677, k1 1.2 b 0.9 0.670, k1 0.9 b 0.75 0.663: all within one query (0.01), kept.
K1, B = 1.2, 0.75
RANKER_FILE = PROJECT_ROOT / "data" / "retrieval_ranker.toml"
# A paragraph where CMS states its decision (a PostgreSQL regular expression, matched case-insensitively).
DECISION = r"after consideration of (the )?public comments|we are finaliz"

FEATURES = ("bm25", "vector", "section_bm25", "section_vector", "neighbour_bm25", "decision", "response",
            "names_codes", "misses_codes", "named_rule", "log_words", "summary", "coverage", "section_coverage")
"""What the re-ranker reads per candidate, in the order of the weights in data/retrieval_ranker.toml:
bm25 (over the candidates' best), vector (cosine minus the best candidate's), the best of each within the
candidate's section, the better BM25 of the paragraphs just before and after it in the same section,
a decision sentence, a CMS response, names a code the question names / the question names codes and
this paragraph none of them, belongs to the rule the question names, log(1 + words), under a summary
heading, the share of the question's words the paragraph contains, and the best such share in its section."""


# Per paragraph: the facts the features read, and each lexeme of the stored tsvector with its occurrences in
# the paragraph itself (weight A; heading and context are weight B and left out: BM25 over them lost recall
# on the tuning half). PostgreSQL counts (~0.6 s for 5,196 paragraphs; parsing tsvector text in Python took 2 s).
_SNAPSHOT = text("""SELECT c.id, c.label, c.doc_id, c.seq, c.heading, c.role, c.pair_seq, c.codes, c.published,
    c.metadata->>'rule_year' AS rule_year, c.metadata->>'kind' AS kind, (c.text ~* :decision) AS decision,
    array_length(regexp_split_to_array(trim(c.text), '\\s+'), 1) AS words, l.lexemes, l.counts
FROM chunks c CROSS JOIN LATERAL (
    SELECT array_agg(u.lexeme) AS lexemes, array_agg(cardinality(array_positions(u.weights, 'A'))) AS counts
    FROM unnest(c.tsv) u) l
WHERE c.collection = ANY(:collections) ORDER BY c.id""")


class LexicalIndex:
    """BM25 postings and per-paragraph facts of a set of collections, as of one `documents` version."""

    def __init__(self, rows, version) -> None:
        self.version = version
        self.ids = np.array([r.id for r in rows], dtype=np.int64)
        self.row_of = {int(i): n for n, i in enumerate(self.ids)}
        self.n = len(rows)
        postings: dict[str, tuple[list[int], list[int]]] = {}
        lengths = np.zeros(self.n)
        for n, row in enumerate(rows):
            for lexeme, count in zip(row.lexemes or (), row.counts or ()):
                if not count:
                    continue
                docs, tfs = postings.setdefault(lexeme, ([], []))
                docs.append(n)
                tfs.append(count)
                lengths[n] += count
        self.postings = {w: (np.array(d), np.array(t, dtype=float)) for w, (d, t) in postings.items()}
        self.norm = K1 * (1 - B + B * lengths / (lengths.mean() if self.n else 1.0))
        sections = {}
        self.section = np.array([sections.setdefault((r.doc_id, r.heading), len(sections)) for r in rows])
        position = {(r.doc_id, r.seq): n for n, r in enumerate(rows)}
        self.labels = [r.label for r in rows]
        self.partner = np.array([position.get((r.doc_id, r.pair_seq), -1) if r.pair_seq is not None else -1
                                 for r in rows])      # the comment a response answers, or the response to a comment
        self.before = np.array([position.get((r.doc_id, r.seq - 1), -1) for r in rows])
        self.after = np.array([position.get((r.doc_id, r.seq + 1), -1) for r in rows])
        self.published = [r.published for r in rows]
        self.codes = [frozenset(r.codes or ()) for r in rows]
        self.rule = [(r.rule_year or "", r.kind or "") for r in rows]
        self.decision = np.array([bool(r.decision) for r in rows], dtype=float)
        self.response = np.array([r.role == RESPONSE for r in rows], dtype=float)
        self.log_words = np.log1p(np.array([r.words or 0 for r in rows], dtype=float))
        self.summary = np.array(["summary" in (r.heading or "").lower() for r in rows], dtype=float)

    def match(self, lexemes) -> tuple[np.ndarray, np.ndarray]:
        """(BM25, share of the lexemes it contains) of every paragraph for the question's lexemes."""
        scores, found_in = np.zeros(self.n), np.zeros(self.n)
        wanted = list(dict.fromkeys(lexemes))
        for lexeme in wanted:
            found = self.postings.get(lexeme)
            if found is None:
                continue
            docs, tfs = found
            idf = math.log(1 + (self.n - len(docs) + 0.5) / (len(docs) + 0.5))
            scores[docs] += idf * tfs * (K1 + 1) / (tfs + self.norm[docs])
            found_in[docs] += 1
        return scores, found_in / max(1, len(wanted))

    def keyword_pool(self, lexemes, pool: int, since: date | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(chunk ids, BM25, share of question words) of the `pool` best paragraphs with any question word,
        published on or after `since`; BM25 and the share cover the whole index."""
        scores, coverage = self.match(lexemes)
        if since is not None:
            scores[[p is None or p < since for p in self.published]] = 0.0
        best = np.argsort(-scores, kind="stable")[:pool]
        best = best[scores[best] > 0]
        return self.ids[best], scores, coverage


_lock = threading.Lock()


def lexical_index(conn: Connection, store, collections: tuple[str, ...], version: tuple) -> LexicalIndex:
    """The store's snapshot for `collections`, rebuilt when their `version` (count, paragraphs and newest
    `indexed_at` of their `documents` rows) changed."""
    cache = store.__dict__.setdefault("_lexical", {})
    with _lock:
        index = cache.get(collections)
        if index is None or index.version != version:
            rows = conn.execute(_SNAPSHOT, {"collections": list(collections), "decision": DECISION}).all()
            index = cache[collections] = LexicalIndex(rows, version)
    return index


@dataclass(frozen=True, kw_only=True)
class Ranker:
    """A linear re-ranker: score = sum(weight * (feature - mean) / scale)."""
    mean: np.ndarray
    scale: np.ndarray
    weight: np.ndarray

    def scores(self, features: np.ndarray, off: tuple[str, ...] = ()) -> np.ndarray:
        weight = self.weight * np.array([name not in off for name in FEATURES])
        return ((features - self.mean) / self.scale) @ weight


class RankerFeature(BaseModel):
    """One `[[feature]]` of data/retrieval_ranker.toml."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(description="One of FEATURES.")
    mean: float = Field(description="Mean of the feature over the tuning candidates.")
    scale: float = Field(gt=0, description="Standard deviation over the tuning candidates.")
    weight: float = Field(description="Fitted weight of the standardised feature.")


@lru_cache(maxsize=4)
def load_ranker(path: Path = RANKER_FILE) -> Ranker:
    """The fitted weights: exactly one [[feature]] per FEATURES name; ConfigError names the file and the problem."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))["feature"]
        found = [RankerFeature.model_validate(entry) for entry in raw]
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValidationError) as exc:
        raise ConfigError(f"{path}: expected [[feature]] tables (name, mean, scale > 0, weight): {exc}") from exc
    names = [f.name for f in found]
    if sorted(names) != sorted(FEATURES):
        missing, unknown = set(FEATURES) - set(names), set(names) - set(FEATURES)
        repeated = {n for n in names if names.count(n) > 1}
        raise ConfigError(f"{path}: features must be exactly {', '.join(FEATURES)}; missing {sorted(missing)}, "
                          f"unknown {sorted(unknown)}, repeated {sorted(repeated)}")
    by_name = {f.name: f for f in found}
    return Ranker(mean=np.array([by_name[n].mean for n in FEATURES]),
                  scale=np.array([by_name[n].scale for n in FEATURES]),
                  weight=np.array([by_name[n].weight for n in FEATURES]))


def features(index: LexicalIndex, query: QueryPlan, rows: list[int], bm25: np.ndarray,
             similarity: np.ndarray, coverage: np.ndarray) -> np.ndarray:
    """The FEATURES of the candidates `rows` (positions in `index`), one row each. `bm25` and `coverage`
    cover the whole index; `similarity` is each candidate's cosine to the question."""
    if not rows:
        return np.zeros((0, len(FEATURES)))
    rows_a = np.array(rows, dtype=int)
    bm = bm25[rows_a]
    bm = bm / bm.max() if bm.max() > 0 else bm
    vector = similarity - similarity.max()
    _, section = np.unique(index.section[rows_a], return_inverse=True)
    at = np.full(index.n, -1)
    at[rows_a] = np.arange(len(rows))
    neighbour = np.zeros(len(rows))
    for beside in (index.before[rows_a], index.after[rows_a]):     # -1: none; else shown only if a candidate
        shown = np.where(beside >= 0, at[beside], -1)
        same = (shown >= 0) & (index.section[np.maximum(beside, 0)] == index.section[rows_a])
        neighbour = np.maximum(neighbour, np.where(same, bm[np.maximum(shown, 0)], 0.0))
    wanted = set(query.codes)
    names = np.array([bool(wanted & index.codes[r]) for r in rows], dtype=float)
    misses = (1.0 - names) if wanted else np.zeros(len(rows))
    year, kind = str(query.rule_year or ""), query.rule_kind or ""
    named = np.array([bool(year or kind) and (not year or index.rule[r][0] == year)
                      and (not kind or index.rule[r][1] == kind) for r in rows], dtype=float)
    share = coverage[rows_a]
    return np.column_stack([bm, vector, _section_max(bm, section), _section_max(vector, section), neighbour,
                            index.decision[rows_a], index.response[rows_a], names, misses, named,
                            index.log_words[rows_a], index.summary[rows_a], share, _section_max(share, section)])


def _section_max(values: np.ndarray, section: np.ndarray) -> np.ndarray:
    """Each candidate's best value among the candidates of its section (`section`: 0..n-1 per candidate).

    >>> _section_max(np.array([0.2, 0.9, 0.4]), np.array([0, 0, 1])).tolist()
    [0.9, 0.9, 0.4]
    """
    best = np.full(section.max() + 1, -np.inf)
    np.maximum.at(best, section, values)
    return best[section]
