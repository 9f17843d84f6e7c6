"""Everything a question or a screen depends on, built once at an edge (CLI, app, eval, bench) and
passed in: the fee-schedule reader, the retrieval store (with its embedder) and the model client.

Core functions take a `Backends` (or the one collaborator they need); none of them reaches for a
process-wide cache. The app builds one per process (`ui/resources.py`, `st.cache_resource`) and gives
each session its own DuckDB cursor; the CLI builds one per command.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import duckdb
from sqlalchemy import text

from carenav_core.errors import CareNavError
from carenav_core.llm import ModelClient, model_client
from carenav_core.pfs.valuation import open_reader
from carenav_core.retrieval.store import STORE_ERRORS, Store
from carenav_core.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Backends:
    """The collaborators of one question. `fee_db` None: no database built (valuation is skipped with a
    warning); `model` None: the deterministic writer (with a warning when a server was configured)."""
    settings: Settings
    fee_db: duckdb.DuckDBPyConnection | None
    store: Store
    model: ModelClient | None = None

    def with_fee_db(self, fee_db: duckdb.DuckDBPyConnection | None) -> "Backends":
        """The same backends reading through another DuckDB cursor (one per app session)."""
        return dataclasses.replace(self, fee_db=fee_db)

    def with_model(self, model: ModelClient | None) -> "Backends":
        """The same backends with another model client (or none)."""
        return dataclasses.replace(self, model=model)

    def close(self) -> None:
        """Close the DuckDB reader and dispose of the store's connections."""
        if self.fee_db is not None:
            self.fee_db.close()
        self.store.close()


@dataclass(frozen=True, kw_only=True)
class DataVersion:
    """Which data an answer was computed from: the fee-schedule build and the rule-text index."""
    build_id: str          # first 12 hex digits of the fee-schedule build id ("" when no database)
    index_version: str     # first 12 hex digits of the md5 of the indexed documents' content hashes ("" when down)


_INDEX_VERSION = text("SELECT md5(coalesce(string_agg(doc_id || ':' || content_hash, ',' ORDER BY doc_id), '')) "
                      "FROM documents WHERE collection = 'rules'")


def data_version(backends: Backends) -> DataVersion:
    """The data behind an answer now; a part that cannot be read is ""."""
    build = ""
    if backends.fee_db is not None:
        try:
            row = backends.fee_db.execute("SELECT value FROM build_info WHERE key = 'build_id'").fetchone()
            build = (row[0] if row else "")[:12]
        except duckdb.Error as exc:
            log.warning("build id unreadable: %s", exc)
    try:
        with backends.store.engine.connect() as conn:
            index = (conn.execute(_INDEX_VERSION).scalar() or "")[:12]
    except STORE_ERRORS as exc:
        log.warning("index version unreadable: %s", exc)
        index = ""
    return DataVersion(build_id=build, index_version=index)


def open_fee_db(settings: Settings) -> tuple[duckdb.DuckDBPyConnection | None, str | None]:
    """A reader on the built fee schedule, or None and the reason (not built, or damaged)."""
    try:
        return open_reader(settings.duckdb_file), None
    except CareNavError as exc:      # NotBuiltError, or a damaged file
        return None, str(exc)


def open_backends(settings: Settings, *, model: bool = True) -> Backends:
    """Backends for a command-line run: the fee-schedule reader (None if not built; the reason is
    logged), a store that connects on first use, and the model client when a server answers."""
    fee_db, problem = open_fee_db(settings)
    if problem:
        log.warning("%s", problem)
    return Backends(settings=settings, fee_db=fee_db, store=Store(settings),
                    model=model_client(settings) if model else None)
