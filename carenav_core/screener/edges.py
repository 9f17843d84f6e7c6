"""The program search the screener uses, built at the edges (CLI, app) from the store they own."""
from __future__ import annotations

from carenav_core.retrieval.store import Store
from carenav_core.screener.corpus import ProgramSearch


def program_search(store: Store) -> ProgramSearch:
    """The product's retrieval: exact cosine search over the store's `programs` collection, one program's
    chunks at a time. The collection is filled by `index_programs` (screener/store.py); if it is empty or
    the store is down, each candidate's retrieval fails and the report says its details are unverified."""
    from carenav_core.screener.store import store_program_search
    return store_program_search(store)
