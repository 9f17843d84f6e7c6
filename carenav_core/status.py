"""Status of each backend for the Data page and `carenav status`: database, store, embedder, model."""
from __future__ import annotations

from dataclasses import dataclass

import duckdb
from sqlalchemy import text

from carenav_core.llm import probe
from carenav_core.pfs.valuation import open_reader
from carenav_core.retrieval.progress import eta_words, index_progress, progress_note
from carenav_core.retrieval.store import STORE_ERRORS, Store
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
    found = probe(settings)
    if found is None:
        return StatusItem(name="Language model", ok=True, detail="no model server configured (CARENAV_OLLAMA_HOST): "
                          "answers come from the deterministic writer, which no language model writes")
    if not found.reachable:
        return StatusItem(name="Language model", ok=False, detail=f"{found.detail}; deterministic writer in use")
    return StatusItem(name="Language model", ok=found.has_model, detail=found.detail)


def store_status(store: Store) -> list[StatusItem]:
    """The retrieval store and the embedder recorded for each collection."""
    settings, where = store.settings, store.where
    try:
        with store.engine.connect() as conn:
            collections = conn.execute(text(
                "SELECT c.name, c.embedder, c.dimension, count(DISTINCT d.doc_id), "
                "(SELECT count(*) FROM chunks k WHERE k.collection = c.name) "
                "FROM collections c LEFT JOIN documents d ON d.collection = c.name GROUP BY 1, 2, 3 ORDER BY 1")).fetchall()
    except STORE_ERRORS as exc:  # a down store is a status line, never a crash
        return [StatusItem(name="Retrieval store", ok=False, detail=f"{where}: unavailable ({exc})")]
    items = [StatusItem(name="Retrieval store", ok=bool(collections), detail=f"{where}: " + (
        "; ".join(f"`{n}` {docs} documents, {chunks:,} chunks" for n, _, _, docs, chunks in collections)
        or "empty; run `carenav build`"))]
    current = getattr(store.embedder, "name", type(store.embedder).__name__)
    built = {f"{e} ({d}-d)" for _, e, d, _, _ in collections}
    items.append(StatusItem(name="Embedder", ok=True, detail=f"{settings.embedder}: {current}; index built with "
                            + (", ".join(sorted(built)) or "nothing yet")))
    return items


def rule_text_status(store: Store) -> StatusItem:
    """Whether the rule-text index is complete (answers carry a note until it is)."""
    progress = index_progress(store)
    if progress.complete:
        return StatusItem(name="Rule text", ok=True, detail=f"complete: {progress.total:,} paragraphs")
    eta = f"; ETA {eta_words(progress.eta_seconds)}" if progress.running else ""
    return StatusItem(name="Rule text", ok=False, detail=f"{progress_note(progress)}{eta}")


def backend_status(settings: Settings, store: Store) -> list[StatusItem]:
    """Every backend's status; never raises for a backend that is down."""
    return [fee_db_status(settings), *store_status(store), rule_text_status(store), model_status(settings)]


def store_documents(store: Store) -> list[dict]:
    """Documents indexed in each collection (empty when the store is down)."""
    try:
        with store.engine.connect() as conn:
            rows = conn.execute(text("SELECT collection, doc_id, chunk_count, indexed_at, content_hash "
                                     "FROM documents ORDER BY collection, doc_id")).mappings().all()
    except STORE_ERRORS:  # the status lines above already say the store is down
        return []
    return [dict(r) for r in rows]
