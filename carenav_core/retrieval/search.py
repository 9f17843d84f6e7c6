"""Retrieval over the chunk store: hybrid (vector + full text, reciprocal rank fusion in one SQL
statement, after pgvector-python `examples/hybrid_search/rrf.py`), code-cited paragraphs, and
exact cosine search for small collections. Failures become warnings and empty results: these
functions never raise into the chat."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text

from carenav_core.codes.detect import detect
from carenav_core.errors import StoreError
from carenav_core.retrieval.store import STORE_ERRORS, Store, check_collection, embedding_dimension

log = logging.getLogger(__name__)

RRF_K = 60          # reciprocal rank fusion constant (Cormack et al. 2009)
POOL = 50           # candidates each ranker hands to the fusion
EF_SEARCH = 200     # pgvector 0.6 filters after the HNSW walk: look wider than the pool
# (vector, keyword) weights of each ranker in the fusion; one-ranker modes are for evaluation.
# Vector 0.5: on data/eval/retrieval_queries.toml, MiniLM alone (recall@5 0.41) trails full text
# (0.48); at equal weights its near-duplicate comment paragraphs crowded out keyword hits (0.50),
# at 0.5 the fusion reaches 0.54 (bench/bench_retrieval.py, full mirror corpus).
WEIGHTS = {"hybrid": (0.5, 1.0), "vector": (1.0, 0.0), "keyword": (0.0, 1.0)}

_COLUMNS = "c.id, c.collection, c.doc_id, c.label, c.heading, c.text, c.codes, c.page, c.published, c.metadata"


@dataclass(frozen=True, kw_only=True)
class Hit:
    """One retrieved chunk with everything needed to cite it."""
    chunk_id: int
    collection: str
    doc_id: str
    label: str
    document_number: str
    rule_id: str
    title: str
    published: str
    heading: str
    page: int | None
    citation: str
    url: str
    text: str
    codes: tuple[str, ...]
    score: float
    kind: str


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    """Hits best first, and warnings the caller can show (database down, index mismatch...)."""
    hits: tuple[Hit, ...] = ()
    warnings: tuple[str, ...] = ()


def _hit(row, score: float) -> Hit:
    meta = row.metadata or {}
    return Hit(chunk_id=row.id, collection=row.collection, doc_id=row.doc_id, label=row.label,
               document_number=meta.get("document_number", row.doc_id), rule_id=meta.get("rule_id", ""),
               title=meta.get("title", ""), published=row.published.isoformat() if row.published else "",
               heading=row.heading, page=row.page, citation=meta.get("citation", ""), url=meta.get("url", ""),
               text=row.text, codes=tuple(row.codes or ()), score=float(score), kind=meta.get("kind", ""))


def _failed(action: str, exc: Exception) -> SearchResult:
    message = f"{action} failed: {exc}" if isinstance(exc, StoreError) else \
        f"{action} failed ({type(exc).__name__}): {str(exc).splitlines()[0] if str(exc) else ''}"
    log.warning(message)
    return SearchResult(warnings=(message,))


def keyword_query(question: str) -> str:
    """An OR tsquery of the question's words (to_tsquery drops English stop words).

    >>> keyword_query("How did CMS value G0557?")
    'how | did | cms | value | g0557'
    """
    return " | ".join(w.lower() for w in re.findall(r"[A-Za-z0-9]+", question))


_HYBRID = text(f"""
WITH semantic AS (
    SELECT id, row_number() OVER (ORDER BY distance) AS rank FROM (
        SELECT id, embedding <=> :qvec AS distance FROM chunks
        WHERE collection = ANY(:collections) AND (CAST(:since AS date) IS NULL OR published >= CAST(:since AS date))
        ORDER BY embedding <=> :qvec LIMIT :pool) nearest
), keyword AS (
    SELECT id, row_number() OVER (ORDER BY code_hit DESC, rank DESC, id) AS rank FROM (
        SELECT id, codes && CAST(:qcodes AS text[]) AS code_hit, ts_rank(tsv, query) AS rank
        FROM chunks, to_tsquery('english', :tsq) query
        WHERE :wk > 0 AND tsv @@ query AND collection = ANY(:collections)
          AND (CAST(:since AS date) IS NULL OR published >= CAST(:since AS date))
        ORDER BY code_hit DESC, rank DESC, id LIMIT :pool) matched
), fused AS (
    SELECT coalesce(s.id, k.id) AS id,
           coalesce(:wv / (:rrf + s.rank), 0.0) + coalesce(:wk / (:rrf + k.rank), 0.0) AS score
    FROM semantic s FULL OUTER JOIN keyword k ON s.id = k.id
)
SELECT {_COLUMNS}, f.score FROM fused f JOIN chunks c ON c.id = f.id
WHERE f.score > 0 ORDER BY f.score DESC, c.id LIMIT :k
""").bindparams(bindparam("qvec", type_=Vector()))


def retrieve(store: Store, question: str, k: int, collections: tuple[str, ...], since: date | None = None,
             mode: Literal["hybrid", "vector", "keyword"] = "hybrid") -> SearchResult:
    """The `k` chunks of `collections` that best answer `question`, published on or after `since`.
    `mode` keeps one ranker only (for evaluation)."""
    weights = WEIGHTS[mode]
    try:
        with store.engine.begin() as conn:
            _check(conn, collections, store.embedder)
            conn.execute(text(f"SET LOCAL hnsw.ef_search = {EF_SEARCH}"))
            rows = conn.execute(_HYBRID, {
                "qvec": store.embedder.embed_query(question), "collections": list(collections),
                "since": since, "pool": max(POOL, k), "tsq": keyword_query(question) or "''",
                "qcodes": list(detect(question).explicit),
                "wv": weights[0], "wk": weights[1], "rrf": RRF_K, "k": k}).all()
        return SearchResult(hits=tuple(_hit(r, r.score) for r in rows))
    except STORE_ERRORS as exc:  # the chat shows the warning instead of failing
        return _failed("rule-text search", exc)


def _check(conn, collections: tuple[str, ...], embedder) -> None:
    """EmbedderMismatchError when the stored vectors come from another embedder."""
    dimension = embedding_dimension(conn)
    if dimension is None:
        raise StoreError("the rule-text index is empty; run `carenav build` (or `carenav index`)")
    for collection in collections:
        check_collection(conn, collection, embedder)


_CODE_CITED = text(f"""
SELECT {_COLUMNS}, wanted.code FROM unnest(CAST(:codes AS text[])) WITH ORDINALITY AS wanted(code, n)
CROSS JOIN LATERAL (
    SELECT * FROM chunks c WHERE c.collection = :collection AND c.codes @> ARRAY[wanted.code]
    ORDER BY c.published DESC NULLS LAST,
             (length(c.text) - length(replace(c.text, wanted.code, ''))) DESC, c.doc_id, c.seq
    LIMIT :per_code) c
ORDER BY wanted.n
""")


def code_cited(store: Store, codes: list[str], per_code: int, collection: str = "rules") -> SearchResult:
    """For each code, the newest chunks whose `codes` contain it (most mentions first), at most
    `per_code` each, without duplicates; score is 0 (not ranked against a question)."""
    if not codes or per_code <= 0:
        return SearchResult()
    try:
        with store.engine.connect() as conn:
            rows = conn.execute(_CODE_CITED, {"codes": [c.upper() for c in codes], "per_code": per_code,
                                              "collection": collection}).all()
    except STORE_ERRORS as exc:
        return _failed("code-cited lookup", exc)
    seen: set[int] = set()
    hits = [_hit(r, 0.0) for r in rows if not (r.id in seen or seen.add(r.id))]
    return SearchResult(hits=tuple(hits))


def merge(retrieved: SearchResult, cited: SearchResult) -> SearchResult:
    """Retrieved hits in their rank order, then code-cited hits not already among them; warnings of both."""
    ids = {h.chunk_id for h in retrieved.hits}
    extra = [h for h in cited.hits if h.chunk_id not in ids and not ids.add(h.chunk_id)]
    return SearchResult(hits=retrieved.hits + tuple(extra),
                        warnings=tuple(dict.fromkeys(retrieved.warnings + cited.warnings)))


_EXACT = text(f"""
SELECT {_COLUMNS}, 1 - (c.embedding <=> :qvec) AS score FROM chunks c
WHERE c.collection = :collection AND (CAST(:doc_id AS text) IS NULL OR c.doc_id = CAST(:doc_id AS text))
ORDER BY c.embedding <=> :qvec, c.id LIMIT :k
""").bindparams(bindparam("qvec", type_=Vector()))


def exact_search(store: Store, collection: str, query: str, k: int, doc_id: str | None = None) -> SearchResult:
    """Exact cosine search over one collection (optionally one doc_id); score = cosine similarity.
    Index scans are turned off so the filter never starves the HNSW walk."""
    try:
        with store.engine.begin() as conn:
            _check(conn, (collection,), store.embedder)
            conn.execute(text("SET LOCAL enable_indexscan = off"))
            rows = conn.execute(_EXACT, {"qvec": store.embedder.embed_query(query), "collection": collection,
                                         "doc_id": doc_id, "k": k}).all()
        return SearchResult(hits=tuple(_hit(r, r.score) for r in rows))
    except STORE_ERRORS as exc:
        return _failed(f"exact search of {collection!r}", exc)
