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

from carenav_core.errors import StoreError
from carenav_core.retrieval.chunk import COMMENT, RESPONSE
from carenav_core.retrieval.dedup import drop_near_duplicates
from carenav_core.retrieval.plan import QueryPlan, plan
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


@dataclass(frozen=True, kw_only=True)
class Ranking:
    """What the hybrid ranking does besides fusing the two rankers (issue 12). Every value was
    chosen on the tuning half of data/eval/retrieval_queries.toml only; bench/bench_retrieval.py
    reports the held-out half."""
    vector_weight: float = WEIGHTS["hybrid"][0]   # weight of the vector ranks in the hybrid fusion
    comment_factor: float = 1.0   # score multiplier for CMS's summaries of comments (prefer CMS's own words)
    rule_factor: float = 1.0      # multiplier for chunks of the rule (year, kind) the question names
    expand: bool = False          # add family names/definitions of the codes named to the keyword query
    expand_vector: bool = False   # ... and to the text whose embedding is searched
    dedup: bool = False           # drop near-duplicates of a better-ranked hit
    pair: bool = False            # follow a comment summary with CMS's response to it
    common_share: float = 1.0     # keyword query: leave out words found in more than this share of paragraphs


# Chosen on the tuning half only (coordinate search with bench/bench_retrieval.py, full mirror corpus):
# duplicate removal (recall@5 0.530 -> 0.532) and comment/response pairing (-> 0.540) added recall, the
# named rule's boost a little (x3 -> 0.543; x1.5/x2 0.540); down-weighting comment summaries (x0.5-0.85:
# 0.48-0.53) and adding family names to the keyword query (0.41) lost recall, so both stay off.
# Leaving words found in more than half of the paragraphs out of the keyword query (tuning recall@5 0.543 ->
# 0.554; 0.3: 0.545, 0.2: 0.531, 0.1: 0.529, 0.05: 0.479) also makes the full-text ranker rank far fewer rows.
RANKING = Ranking(dedup=True, pair=True, rule_factor=3.0, common_share=0.5)
CANDIDATES = 4      # the SQL hands back k x CANDIDATES fused hits for duplicate removal and pairing

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
), weighted AS (
    SELECT f.id, f.score
        * CASE WHEN c.role = 'comment_summary' THEN :cf ELSE 1.0 END
        * CASE WHEN (CAST(:ryear AS integer) IS NOT NULL OR CAST(:rkind AS text) IS NOT NULL)
                AND (CAST(:ryear AS integer) IS NULL OR c.metadata->>'rule_year' = CAST(:ryear AS text))
                AND (CAST(:rkind AS text) IS NULL OR c.metadata->>'kind' = CAST(:rkind AS text))
               THEN :rf ELSE 1.0 END AS score
    FROM fused f JOIN chunks c ON c.id = f.id WHERE f.score > 0
)
SELECT {_COLUMNS}, w.score FROM weighted w JOIN chunks c ON c.id = w.id
ORDER BY w.score DESC, c.id LIMIT :limit
""").bindparams(bindparam("qvec", type_=Vector()))


def _parameters(store: Store, question: str, query: QueryPlan, k: int, collections: tuple[str, ...],
                since: date | None, weights: tuple[float, float], ranking: Ranking, conn=None) -> dict:
    """Bind values of the hybrid statement for one question."""
    expanded = f"{question} {query.expansion}" if ranking.expand and query.expansion else question
    tsq = keyword_query(expanded)
    if conn is not None and ranking.common_share < 1.0:
        tsq = " | ".join(_rare_words(conn, store, tsq.split(" | ") if tsq else [], collections, ranking.common_share))
    return {"qvec": store.embedder.embed_query(expanded if ranking.expand_vector else question),
            "collections": list(collections), "since": since, "pool": max(POOL, k),
            "tsq": tsq or "''", "qcodes": list(query.codes),
            "wv": weights[0], "wk": weights[1], "rrf": RRF_K, "limit": k * CANDIDATES,
            "cf": ranking.comment_factor, "rf": ranking.rule_factor,
            "ryear": query.rule_year, "rkind": query.rule_kind}


def retrieve(store: Store, question: str, k: int, collections: tuple[str, ...], since: date | None = None,
             mode: Literal["hybrid", "vector", "keyword"] = "hybrid", ranking: Ranking = RANKING) -> SearchResult:
    """The `k` chunks of `collections` that best answer `question`, published on or after `since`:
    fused ranks weighted by speaker role and by the rule the question names, near-duplicates of a
    better hit dropped, a comment summary followed by CMS's response. `mode` keeps one ranker only
    (for evaluation)."""
    try:
        with store.engine.begin() as conn:
            _check(conn, collections, store.embedder)
            conn.execute(text(f"SET LOCAL hnsw.ef_search = {EF_SEARCH}"))
            weights = (ranking.vector_weight, WEIGHTS["hybrid"][1]) if mode == "hybrid" else WEIGHTS[mode]
            rows = conn.execute(_HYBRID, _parameters(store, question, plan(question), k, collections, since,
                                                     weights, ranking, conn)).all()
            hits = [_hit(r, r.score) for r in rows]
            hits = drop_near_duplicates(hits, lambda h: h.text) if ranking.dedup else hits
            hits = _with_responses(conn, hits[:k], k) if ranking.pair else hits[:k]
        return SearchResult(hits=tuple(hits))
    except STORE_ERRORS as exc:  # the chat shows the warning instead of failing
        return _failed("rule-text search", exc)


_TOTAL = text("SELECT count(*) FROM chunks WHERE collection = ANY(:collections)")
_DF = text("SELECT count(*) FROM chunks WHERE collection = ANY(:collections) "
           "AND tsv @@ plainto_tsquery('english', :word)")


def _rare_words(conn, store: Store, words: list[str], collections: tuple[str, ...], share: float) -> list[str]:
    """The words found in at most `share` of the collections' paragraphs (full text ranks every matching
    paragraph, and a word in most of them — "care", "management" in rules about care management — only makes
    that slow without telling paragraphs apart). Codes and numbers (a section heading naming G0557 is part of
every paragraph's searchable text under it) and the two rarest words are always kept. Paragraph counts per
    word are cached on the store, keyed by the collections' size (a re-index changes it)."""
    if not words:
        return words
    total = conn.execute(_TOTAL, {"collections": list(collections)}).scalar_one()
    cache = store.__dict__.setdefault("_word_counts", {})
    counts = {}
    for word in dict.fromkeys(words):
        key = (collections, total, word)
        if key not in cache:
            cache[key] = conn.execute(_DF, {"collections": list(collections), "word": word}).scalar_one()
        counts[word] = cache[key]
    rarest = set(sorted((w for w in counts if counts[w]), key=counts.get)[:2])
    return [w for w in counts if counts[w] <= share * total or w in rarest or any(c.isdigit() for c in w)]


_RESPONSES = text(f"""SELECT {_COLUMNS} FROM chunks c
WHERE c.collection = :collection AND c.doc_id = :doc_id AND c.seq = :seq""")


def _response_to(conn, comment: Hit) -> Hit | None:
    row = conn.execute(_RESPONSES, {"collection": comment.collection, "doc_id": comment.doc_id,
                                    "seq": comment.pair_seq}).first()
    return _hit(row, comment.score) if row is not None and row.role == RESPONSE else None


def _with_responses(conn, hits: list[Hit], k: int) -> list[Hit]:
    """Each comment summary followed by CMS's response to it (moved up, or fetched when not shown);
    the list is cut back to `k`, and a comment left in the last place gives way to its response."""
    shown = {(h.doc_id, h.seq): h for h in hits}
    out: list[Hit] = []
    for hit in hits:
        if hit in out:
            continue
        out.append(hit)
        if hit.role == COMMENT and hit.pair_seq is not None:
            response = shown.get((hit.doc_id, hit.pair_seq)) or _response_to(conn, hit)
            if response is not None and response not in out:
                out.append(response)
    if len(out) > k and out[k - 1].role == COMMENT and (out[k].doc_id, out[k].seq) == (out[k - 1].doc_id, out[k - 1].pair_seq):
        out[k - 1] = out[k]
    return out[:k]


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
