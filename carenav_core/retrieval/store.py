"""PostgreSQL + pgvector store: engine (embedded pgserver on demand, or CARENAV_DATABASE_URL),
ordered migrations recorded in a table, and the embedding column sized for the embedder.

Schema practice after simonw/llm `migrations.py`: each migration runs once, in order, and is
recorded in `carenav_migrations`.
"""
from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import psycopg
from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.exc import SQLAlchemyError

from carenav_core.errors import EmbedderMismatchError, StoreError
from carenav_core.retrieval.embed import Embedder, make_embedder
from carenav_core.settings import Settings


MIGRATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("create_extension_vector", ("CREATE EXTENSION IF NOT EXISTS vector",)),
    ("create_collections", ("""
        CREATE TABLE collections (
            name text PRIMARY KEY,
            embedder text NOT NULL,
            dimension integer NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now())""",)),
    ("create_documents", ("""
        CREATE TABLE documents (
            collection text NOT NULL,
            doc_id text NOT NULL,
            content_hash text NOT NULL,
            chunk_count integer NOT NULL,
            indexed_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (collection, doc_id))""",)),
    ("create_chunks", ("""
        CREATE TABLE chunks (
            id bigserial PRIMARY KEY,
            collection text NOT NULL,
            doc_id text NOT NULL,
            seq integer NOT NULL,
            label text NOT NULL,
            heading text NOT NULL DEFAULT '',
            text text NOT NULL,
            codes text[] NOT NULL DEFAULT '{}',
            page integer,
            published date,
            metadata jsonb NOT NULL DEFAULT '{}',
            tsv tsvector GENERATED ALWAYS AS (
                to_tsvector('english', coalesce(heading, '') || ' ' || text)) STORED,
            UNIQUE (collection, label))""",
        "CREATE INDEX chunks_collection_doc ON chunks (collection, doc_id, seq)",
        "CREATE INDEX chunks_codes_gin ON chunks USING gin (codes)",
        "CREATE INDEX chunks_tsv_gin ON chunks USING gin (tsv)")),
    # Issue 12: who speaks in each paragraph, what is embedded with it, the comment/response pairs, and
    # full text that weighs the paragraph (A) over its heading and context (B).
    ("add_chunk_role_context_pair", (
        "ALTER TABLE chunks ADD COLUMN role text NOT NULL DEFAULT 'cms_text'",
        "ALTER TABLE chunks ADD COLUMN context text NOT NULL DEFAULT ''",
        "ALTER TABLE chunks ADD COLUMN pair_seq integer",
        "DROP INDEX chunks_tsv_gin",
        "ALTER TABLE chunks DROP COLUMN tsv",
        """ALTER TABLE chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('english', text), 'A')
            || setweight(to_tsvector('english', context || ' ' || coalesce(heading, '')), 'B')) STORED""",
        "CREATE INDEX chunks_tsv_gin ON chunks USING gin (tsv)")),
    ("create_index_runs", ("""
        CREATE TABLE IF NOT EXISTS index_runs (
            collection text PRIMARY KEY,
            planned integer NOT NULL,
            done integer NOT NULL,
            total integer NOT NULL,
            started_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            finished_at timestamptz,
            error text)""",)),
)


def migrate(conn: Connection) -> list[str]:
    """Apply the migrations not yet recorded in `carenav_migrations`; returns their names."""
    conn.execute(text("""CREATE TABLE IF NOT EXISTS carenav_migrations (
        id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"""))
    done = set(conn.execute(text("SELECT id FROM carenav_migrations")).scalars())
    applied = []
    for number, (name, statements) in enumerate(MIGRATIONS, start=1):
        if number in done:
            continue
        for statement in statements:
            conn.execute(text(statement))
        conn.execute(text("INSERT INTO carenav_migrations (id, name) VALUES (:i, :n)"), {"i": number, "n": name})
        applied.append(name)
    return applied


def embedding_dimension(conn: Connection) -> int | None:
    """Dimension of chunks.embedding, or None before the first index build."""
    typmod = conn.execute(text("""SELECT atttypmod FROM pg_attribute
        WHERE attrelid = 'chunks'::regclass AND attname = 'embedding' AND NOT attisdropped""")).scalar()
    return None if typmod is None else int(typmod)


def ensure_embedding_column(conn: Connection, dimension: int, *, force: bool = False) -> None:
    """Give chunks an `embedding vector(dimension)` with an HNSW cosine index. A different existing
    dimension is an EmbedderMismatchError unless `force`, which drops every collection's vectors."""
    current = embedding_dimension(conn)
    if current == dimension:
        return
    if current is not None and not force:
        raise EmbedderMismatchError(
            f"the index holds {current}-dimensional vectors but the embedder makes {dimension}; "
            "rebuild it with `carenav index --force` (or `carenav build --force`)")
    conn.execute(text("DROP INDEX IF EXISTS chunks_embedding_hnsw"))
    conn.execute(text("ALTER TABLE chunks DROP COLUMN IF EXISTS embedding"))
    conn.execute(text("DELETE FROM chunks"))
    conn.execute(text("DELETE FROM documents"))
    conn.execute(text("DELETE FROM collections"))
    conn.execute(text(f"ALTER TABLE chunks ADD COLUMN embedding vector({int(dimension)}) NOT NULL"))
    conn.execute(text("CREATE INDEX chunks_embedding_hnsw ON chunks USING hnsw (embedding vector_cosine_ops)"))


def check_collection(conn: Connection, collection: str, embedder: Embedder) -> None:
    """Raise EmbedderMismatchError when `collection` was built by another embedder."""
    row = conn.execute(text("SELECT embedder, dimension FROM collections WHERE name = :n"),
                       {"n": collection}).first()
    if row is not None:
        check_built(collection, row.embedder, row.dimension, embedder)


def check_built(collection: str, built_by: str, dimension: int, embedder: Embedder) -> None:
    """Raise EmbedderMismatchError when `collection`, built by `built_by` (`dimension`-d), is not `embedder`'s."""
    if (built_by, dimension) != (embedder.name, embedder.dimension):
        raise EmbedderMismatchError(
            f"collection {collection!r} was built with {built_by} ({dimension}-d) but "
            f"the configured embedder is {embedder.name} ({embedder.dimension}-d); "
            "rebuild it with `carenav index --force` (or `carenav build --force`)")


_server_lock = threading.Lock()


def embedded_url(folder: Path) -> str:
    """Start (or reuse) the embedded PostgreSQL 16 + pgvector of PyPI `pgserver` in `folder`.
    pgserver reuses a server already running on that data folder (postmaster.pid)."""
    import pgserver
    folder = folder.expanduser().resolve()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _server_lock:
        try:
            server = pgserver.get_server(folder, cleanup_mode="stop")
        except (subprocess.SubprocessError, OSError, RuntimeError) as exc:  # initdb / pg_ctl failures
            raise StoreError(f"could not start the embedded PostgreSQL in {folder}: {exc}; "
                             f"see {folder / 'log'}, or set CARENAV_DATABASE_URL") from exc
    return server.get_uri().replace("postgresql://", "postgresql+psycopg://", 1)


def database_url(settings: Settings) -> str:
    """CARENAV_DATABASE_URL (driver forced to psycopg 3) or the embedded server's address."""
    if not settings.database_url:
        return embedded_url(settings.pg_folder)
    url = settings.database_url
    for prefix in ("postgresql+psycopg2://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


STORE_ERRORS = (StoreError, SQLAlchemyError, psycopg.Error, OSError)
"""What a store operation may raise when the database or the embedder is down or inconsistent:
callers turn these (and only these) into warnings; anything else is a programming error."""


class Store:
    """The retrieval database and the embedder its vectors come from.

    Built at the edges (CLI, app, eval, bench; see `carenav_core.backends`) and passed in. It connects on
    first use (starting the embedded server when no URL is set) and migrates once; a failed attempt is
    not remembered, so a server that comes back is used again. `close()` disposes of the engine.
    """

    def __init__(self, settings: Settings, *, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self._engine: Engine | None = None
        self._embedder = embedder
        self._lock = threading.Lock()

    @property
    def engine(self) -> Engine:
        """The migrated engine; StoreError when the database cannot be reached."""
        with self._lock:
            if self._engine is None:
                self._engine = _migrated_engine(self.settings)
            return self._engine

    @property
    def embedder(self) -> Embedder:
        """The configured embedder (the ONNX model is loaded on first use)."""
        with self._lock:
            if self._embedder is None:
                self._embedder = make_embedder(self.settings)
            return self._embedder

    @property
    def where(self) -> str:
        """Where the store lives, in words for status lines."""
        return ("CARENAV_DATABASE_URL" if self.settings.database_url
                else f"embedded PostgreSQL in {self.settings.pg_folder}")

    def close(self) -> None:
        """Dispose of the engine's connections (the next use reconnects)."""
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.dispose()


def _migrated_engine(settings: Settings) -> Engine:
    try:
        engine = create_engine(database_url(settings), pool_pre_ping=True)
        with engine.begin() as conn:
            migrate(conn)
    except StoreError:
        raise
    except (SQLAlchemyError, psycopg.Error, OSError) as exc:
        raise StoreError(f"cannot reach the retrieval database: {exc}") from exc
    return engine
