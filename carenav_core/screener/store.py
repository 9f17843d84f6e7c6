"""The `programs` collection of the retrieval store: index the corpus chunks, search one program's chunks.

doc_id = program key, label = chunk id ("copes#income-limit"), metadata.url = first source address.
Search is exact cosine similarity restricted to the program's doc_id (retrieval.search.exact_search).
"""
from __future__ import annotations

from carenav_core.errors import StoreError
from carenav_core.retrieval.chunk import Chunk as StoreChunk
from carenav_core.retrieval.index import IndexReport, index_chunks
from carenav_core.retrieval.search import exact_search
from carenav_core.screener.corpus import Chunk, Passage, ProgramSearch, load_chunks
from carenav_core.progress import Progress, silent
from carenav_core.retrieval.store import Store

COLLECTION = "programs"


def store_chunks(chunks: tuple[Chunk, ...]) -> list[StoreChunk]:
    """Corpus chunks in the store's shape."""
    return [StoreChunk(doc_id=c.program, seq=i, label=c.chunk_id, heading=c.heading, text=c.text, codes=(),
                       metadata={"url": c.source_urls[0], "title": c.heading, "kind": "program"})
            for i, c in enumerate(chunks)]


def index_programs(store: Store, progress: Progress = silent, *, force: bool = False) -> IndexReport:
    """Embed the 12 program documents into the `programs` collection (unchanged documents are skipped)."""
    return index_chunks(store, COLLECTION, store_chunks(load_chunks()), progress=progress, force=force,
                        remove_missing=True)


def store_program_search(store: Store) -> ProgramSearch:
    """A ProgramSearch over the store; a store failure raises StoreError (the candidate's retrieval fails)."""
    def search(program: str, query: str, k: int) -> list[Passage]:
        result = exact_search(store, COLLECTION, query, k, doc_id=program)
        if result.warnings and not result.hits:
            raise StoreError(result.warnings[0])
        return [Passage(chunk_id=h.label, program=h.doc_id, heading=h.heading, text=h.text, score=h.score,
                        source_url=h.url) for h in result.hits]
    return search
