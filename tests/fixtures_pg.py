"""Session fixture: the real embedded PostgreSQL (pgserver) in a temp folder, with the rule-text
index built once from the mirror's FR XML documents and the real offline ONNX embedder.

Use from tests/conftest.py:  from tests.fixtures_pg import pg_settings, pg_store  # noqa: F401

`any_store` runs a test twice: on that embedded store and on a standalone PostgreSQL server reached by
URL (CARENAV_TEST_DATABASE_URL, role + password over TCP; .ci/run starts one with
`python -m tests.deploy.pg_server start DIR`). Without the variable the server variant is skipped.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from carenav_core.retrieval.index import index_documents
from carenav_core.retrieval.store import Store, database_url
from carenav_core.settings import PROJECT_ROOT, Settings

PG_MIRROR = Path(os.environ.get("CARENAV_MIRROR") or PROJECT_ROOT.parent / "shared" / "data").resolve()
# The XML documents (632 chunks, ~25 s to embed on 2 cores). The three MSSP text excerpts add
# ~4,500 chunks (~3 minutes): `carenav build` and bench/ index them; CI tests do not.
TEST_DOCUMENTS = ("2024-25382", "2025-08676", "2021-23972")
# Built once per session even if several conftest/test modules import the fixture (pytest then
# holds one definition per importing module and would call each once).
_built: dict[int, Store] = {}


@pytest.fixture(scope="session")
def pg_store(tmp_path_factory) -> Store:
    """The store of a fresh embedded server whose `rules` collection is built (closed at session end)."""
    key = id(tmp_path_factory)
    if key in _built:
        yield _built[key]
        return
    if not (PG_MIRROR / "fr").is_dir():
        pytest.fail(f"FR mirror not found at {PG_MIRROR / 'fr'}; set CARENAV_MIRROR=../shared/data")
    data_dir = tmp_path_factory.mktemp("pgdata")
    settings = Settings(data_dir=data_dir, mirror=PG_MIRROR, pg_dir=data_dir / "pg", database_url=None,
                        embedder="onnx")
    store = Store(settings)
    index_documents(settings, store, only=TEST_DOCUMENTS)
    _built[key] = store
    yield store
    store.close()


@pytest.fixture(scope="session")
def pg_settings(pg_store) -> Settings:
    """The settings of `pg_store` (embedded server in a temp folder, rule text indexed)."""
    return pg_store.settings


TEST_DATABASE_URL = "CARENAV_TEST_DATABASE_URL"


@pytest.fixture(scope="session")
def server_store(tmp_path_factory) -> Store:
    """The store on the server at CARENAV_TEST_DATABASE_URL, emptied of CareNav's tables first (so the
    migrations run from scratch there), `rules` indexed like `pg_store`; closed at session end."""
    url = os.environ.get(TEST_DATABASE_URL)
    if not url:
        pytest.skip(f"{TEST_DATABASE_URL} is not set: the PostgreSQL-server-by-URL variant runs in CI "
                    "(.ci/run starts one: python -m tests.deploy.pg_server start DIR)")
    if not (PG_MIRROR / "fr").is_dir():
        pytest.fail(f"FR mirror not found at {PG_MIRROR / 'fr'}; set CARENAV_MIRROR=../shared/data")
    settings = Settings(data_dir=tmp_path_factory.mktemp("serverdata"), mirror=PG_MIRROR, database_url=url,
                        embedder="onnx")
    empty = create_engine(database_url(settings))   # before the store migrates: start from an empty database
    with empty.begin() as conn:
        conn.execute(text("DROP OWNED BY CURRENT_USER"))    # every table of the role (not the extension)
    empty.dispose()
    store = Store(settings)
    index_documents(settings, store, only=TEST_DOCUMENTS)
    yield store
    store.close()


@pytest.fixture(scope="session", params=["embedded", "server"])
def any_store(request) -> Store:
    """`pg_store` (embedded pgserver) and `server_store` (PostgreSQL server by URL), one test run each."""
    return request.getfixturevalue("pg_store" if request.param == "embedded" else "server_store")
