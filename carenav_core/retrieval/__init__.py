"""Rule-text retrieval: Federal Register paragraphs in PostgreSQL + pgvector, hybrid search and
code-cited paragraphs. Entry points: `search.retrieve`, `search.code_cited`, `search.merge`,
`index.index_documents`, `index.index_chunks`, `search.exact_search`, `store.Store`."""
