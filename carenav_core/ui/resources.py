"""Cached resources for the Streamlit pages (one per process), and the no-database screen.

The app's edge: it builds the `Backends` the core takes (one store and one model client per process,
one DuckDB cursor per session) and passes them in.
"""
from __future__ import annotations

import logging
import threading

import duckdb
import streamlit as st

from carenav_core.backends import Backends
from carenav_core.build_all import build_all
from carenav_core.errors import CareNavError
from carenav_core.llm import ModelClient, model_client
from carenav_core.pfs.valuation import open_reader, reader_cursor
from carenav_core.retrieval.search import retrieve
from carenav_core.retrieval.store import STORE_ERRORS, Store
from carenav_core.settings import Settings

log = logging.getLogger(__name__)


@st.cache_resource
def app_settings() -> Settings:
    """Settings from the environment (CARENAV_*), read once per process."""
    return Settings()


@st.cache_resource(max_entries=2)
def _fee_db(path: str, mtime_ns: int) -> duckdb.DuckDBPyConnection:
    # A rebuild renames a new file into place: a new mtime opens a new connection; the old one
    # keeps reading the old file until dropped, so no reader ever mixes two builds.
    from pathlib import Path
    return open_reader(Path(path))


def fee_db(settings: Settings) -> duckdb.DuckDBPyConnection | None:
    """A cursor on the current fee-schedule database, or None if none is built yet."""
    path = settings.duckdb_file
    try:
        return reader_cursor(_fee_db(str(path), path.stat().st_mtime_ns))
    except FileNotFoundError:
        return None
    except CareNavError as exc:     # a damaged file: say so; the page offers the rebuild
        st.error(str(exc))
        return None


def require_fee_db(settings: Settings) -> duckdb.DuckDBPyConnection:
    """The database, or a screen that says none is built and offers the build, then stops the page."""
    con = fee_db(settings)
    if con is not None:
        return con
    st.warning(("No fee-schedule database is built yet." if not settings.duckdb_file.exists() else
                "The fee-schedule database needs rebuilding.") + " Build it from the CMS releases"
               + (f" in the mirror {settings.mirror}" if settings.mirror else " (downloads from cms.gov)")
               + ", then this page works.")
    if st.button("Build the data now", type="primary"):
        run_build(settings)
        st.rerun()
    st.stop()


def run_build(settings: Settings, force: bool = False) -> None:
    """`carenav build` with a progress bar; errors are shown, the previous database keeps serving."""
    bar = st.progress(0.0, text="Starting the build")

    def progress(done: int, total: int, message: str) -> None:
        bar.progress(min(done / total, 1.0) if total else 1.0, text=message)
    try:
        st.success("\n\n".join(build_all(settings, app_store(settings), progress, force=force, background=True)))
    except CareNavError as exc:
        st.error(f"The build failed and nothing was replaced: {exc}")


@st.cache_resource(on_release=Store.close)
def app_store(_settings: Settings) -> Store:
    """The retrieval store, one per process (it connects on first use and reconnects after a failure);
    its connections are closed when the cache lets it go."""
    return Store(_settings)


@st.cache_resource(ttl=60)
def app_model(_settings: Settings) -> ModelClient | None:
    """The model client when a server answers (probed at most once a minute), else None."""
    return model_client(_settings)


def app_backends(settings: Settings, fee_db: duckdb.DuckDBPyConnection | None) -> Backends:
    """This session's backends: its own DuckDB cursor, the process's store and model client."""
    return Backends(settings=settings, fee_db=fee_db, store=app_store(settings), model=app_model(settings))


@st.cache_resource
def warm_backends(_settings: Settings) -> threading.Thread:
    """Start the retrieval store, load the embedder and build the rule-text snapshot (retrieval/rank.py,
    ~1-2 s for 5,196 paragraphs) in the background, once per process, so the first question does not wait
    for them (a cold start costs ~1.3 s here without the snapshot). A failure is logged; the question itself
    then reports it as a warning."""
    store = app_store(_settings)

    def warm() -> None:
        try:
            store.engine
        except STORE_ERRORS as exc:
            log.warning("warming the retrieval store failed (the next question will say so): %s", exc)
            return
        warmed = retrieve(store, "warm up", 1, ("rules",))    # loads the embedder, builds the snapshot
        for warning in warmed.warnings:
            log.warning("warming the retrieval store: %s (the next question will say so)", warning)
    thread = threading.Thread(target=warm, name="carenav-warm", daemon=True)
    thread.start()
    return thread
