"""Shared fixtures: the real fee-schedule database built once from the mirror."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from carenav_core.backends import Backends
from carenav_core.pfs.build import build
from carenav_core.pfs.valuation import open_reader
from carenav_core.settings import PROJECT_ROOT, Settings

MIRROR = Path(os.environ.get("CARENAV_MIRROR") or PROJECT_ROOT.parent / "shared" / "data").resolve()
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def mirror() -> Path:
    if not (MIRROR / "cms").is_dir():
        pytest.fail(f"CMS mirror not found at {MIRROR}; set CARENAV_MIRROR=../shared/data")
    return MIRROR


@pytest.fixture(scope="session")
def built_settings(tmp_path_factory, mirror) -> Settings:
    """Settings whose DuckDB holds every release in the mirror (built once per session)."""
    data_dir = tmp_path_factory.mktemp("data")
    settings = Settings(data_dir=data_dir, mirror=mirror)
    build(settings)
    return settings


@pytest.fixture(scope="session")
def fee_db(built_settings):
    con = open_reader(built_settings.duckdb_file)
    yield con
    con.close()


from tests.fixtures_pg import any_store, pg_settings, pg_store, server_store  # noqa: E402,F401


@pytest.fixture(scope="session")
def full_settings(built_settings, pg_settings) -> Settings:
    """The fee-schedule database and the rule-text store together, as the app uses them."""
    return pg_settings.model_copy(update={"duckdb_path": built_settings.duckdb_file})


@pytest.fixture(scope="session")
def backends(full_settings, fee_db, pg_store) -> Backends:
    """The fee schedule and the rule-text store together, as the app passes them; no model client."""
    return Backends(settings=full_settings, fee_db=fee_db, store=pg_store)


@pytest.fixture(scope="session")
def any_backends(backends, any_store) -> Backends:
    """`backends` on the embedded store and on the PostgreSQL server by URL (see `any_store`)."""
    settings = any_store.settings.model_copy(update={"duckdb_path": backends.settings.duckdb_file})
    return dataclasses.replace(backends, settings=settings, store=any_store)


# Language-model tests never reach a network model: any non-loopback connection fails the test.
from tests.fixtures_ollama import no_network, ollama_double  # noqa: E402,F401


@pytest.fixture(autouse=True)
def _no_network(no_network):
    yield
