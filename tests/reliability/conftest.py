"""Fixtures of the reliability suite: a private, small copy of the data (two CMS releases, two FR
documents) with its own embedded PostgreSQL, so tests may rebuild, re-index or stop it without
disturbing the session databases other tests read."""
from __future__ import annotations

import json
import tomllib
from datetime import date
from pathlib import Path

import pgserver
import pytest
import streamlit as st

from carenav_core.pfs.build import build
from carenav_core.pfs.sources import SourceCatalog, load_catalog
from carenav_core.retrieval.index import index_documents
from carenav_core.retrieval.store import Store
from carenav_core.settings import PROJECT_ROOT, Settings
from tests.app.conftest import use_settings

SMALL_RELEASES = ("rvu25d", "rvu26c")
SMALL_FR = ("2021-23972", "2025-08676")        # 40 + 99 chunks: seconds to embed, not minutes


def small_catalog() -> SourceCatalog:
    """The catalog of data/sources.toml cut to two releases and no proposed rule."""
    releases = tuple(r for r in load_catalog().releases if r.id in SMALL_RELEASES)
    return SourceCatalog(releases=releases, proposed=(), extra={})


def write_release_files(mirror: Path, source: Path, variant: str) -> None:
    """Copy the small releases' PPRRVU files into `mirror`. Variant "b" appends a blank line (skipped
    by the parser): the same rows under another sha256, so every row says which build it came from."""
    for release_id in SMALL_RELEASES:
        target = mirror / "cms" / release_id
        target.mkdir(parents=True, exist_ok=True)
        for original in (source / "cms" / release_id).glob("PPRRVU*"):
            raw = original.read_bytes()
            (target / original.name).write_bytes(raw + b"\r\n" if variant == "b" else raw)


def _toml_value(value) -> str:
    return value.isoformat() if isinstance(value, date) else json.dumps(value)


def write_sources(data_dir: Path, doc_ids: tuple[str, ...]) -> Path:
    """data_dir/sources.toml listing only `doc_ids` of the project's [[fr_document]] entries
    (index_documents reads data_dir/sources.toml when there is one)."""
    entries = tomllib.loads((PROJECT_ROOT / "data" / "sources.toml").read_text(encoding="utf-8"))["fr_document"]
    chosen = [e for e in entries if e["document_number"] in doc_ids]
    path = data_dir / "sources.toml"
    path.write_text("".join("[[fr_document]]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in e.items()) + "\n"
                            for e in chosen), encoding="utf-8")
    return path


def stop_embedded_server(settings: Settings) -> None:
    """`pg_ctl stop` on the embedded server of `settings`, leaving the cached Store (its engine) in
    place, as happens when the server dies under a running app."""
    pgserver.get_server(settings.pg_folder.expanduser().resolve()).cleanup()


def small_settings(root: Path, mirror: Path, *, fr: tuple[str, ...] = SMALL_FR) -> Settings:
    """A private data folder: small mirror (its fr/ linked to the shared one), fee DB built, FR indexed."""
    own_mirror = root / "mirror"
    write_release_files(own_mirror, mirror, "a")
    (own_mirror / "fr").symlink_to(mirror / "fr", target_is_directory=True)
    data_dir = root / "data"
    data_dir.mkdir()
    write_sources(data_dir, fr)
    settings = Settings(data_dir=data_dir, mirror=own_mirror, pg_dir=root / "pg", database_url=None, embedder="onnx")
    build(settings, catalog=small_catalog())
    store = Store(settings)
    index_documents(settings, store)
    store.close()
    return settings


@pytest.fixture
def stoppable_settings(tmp_path, mirror):
    """Small private data whose embedded server the test may stop (one FR document)."""
    settings = small_settings(tmp_path, mirror, fr=SMALL_FR[:1])
    yield settings
    try:
        stop_embedded_server(settings)
    except Exception:   # already stopped by the test
        pass


@pytest.fixture(scope="session")
def reliable_settings(tmp_path_factory, mirror):
    """Small private data shared by the read-only tests of this suite (never stopped or rebuilt)."""
    return small_settings(tmp_path_factory.mktemp("reliable"), mirror, fr=SMALL_FR[:1])


@pytest.fixture
def stoppable_store(stoppable_settings):
    store = Store(stoppable_settings)
    yield store
    store.close()


@pytest.fixture(scope="session")
def reliable_store(reliable_settings):
    store = Store(reliable_settings)
    yield store
    store.close()


@pytest.fixture(scope="session")
def reliable_db(reliable_settings):
    from carenav_core.pfs.valuation import open_reader
    con = open_reader(reliable_settings.duckdb_file)
    yield con
    con.close()


@pytest.fixture
def reliable_env(reliable_settings, monkeypatch):
    """The app and CLI pointed (through the environment) at the small reliability data."""
    use_settings(reliable_settings, monkeypatch)
    yield reliable_settings
    st.cache_resource.clear()
