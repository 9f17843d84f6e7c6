"""Schema, migrations and embedder bookkeeping against the real embedded PostgreSQL."""
from __future__ import annotations

import pytest
from sqlalchemy import text

from carenav_core.errors import EmbedderMismatchError
from carenav_core.retrieval.embed import OnnxMiniLM
from carenav_core.retrieval.store import MIGRATIONS, check_collection, ensure_embedding_column, migrate

EXPECTED_COLUMNS = {
    "carenav_migrations": [("id", "integer"), ("name", "text"), ("applied_at", "timestamp with time zone")],
    "collections": [("name", "text"), ("embedder", "text"), ("dimension", "integer"),
                    ("updated_at", "timestamp with time zone")],
    "documents": [("collection", "text"), ("doc_id", "text"), ("content_hash", "text"),
                  ("chunk_count", "integer"), ("indexed_at", "timestamp with time zone")],
    "chunks": [("id", "bigint"), ("collection", "text"), ("doc_id", "text"), ("seq", "integer"),
               ("label", "text"), ("heading", "text"), ("text", "text"), ("codes", "text[]"),
               ("page", "integer"), ("published", "date"), ("metadata", "jsonb"), ("role", "text"),
               ("context", "text"), ("pair_seq", "integer"), ("tsv", "tsvector"), ("embedding", "vector(384)")],
    "index_runs": [("collection", "text"), ("planned", "integer"), ("done", "integer"), ("total", "integer"),
                   ("started_at", "timestamp with time zone"), ("updated_at", "timestamp with time zone"),
                   ("finished_at", "timestamp with time zone"), ("error", "text")],
}
EXPECTED_INDEXES = {
    "chunks_pkey": "btree (id)", "chunks_collection_label_key": "btree (collection, label)",
    "chunks_collection_doc": "btree (collection, doc_id, seq)", "chunks_codes_gin": "gin (codes)",
    "chunks_tsv_gin": "gin (tsv)", "chunks_embedding_hnsw": "hnsw (embedding vector_cosine_ops)",
}


def test_exact_schema(any_store):
    with any_store.engine.connect() as conn:
        for table, columns in EXPECTED_COLUMNS.items():
            rows = conn.execute(text("""SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
                WHERE attrelid = CAST(:t AS regclass) AND attnum > 0 AND NOT attisdropped ORDER BY attnum"""),
                                {"t": table}).all()
            assert [tuple(r) for r in rows] == columns, table
        indexes = dict(conn.execute(text(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'chunks'")).all())
    assert {name: d.split(" USING ")[1] for name, d in indexes.items()} == EXPECTED_INDEXES


def test_migrations_are_recorded_in_order_and_run_once(any_store):
    with any_store.engine.begin() as conn:
        assert migrate(conn) == []
        names = conn.execute(text("SELECT name FROM carenav_migrations ORDER BY id")).scalars().all()
    assert names == [name for name, _ in MIGRATIONS]


class _OtherEmbedder:
    name, dimension = "ollama:nomic-embed-text", 768


def test_another_embedder_is_told_to_rebuild_with_force(any_store):
    with any_store.engine.connect() as conn:
        with pytest.raises(EmbedderMismatchError, match="--force"):
            check_collection(conn, "rules", _OtherEmbedder())
        with pytest.raises(EmbedderMismatchError, match="384-dimensional.*768.*--force"):
            ensure_embedding_column(conn, 768)
        row = conn.execute(text("SELECT embedder, dimension FROM collections WHERE name = 'rules'")).one()
    assert tuple(row) == (OnnxMiniLM.name, 384)
