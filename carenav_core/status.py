"""Status of each backend for the Data page and `carenav status`: database, store, embedder, model."""
from __future__ import annotations

from dataclasses import dataclass

import duckdb
from sqlalchemy import text

from carenav_core.pfs.valuation import open_reader
from carenav_core.retrieval.store import get_store

from carenav_core.settings import Settings


@dataclass(frozen=True, kw_only=True)
class StatusItem:
    name: str
    ok: bool
    detail: str


def fee_db_status(settings: Settings) -> StatusItem:
    path = settings.duckdb_file
    if not path.exists():
        return StatusItem(name="Fee-schedule database", ok=False, detail=f"not built yet ({path}); run `carenav build`")
    try:
        with open_reader(path) as con:
            info = dict(con.execute("SELECT key, value FROM build_info").fetchall())
    except duckdb.Error as exc:
        return StatusItem(name="Fee-schedule database", ok=False, detail=f"unreadable: {exc}")
    return StatusItem(name="Fee-schedule database", ok=True,
                      detail=f"{path.name}, built {info.get('built_at')}, {int(info.get('rows', 0)):,} rows")


def model_status(settings: Settings) -> StatusItem:
    if not settings.ollama_host:
        return StatusItem(name="Language model", ok=True, detail="no model server configured (CARENAV_OLLAMA_HOST): "
                          "answers come from the deterministic writer, which no language model writes")
    import ollama
    try:
        names = [m.model for m in ollama.Client(host=settings.ollama_host, timeout=2).list().models]
    except Exception as exc:  # any failure to reach the server is a status, not a crash
        return StatusItem(name="Language model", ok=False,
                          detail=f"{settings.ollama_host} unreachable ({type(exc).__name__}); deterministic writer in use")
    present = settings.llm_model in names or f"{settings.llm_model}:latest" in names
    return StatusItem(name="Language model", ok=present, detail=f"Ollama at {settings.ollama_host}: model "
                      f"{settings.llm_model} {'available' if present else 'NOT pulled (ollama pull ' + settings.llm_model + ')'}")


def store_status(settings: Settings) -> list[StatusItem]:
    """The retrieval store and the embedder recorded for each collection."""
    where = settings.database_url and "CARENAV_DATABASE_URL" or f"embedded PostgreSQL in {settings.pg_folder}"
    try:
        store = get_store(settings)
        with store.engine.connect() as conn:
            collections = conn.execute(text(
                "SELECT c.name, c.embedder, c.dimension, count(DISTINCT d.doc_id), "
                "(SELECT count(*) FROM chunks k WHERE k.collection = c.name) "
                "FROM collections c LEFT JOIN documents d ON d.collection = c.name GROUP BY 1, 2, 3 ORDER BY 1")).fetchall()
    except Exception as exc:  # a down store is a status line, never a crash
        return [StatusItem(name="Retrieval store", ok=False, detail=f"{where}: unavailable ({exc})")]
    items = [StatusItem(name="Retrieval store", ok=bool(collections), detail=f"{where}: " + (
        "; ".join(f"`{n}` {docs} documents, {chunks:,} chunks" for n, _, _, docs, chunks in collections)
        or "empty; run `carenav build`"))]
    current = getattr(store.embedder, "name", type(store.embedder).__name__)
    built = {f"{e} ({d}-d)" for _, e, d, _, _ in collections}
    items.append(StatusItem(name="Embedder", ok=True, detail=f"{settings.embedder}: {current}; index built with "
                            + (", ".join(sorted(built)) or "nothing yet")))
    return items


def backend_status(settings: Settings) -> list[StatusItem]:
    """Every backend's status; never raises."""
    return [fee_db_status(settings), *store_status(settings), model_status(settings)]


def store_documents(settings: Settings) -> list[dict]:
    """Documents indexed in each collection (empty when the store is down)."""
    try:
        with get_store(settings).engine.connect() as conn:
            rows = conn.execute(text("SELECT collection, doc_id, chunk_count, indexed_at, content_hash "
                                     "FROM documents ORDER BY collection, doc_id")).mappings().all()
    except Exception:  # the status lines above already say the store is down
        return []
    return [dict(r) for r in rows]
