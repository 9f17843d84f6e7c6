"""Collaborators built at the edges (CLI, app) from Settings: the program search and the model client."""
from __future__ import annotations

from typing import Any

from carenav_core.screener.corpus import ProgramSearch
from carenav_core.settings import Settings


def program_search(settings: Settings) -> ProgramSearch:
    """The product's retrieval: exact cosine search over the store's `programs` collection, one program's
    chunks at a time. The collection is filled by `index_programs` (screener/store.py); if it is empty or
    the store is down, each candidate's retrieval fails and the report says its details are unverified."""
    from carenav_core.screener.store import store_program_search
    return store_program_search(settings)


def model_client(settings: Settings) -> Any:
    """An ollama Client when a host is configured, else None (deterministic writer)."""
    if not settings.ollama_host:
        return None
    import ollama
    return ollama.Client(host=settings.ollama_host, timeout=settings.llm_timeout)
