"""Retrieval over the chunk store: hybrid (pgvector's nearest paragraphs and BM25's best, re-ranked by
rank.py), code-cited paragraphs, and exact cosine search for small collections. Failures become warnings
and empty results: these functions never raise into the chat."""
from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Literal

import numpy as np
from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text

from carenav_core.errors import StoreError
from carenav_core.retrieval.adapter import QueryAdapter, adapter_for
from carenav_core.retrieval.chunk import COMMENT, RESPONSE
from carenav_core.retrieval.dedup import drop_near_duplicates
from carenav_core.retrieval.plan import QueryPlan, plan
from carenav_core.retrieval.rank import DECISION, LexicalIndex, features, lexical_index, load_ranker
from carenav_core.retrieval.store import STORE_ERRORS, Store, check_built, check_collection, embedding_dimension

log = logging.getLogger(__name__)

RRF_K = 60          # reciprocal rank fusion constant (Cormack et al. 2009), for the fusion-only baseline
POOL = 50           # candidates each ranker (BM25, vector) hands to the re-ranker
# The re-ranker's score of a `rules` question's best paragraph below which no paragraph matches it closely. Chosen
# on the TUNING half of data/eval/retrieval_queries.toml (2026-12-02, bench/bench_retrieval.py --weak-match): its 99
# positives' best scores start at 4.00 (in sample: the query adapter was fitted on them) and its 8 negatives' reach
# 3.75; 3.5 leaves a margin for unseen questions. Held-out half, read once after the choice: 0 of 69 positives
# below it, 4 of 8 negatives. Refit with the re-ranker's weights (the score's scale is theirs). Re-read with the
# fine-tuned embedder's weights (session 23): tuning positives' best scores start at 3.78, negatives reach 4.42 (6 of
# 8 below 3.5); held-out, read after, 0 of 69 positives and 4 of 8 negatives below: the line stays.
WEAK_MATCH = 3.5
EF_SEARCH = 64      # pgvector 0.6 filters after the HNSW walk: look wider than the pool


@dataclass(frozen=True, kw_only=True)
class Ranking:
    """What the hybrid ranking does with the keyword and vector pools (issue 12). bench/bench_retrieval.py
    switches each part off in turn and reports the held-out half of data/eval/retrieval_queries.toml."""
    learned: bool = True          # re-rank with data/retrieval_ranker.toml; False: reciprocal rank fusion
    off: tuple[str, ...] = ()     # re-ranker features left out (their weight set to 0), for ablations
    dedup: bool = True            # drop near-duplicates of a better-ranked hit
    pair: bool = False            # follow a comment summary with CMS's response to it
    adapt: bool = True            # the question's embedding through data/retrieval_adapter.npz (adapter.py)


# Pairing is off: with the re-ranker it cost recall@5 on the tuning half (0.639 without, 0.626 with).
RANKING = Ranking()

_COLUMNS = ("c.id, c.collection, c.doc_id, c.seq, c.label, c.heading, c.text, c.codes, c.page, c.published, "
            "c.metadata, c.role, c.pair_seq")


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
    role: str = ""                 # rules: cms_text | cms_response | comment_summary
    seq: int = 0
    pair_seq: int | None = None    # rules: the response to this comment, or the comment a response answers


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    """Hits best first, and warnings the caller can show (database down, index mismatch...)."""
    hits: tuple[Hit, ...] = ()
    warnings: tuple[str, ...] = ()
    weak: bool = False              # rules: the best paragraph scores below WEAK_MATCH (nothing matches closely)
    unknown: tuple[str, ...] = ()   # the question's words no indexed paragraph contains ("IRMAA"), as written


def _hit(row, score: float) -> Hit:
    meta = row.metadata or {}
    return Hit(chunk_id=row.id, collection=row.collection, doc_id=row.doc_id, label=row.label,
               document_number=meta.get("document_number", row.doc_id), rule_id=meta.get("rule_id", ""),
               title=meta.get("title", ""), published=row.published.isoformat() if row.published else "",
               heading=row.heading, page=row.page, citation=meta.get("citation", ""), url=meta.get("url", ""),
               text=row.text, codes=tuple(row.codes or ()), score=float(score), kind=meta.get("kind", ""),
               role=row.role or "", seq=row.seq, pair_seq=row.pair_seq)


def _failed(action: str, exc: Exception) -> SearchResult:
    message = f"{action} failed: {exc}" if isinstance(exc, StoreError) else \
        f"{action} failed ({type(exc).__name__}): {str(exc).splitlines()[0] if str(exc) else ''}"
    log.warning(message)
    return SearchResult(warnings=(message,))


# Everything a question needs before the candidate pools, in one round trip: the HNSW search width for
# this transaction, the vector column's dimension and the embedder each collection was built with (a
# mismatch is refused), the collections' version (is the in-memory snapshot current?), the question's lexemes.
_PREAMBLE = text(f"""SELECT set_config('hnsw.ef_search', '{EF_SEARCH}', true) AS ef_search,
    (SELECT atttypmod FROM pg_attribute WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'
        AND NOT attisdropped) AS dimension,
    (SELECT coalesce(json_agg(json_build_array(name, embedder, dimension)), '[]') FROM collections
        WHERE name = ANY(:collections)) AS built,
    (SELECT json_build_array(count(*), coalesce(sum(chunk_count), 0), max(indexed_at)) FROM documents
        WHERE collection = ANY(:collections)) AS version,
    tsvector_to_array(to_tsvector('english', :q)) AS lexemes""")
# The vector pool (HNSW) and the keyword pool in one round trip: each candidate's cosine similarity.
_CANDIDATE_IDS = text("""
WITH semantic AS (
    SELECT id FROM chunks
    WHERE collection = ANY(:collections) AND (CAST(:since AS date) IS NULL OR published >= CAST(:since AS date))
    ORDER BY embedding <=> :qvec LIMIT :pool
)
SELECT c.id, 1 - (c.embedding <=> :qvec) AS similarity, c.id IN (SELECT id FROM semantic) AS semantic
FROM chunks c WHERE c.id IN (SELECT id FROM semantic UNION ALL SELECT unnest(CAST(:lexical AS bigint[])))
""").bindparams(bindparam("qvec", type_=Vector()))
_ROWS = text(f"SELECT {_COLUMNS} FROM chunks c WHERE c.id = ANY(CAST(:ids AS bigint[]))")
_EMPTY_INDEX = "the rule-text index is empty; run `carenav build` (or `carenav index`)"
_EMBEDDING = ThreadPoolExecutor(max_workers=2, thread_name_prefix="carenav-query-embedding")


@dataclass(frozen=True, kw_only=True)
class Candidates:
    """The pooled candidates of one question: chunk ids, their positions in the lexical index, cosine
    similarities, which came from the vector pool, and BM25 and the share of question words over the whole index."""
    ids: list[int]
    positions: list[int]
    similarity: np.ndarray
    semantic: np.ndarray
    bm25: np.ndarray
    coverage: np.ndarray
    index: LexicalIndex
    query: QueryPlan
    lexemes: tuple[str, ...] = ()   # the question's lexemes (PostgreSQL's english configuration)


@contextmanager
def _one_state(store: Store) -> Iterator:
    """A read transaction whose statements all see one committed state (REPEATABLE READ): a question takes
    several statements (preamble, pools, rows), and a rebuild may commit between them; a reader then sees the
    whole old index or the whole new one, never ids of one with the snapshot of the other."""
    with store.engine.connect() as conn:
        conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            yield conn


def embedding_of(store: Store, question: str) -> Future:
    """The question's embedding, computed in a thread: the model runs while the database works."""
    return _EMBEDDING.submit(store.embedder.embed_query, question)


def _prepared(conn, store: Store, question: str, collections: tuple[str, ...], embedding: Future | None = None):
    """(lexical snapshot, the question's lexemes, its embedding as a future) after one preamble round trip.
    StoreError when the index is empty, EmbedderMismatchError when another embedder built it."""
    embedding = embedding or embedding_of(store, question)
    first = conn.execute(_PREAMBLE, {"collections": list(collections), "q": question}).one()
    if first.dimension is None or first.dimension < 0:
        raise StoreError(_EMPTY_INDEX)
    for collection, built_by, dimension in first.built:
        check_built(collection, built_by, dimension, store.embedder)
    return lexical_index(conn, store, collections, tuple(first.version)), first.lexemes or [], embedding


def _query_vector(store: Store, embedding: Future, collections: tuple[str, ...],
                  adapt: bool | QueryAdapter) -> np.ndarray:
    """The vector the question is searched with: its embedding, through the query adapter when `adapt` is one,
    or is True and the shipped adapter fits this embedder and these collections."""
    vector = embedding.result()
    adapter = adapt if isinstance(adapt, QueryAdapter) else adapter_for(store.embedder, collections) if adapt else None
    return adapter.apply(vector) if adapter is not None else vector


def candidates(conn, store: Store, question: str, collections: tuple[str, ...], since: date | None = None,
               pool: int = POOL, embedding: Future | None = None, adapt: bool | QueryAdapter = True) -> Candidates:
    """The keyword pool (BM25 over the in-memory snapshot) and the vector pool (pgvector HNSW) of a question;
    `adapt`: the query adapter to use (True: the shipped one when it fits, False: none)."""
    index, lexemes, embedding = _prepared(conn, store, question, collections, embedding)
    lexical, bm25, coverage = index.keyword_pool(lexemes, pool, since)
    qvec = _query_vector(store, embedding, collections, adapt)
    found = [r for r in conn.execute(_CANDIDATE_IDS, {
        "qvec": qvec, "collections": list(collections), "since": since, "pool": pool,
        "lexical": [int(i) for i in lexical]}).all() if r.id in index.row_of]
    return Candidates(ids=[r.id for r in found], positions=[index.row_of[r.id] for r in found], bm25=bm25,
                      coverage=coverage, similarity=np.array([float(r.similarity) for r in found]),
                      semantic=np.array([bool(r.semantic) for r in found]), index=index, query=plan(question),
                      lexemes=tuple(lexemes))


def _order(found: Candidates, mode: str, ranking: Ranking) -> list[tuple[int, float]]:
    """(chunk id, score) best first, for one ranker or the hybrid."""
    if not found.ids:
        return []
    bm25 = found.bm25[found.positions]
    if mode == "vector":
        scored = [(i, s) for i, s, v in zip(found.ids, found.similarity, found.semantic) if v]
    elif mode == "keyword":
        scored = [(i, b) for i, b in zip(found.ids, bm25) if b > 0]
    elif ranking.learned:
        scores = load_ranker().scores(features(found.index, found.query, found.positions, found.bm25,
                                               found.similarity, found.coverage), ranking.off)
        scored = list(zip(found.ids, scores))
    else:  # reciprocal rank fusion of the two pools (the baseline the re-ranker is measured against)
        fused = np.zeros(len(found.ids))
        for values, present in ((found.similarity, found.semantic), (bm25, bm25 > 0)):
            ranks = np.argsort(np.argsort(-np.where(present, values, -np.inf), kind="stable"), kind="stable") + 1
            fused += np.where(present, 1.0 / (RRF_K + ranks), 0.0)
        scored = list(zip(found.ids, fused))
    return sorted(((int(i), float(s)) for i, s in scored), key=lambda pair: (-pair[1], pair[0]))


def _best_hits(conn, found: Candidates, ranked: list[tuple[int, float]], k: int, ranking: Ranking) -> list[Hit]:
    """The first `k` ranked chunks as hits (near-duplicates of a better one left out when asked), each
    comment summary followed by CMS's response when pairing. Rows are read 2k at a time (with the responses
    pairing needs)."""
    index, kept, known = found.index, [], {}
    for start in range(0, len(ranked), 2 * k):
        batch = ranked[start:start + 2 * k]
        ids = [i for i, _ in batch]
        if ranking.pair:
            ids += [int(index.ids[p]) for p in (index.partner[index.row_of[i]] for i, _ in batch) if p >= 0]
        rows = {r.id: r for r in conn.execute(_ROWS, {"ids": ids})}
        known.update({(r.doc_id, r.seq): r for r in rows.values()})
        kept += [_hit(rows[i], score) for i, score in batch if i in rows]
        if ranking.dedup:
            kept = drop_near_duplicates(kept, lambda h: h.text, keep=k)
        if len(kept) >= k:
            break
    kept = kept[:k]
    return _with_responses(kept, k, known) if ranking.pair else kept


def retrieve(store: Store, question: str, k: int, collections: tuple[str, ...], since: date | None = None,
             mode: Literal["hybrid", "vector", "keyword"] = "hybrid", ranking: Ranking = RANKING) -> SearchResult:
    """The `k` chunks of `collections` that best answer `question`, published on or after `since`: the BM25
    and vector pools re-ranked (rank.py), near-duplicates of a better hit dropped, a comment summary followed
    by CMS's response. `mode` keeps one ranker only (for evaluation)."""
    try:
        embedding = embedding_of(store, question)        # runs while the connection is checked out
        with _one_state(store) as conn:
            found = candidates(conn, store, question, collections, since, max(POOL, k), embedding, ranking.adapt)
            hits = _best_hits(conn, found, _order(found, mode, ranking), k, ranking)
        weak = collections == ("rules",) and mode == "hybrid" and ranking == RANKING and \
            (not hits or hits[0].score < WEAK_MATCH)
        return SearchResult(hits=tuple(hits), weak=weak, unknown=unknown_words(question, found))
    except STORE_ERRORS as exc:  # the chat shows the warning instead of failing
        return _failed("rule-text search", exc)


def unknown_words(question: str, found: Candidates) -> tuple[str, ...]:
    """The question's words (alphabetic, three letters or more) whose lexeme no indexed paragraph of the searched
    collections contains, as the question writes them: "IRMAA", "brackets" of "What are the IRMAA income brackets?"."""
    missing = [lexeme for lexeme in found.lexemes
               if lexeme.isalpha() and len(lexeme) >= 3 and lexeme not in found.index.postings]
    words = re.findall(r"[A-Za-z]{3,}", question)
    said = []
    for lexeme in missing:
        n = len(lexeme) - 1                  # "penalti" is "penalty", "colonoscopi" "colonoscopy", "bracket" "brackets"
        said += [w for w in words if w.lower()[:n] == lexeme[:n]][:1]
    return tuple(sorted(dict.fromkeys(said), key=words.index))


def _with_responses(hits: list[Hit], k: int, known: dict) -> list[Hit]:
    """Each comment summary followed by CMS's response to it (moved up, or taken from `known` rows
    when not shown); the list is cut back to `k`, and a comment left in the last place gives way to its response."""
    shown = {(h.doc_id, h.seq): h for h in hits}
    out: list[Hit] = []
    for hit in hits:
        if hit in out:
            continue
        out.append(hit)
        if hit.role == COMMENT and hit.pair_seq is not None:
            row = known.get((hit.doc_id, hit.pair_seq))
            response = shown.get((hit.doc_id, hit.pair_seq)) or (
                _hit(row, hit.score) if row is not None and row.role == RESPONSE else None)
            if response is not None and response not in out:
                out.append(response)
    if len(out) > k and out[k - 1].role == COMMENT and (out[k].doc_id, out[k].seq) == (out[k - 1].doc_id, out[k - 1].pair_seq):
        out[k - 1] = out[k]
    return out[:k]


def _check(conn, collections: tuple[str, ...], embedder) -> None:
    """EmbedderMismatchError when the stored vectors come from another embedder."""
    dimension = embedding_dimension(conn)
    if dimension is None:
        raise StoreError(_EMPTY_INDEX)
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


CODE_POOL = 100     # paragraphs naming one code (newest first) that the re-ranker chooses from for a question
_CODE_POOL = text("""
SELECT wanted.code, c.id, 1 - (c.embedding <=> :qvec) AS similarity
FROM unnest(CAST(:codes AS text[])) WITH ORDINALITY AS wanted(code, n)
CROSS JOIN LATERAL (
    SELECT id, embedding FROM chunks c WHERE c.collection = :collection AND c.codes @> ARRAY[wanted.code]
    ORDER BY c.published DESC NULLS LAST, c.id LIMIT :pool) c
ORDER BY wanted.n
""").bindparams(bindparam("qvec", type_=Vector()))


def code_cited(store: Store, codes: list[str], per_code: int, collection: str = "rules", *,
               question: str | None = None, skip: frozenset[int] = frozenset()) -> SearchResult:
    """For each code, at most `per_code` chunks whose `codes` contain it, without duplicates. Without a
    `question`: the newest (most mentions first), score 0. With one: of the code's newest CODE_POOL chunks,
    those the re-ranker scores best for the question (its vector through the query adapter, as in retrieve), chunk
    ids in `skip` (already shown) left out."""
    if not codes or per_code <= 0:
        return SearchResult()
    codes = [c.upper() for c in codes]
    try:
        with _one_state(store) as conn:
            if question is not None:
                return SearchResult(hits=tuple(_cited_for(conn, store, question, codes, per_code, collection, skip)))
            rows = conn.execute(_CODE_CITED, {"codes": codes, "per_code": per_code, "collection": collection}).all()
    except STORE_ERRORS as exc:
        return _failed("code-cited lookup", exc)
    seen: set[int] = set()
    hits = [_hit(r, 0.0) for r in rows if not (r.id in seen or seen.add(r.id))]
    return SearchResult(hits=tuple(hits))


def _cited_for(conn, store: Store, question: str, codes: list[str], per_code: int, collection: str,
               skip: frozenset[int]) -> list[Hit]:
    """Per code, the `per_code` chunks naming it that the re-ranker scores best for `question`."""
    index, lexemes, embedding = _prepared(conn, store, question, (collection,))
    bm25, coverage = index.match(lexemes)
    pooled = conn.execute(_CODE_POOL, {"codes": codes, "collection": collection, "pool": CODE_POOL,
                                       "qvec": _query_vector(store, embedding, (collection,), True)}).all()
    query, chosen = plan(question), {}
    for code in dict.fromkeys(r.code for r in pooled):
        mine = [r for r in pooled if r.code == code and r.id in index.row_of and r.id not in skip and r.id not in chosen]
        if not mine:
            continue
        scores = load_ranker().scores(features(index, query, [index.row_of[r.id] for r in mine], bm25,
                                               np.array([float(r.similarity) for r in mine]), coverage))
        chosen.update((mine[i].id, float(scores[i])) for i in np.argsort(-scores, kind="stable")[:per_code])
    rows = {r.id: r for r in conn.execute(_ROWS, {"ids": list(chosen)})}
    return [_hit(rows[i], score) for i, score in chosen.items() if i in rows]


def merge(retrieved: SearchResult, cited: SearchResult) -> SearchResult:
    """Retrieved hits in their rank order, then code-cited hits not already among them; warnings of both."""
    ids = {h.chunk_id for h in retrieved.hits}
    extra = [h for h in cited.hits if h.chunk_id not in ids and not ids.add(h.chunk_id)]
    return SearchResult(hits=retrieved.hits + tuple(extra),
                        warnings=tuple(dict.fromkeys(retrieved.warnings + cited.warnings)),
                        weak=retrieved.weak, unknown=retrieved.unknown)


# Per section (doc_id, heading): the paragraph where CMS states its decision, the closing "After consideration of
# public comments, we are finalizing ..." first, else the section's last "we are finalizing".
_SECTION_DECISIONS = text(f"""
SELECT DISTINCT ON (c.doc_id, c.heading) {_COLUMNS}
FROM chunks c JOIN unnest(CAST(:docs AS text[]), CAST(:headings AS text[])) AS s(doc_id, heading)
    ON c.doc_id = s.doc_id AND c.heading = s.heading
WHERE c.collection = :collection AND c.text ~* :decision AND NOT (c.id = ANY(CAST(:shown AS bigint[])))
ORDER BY c.doc_id, c.heading, (c.text ~* 'after consideration of (the )?(public )?comments') DESC, c.seq DESC
""")


def section_decisions(store: Store, shown: SearchResult, sections: int = 2, collection: str = "rules") -> SearchResult:
    """CMS's decision in the sections the first `sections` hits of `shown` come from, when not shown already: for a
    question asking what CMS finalized, the section's closing decision answers it, and the best-ranked paragraphs
    of a long section are often the comments before it. Score 0 (added, not ranked)."""
    wanted = list(dict.fromkeys((h.doc_id, h.heading) for h in shown.hits if h.collection == collection and h.heading))
    wanted = wanted[:sections]
    if not wanted:
        return SearchResult()
    try:
        with _one_state(store) as conn:
            rows = conn.execute(_SECTION_DECISIONS, {
                "docs": [d for d, _ in wanted], "headings": [h for _, h in wanted], "collection": collection,
                "decision": DECISION, "shown": [h.chunk_id for h in shown.hits]}).all()
    except STORE_ERRORS as exc:
        return _failed("section decision lookup", exc)
    order = {key: n for n, key in enumerate(wanted)}
    return SearchResult(hits=tuple(_hit(r, 0.0) for r in sorted(rows, key=lambda r: order[(r.doc_id, r.heading)])))


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
