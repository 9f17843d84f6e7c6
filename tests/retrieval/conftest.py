"""Retrieval fixtures (harmless if tests/conftest.py imports pg_settings too: it is built once)."""
from tests.fixtures_pg import pg_settings  # noqa: F401
