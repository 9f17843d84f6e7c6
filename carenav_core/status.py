"""Status of each backend for the Data page and `carenav status`: database, store, embedder, model."""
from __future__ import annotations

from dataclasses import dataclass

import duckdb

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
        with duckdb.connect(str(path), read_only=True) as con:
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


def backend_status(settings: Settings) -> list[StatusItem]:
    """Every backend's status; never raises."""
    items = [fee_db_status(settings)]
    try:
        from carenav_core.retrieval.status import store_status
        items += store_status(settings)
    except ImportError:
        items.append(StatusItem(name="Rule-text store", ok=False, detail="retrieval not installed"))
    items.append(model_status(settings))
    return items
