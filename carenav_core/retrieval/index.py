"""Build the rule-text index: read each FR document (mirror or download), chunk it, embed only
documents whose content changed, and record the embedder that built the collection."""
from __future__ import annotations

import hashlib
import json
import logging
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from pgvector.sqlalchemy import Vector
from sqlalchemy import Connection, bindparam, text

from carenav_core.errors import DataError, StoreError
from carenav_core.progress import Progress, silent
from carenav_core.retrieval.chunk import Chunk, chunk_document
from carenav_core.retrieval.fr import FrDocument, load_fr_documents, parse_fr_text, parse_fr_xml
from carenav_core.retrieval.progress import advance, finish_run, start_run
from carenav_core.retrieval.store import Store, check_collection, ensure_embedding_column
from carenav_core.settings import PROJECT_ROOT, Settings

log = logging.getLogger(__name__)
RULES = "rules"
EMBED_BATCH = 64


@dataclass(frozen=True, kw_only=True)
class IndexReport:
    """What one indexing run did."""
    collection: str
    documents: int
    embedded_documents: tuple[str, ...]
    unchanged_documents: tuple[str, ...]
    removed_documents: tuple[str, ...]
    chunks_embedded: int
    seconds: float

    @property
    def chunks_per_second(self) -> float:
        return self.chunks_embedded / self.seconds if self.seconds else 0.0


def read_source(settings: Settings, document: FrDocument) -> tuple[str, str | None, str]:
    """(text, section manifest or None, format) of a document: the mirror copy when
    CARENAV_MIRROR is set, else the official XML downloaded once into the cache folder."""
    if settings.mirror is not None:
        path = settings.mirror / document.mirror_file
        if not path.is_file():
            raise DataError(f"FR document {document.doc_id} is not in the mirror", path=str(path))
        manifest = _read_text(settings.mirror / document.sections) if document.sections else None
        return _read_text(path), manifest, document.format
    cached = settings.cache_folder / "fr" / f"{document.document_number}.xml"
    if not cached.is_file():
        cached.parent.mkdir(parents=True, exist_ok=True)
        try:
            with urllib.request.urlopen(document.url, timeout=60) as reply:
                cached.write_bytes(reply.read())
        except OSError as exc:
            raise DataError(f"could not download FR document {document.document_number}: {exc}; "
                            "set CARENAV_MIRROR to a local copy", path=document.url) from exc
    return _read_text(cached), None, "xml"


def _read_text(path: Path) -> str:
    """UTF-8 text of a source file; DataError naming it when unreadable or not text."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text (byte {exc.start}): expected FR XML or text", path=str(path)) from exc
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", path=str(path)) from exc


def document_chunks(settings: Settings, document: FrDocument) -> tuple[Chunk, ...]:
    """Parse and chunk one FR document."""
    body, manifest, fmt = read_source(settings, document)
    if fmt == "text":
        if manifest is None:
            raise DataError(f"text document {document.doc_id} needs a `sections` manifest",
                            path=document.mirror_file)
        paragraphs = parse_fr_text(body, manifest, source=document.sections or "")
    else:
        paragraphs = parse_fr_xml(body)
    if not paragraphs:    # an empty or non-FR file must not silently replace the indexed document
        raise DataError(f"FR document {document.doc_id} has no paragraphs", path=document.mirror_file)
    return chunk_document(document, paragraphs)


def content_hash(chunks: Iterable[Chunk]) -> str:
    """sha256 over everything stored for the chunks (text, labels, codes, metadata)."""
    digest = hashlib.sha256()
    for c in chunks:
        digest.update(json.dumps([c.label, c.heading, c.text, list(c.codes), c.page, str(c.published),
                                  c.metadata, c.role, c.context, c.pair_seq], sort_keys=True, default=str).encode())
    return digest.hexdigest()


_INSERT = text("""INSERT INTO chunks (collection, doc_id, seq, label, heading, text, codes, page, published,
        metadata, role, context, pair_seq, embedding)
    VALUES (:collection, :doc_id, :seq, :label, :heading, :text, :codes, :page, :published,
        CAST(:metadata AS jsonb), :role, :context, :pair_seq, :embedding)""").bindparams(
    bindparam("embedding", type_=Vector()))


def _write(conn: Connection, collection: str, doc_id: str, chunks: list[Chunk], vectors, digest: str) -> None:
    conn.execute(text("DELETE FROM chunks WHERE collection = :c AND doc_id = :d"), {"c": collection, "d": doc_id})
    conn.execute(_INSERT, [{
        "collection": collection, "doc_id": doc_id, "seq": c.seq, "label": c.label, "heading": c.heading,
        "text": c.text, "codes": list(c.codes), "page": c.page, "published": c.published,
        "metadata": json.dumps(c.metadata, default=str), "role": c.role or "cms_text", "context": c.context,
        "pair_seq": c.pair_seq, "embedding": v} for c, v in zip(chunks, vectors)])
    conn.execute(text("""INSERT INTO documents (collection, doc_id, content_hash, chunk_count)
        VALUES (:c, :d, :h, :n) ON CONFLICT (collection, doc_id) DO UPDATE
        SET content_hash = excluded.content_hash, chunk_count = excluded.chunk_count, indexed_at = now()"""),
                 {"c": collection, "d": doc_id, "h": digest, "n": len(chunks)})


def _prepare(store: Store, collection: str, force: bool) -> dict[str, str]:
    """Size the embedding column, check (or with `force`, reset) the collection's embedder;
    returns the stored content hash of each document."""
    embedder = store.embedder
    with store.engine.begin() as conn:
        built_by = conn.execute(text("SELECT embedder FROM collections WHERE name = :c"), {"c": collection}).scalar()
        if built_by and built_by != embedder.name and _offline_upgrade(built_by, embedder.name):
            # a newer release ships another offline model: the stored vectors are the old model's, so every
            # document is embedded again (as `--force` would). Until a document is rewritten, its old vectors are
            # searched with the new model's question vectors (a fine-tune of the same base model: close, not equal),
            # and the progress note says the rule text is still indexing.
            log.warning("collection %r was built with %s; re-embedding it with %s", collection, built_by, embedder.name)
            force = True
        ensure_embedding_column(conn, embedder.dimension, force=force)
        if force:
            conn.execute(text("DELETE FROM documents WHERE collection = :c"), {"c": collection})
            conn.execute(text("DELETE FROM collections WHERE name = :c"), {"c": collection})
        check_collection(conn, collection, embedder)
        conn.execute(text("""INSERT INTO collections (name, embedder, dimension) VALUES (:n, :e, :d)
            ON CONFLICT (name) DO UPDATE SET updated_at = now()"""),
                     {"n": collection, "e": embedder.name, "d": embedder.dimension})
        rows = conn.execute(text("SELECT doc_id, content_hash FROM documents WHERE collection = :c"),
                            {"c": collection}).all()
    return {r.doc_id: r.content_hash for r in rows}


def _offline_upgrade(built_by: str, configured: str) -> bool:
    """Both are the project's offline ONNX models ("onnx:..."): the shipped one was replaced by an upgrade.

    >>> _offline_upgrade("onnx:all-MiniLM-L6-v2-int8", "onnx:minilm-l6-carenav-ft1-int8")
    True
    >>> _offline_upgrade("ollama:nomic-embed-text", "onnx:minilm-l6-carenav-ft1-int8")
    False
    """
    return built_by.startswith("onnx:") and configured.startswith("onnx:")


class IndexBusyError(StoreError):
    """Another process is indexing the same collection."""


@contextmanager
def _exclusive(store: Store, collection: str) -> Iterator[None]:
    """Hold the collection's advisory lock for the run, so two indexers never interleave."""
    key = {"k": f"carenav-index:{collection}"}
    with store.engine.connect() as conn:
        if not conn.execute(text("SELECT pg_try_advisory_lock(hashtext(:k))"), key).scalar():
            raise IndexBusyError(f"another indexer is already indexing {collection!r}; "
                                 "its progress is on the Data page and in `carenav index --status`")
        conn.commit()
        try:
            yield
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(hashtext(:k))"), key)
            conn.commit()


def _by_document(chunks: Iterable[Chunk]) -> dict[str, list[Chunk]]:
    """Chunks grouped by doc_id, smallest document first (the care-management excerpts are searchable
    within seconds; the long Shared Savings Program texts follow)."""
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    return dict(sorted(by_doc.items(), key=lambda item: len(item[1])))


def _embed_documents(store: Store, collection: str, by_doc: dict[str, list[Chunk]], changed: list[str],
                     digests: dict[str, str], progress: Progress) -> None:
    """Embed the changed documents batch by batch, recording progress; one transaction per document."""
    total, done = sum(len(by_doc[d]) for d in changed), 0
    progress(0, total, f"{len(changed)} of {len(by_doc)} documents to embed")
    for doc_id in changed:
        # Shortest texts first, so each model batch pads little (padded tokens 1.08x -> 1.01x the real ones).
        ordered = sorted(by_doc[doc_id], key=lambda c: len(c.embed_text))
        vectors = {}
        for start in range(0, len(ordered), EMBED_BATCH):
            batch = ordered[start:start + EMBED_BATCH]
            vectors.update(zip((c.seq for c in batch), store.embedder.embed_documents([c.embed_text for c in batch])))
            done += len(batch)
            advance(store.engine, collection, done)
            progress(done, total, f"embedding {doc_id}")
        with store.engine.begin() as conn:
            _write(conn, collection, doc_id, by_doc[doc_id], [vectors[c.seq] for c in by_doc[doc_id]], digests[doc_id])


def _kept_elsewhere(store: Store, collection: str, doc_ids: Iterable[str]) -> int:
    """Chunks of the collection's other documents (kept as they are by a run over `doc_ids` only)."""
    with store.engine.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM chunks WHERE collection = :c AND NOT doc_id = ANY(:d)"),
                            {"c": collection, "d": list(doc_ids)}).scalar()


def index_chunks(store: Store, collection: str, chunks: Iterable[Chunk], *,
                 progress: Progress = silent, force: bool = False,
                 remove_missing: bool = False) -> IndexReport:
    """Embed and store `chunks` in `collection`, one transaction per doc_id; documents whose
    content hash is unchanged are skipped unless `force`. With `remove_missing`, documents of the
    collection that are not among `chunks` are deleted. Progress is recorded in `index_runs`
    (`progress.index_progress`); the collection counts as complete only when the run finishes."""
    started = time.perf_counter()
    with _exclusive(store, collection):
        stored = _prepare(store, collection, force)
        by_doc = _by_document(chunks)
        digests = {doc_id: content_hash(items) for doc_id, items in by_doc.items()}
        changed = [d for d in by_doc if stored.get(d) != digests[d]]
        planned = sum(len(by_doc[d]) for d in changed)
        others = 0 if remove_missing else _kept_elsewhere(store, collection, by_doc)
        start_run(store.engine, collection, planned=planned, total=sum(map(len, by_doc.values())) + others)
        try:
            _embed_documents(store, collection, by_doc, changed, digests, progress)
            # (documents whose rows a forced run reset still have chunks: those of a document no longer listed go too)
            removed = _remove(store, collection, (set(stored) | _chunked(store, collection)) - set(by_doc)) \
                if remove_missing else ()
        except BaseException as exc:       # recorded, then raised: the run is not complete
            finish_run(store.engine, collection, error=f"{type(exc).__name__}: {exc}"[:500])
            raise
        finish_run(store.engine, collection)
    return IndexReport(collection=collection, documents=len(by_doc), embedded_documents=tuple(changed),
                       unchanged_documents=tuple(d for d in by_doc if d not in changed),
                       removed_documents=removed, chunks_embedded=planned,
                       seconds=time.perf_counter() - started)


def _chunked(store: Store, collection: str) -> set[str]:
    """The doc_ids the collection holds chunks of."""
    with store.engine.connect() as conn:
        return set(conn.execute(text("SELECT DISTINCT doc_id FROM chunks WHERE collection = :c"),
                                {"c": collection}).scalars())


def _remove(store: Store, collection: str, doc_ids: set[str]) -> tuple[str, ...]:
    with store.engine.begin() as conn:
        for doc_id in sorted(doc_ids):
            conn.execute(text("DELETE FROM chunks WHERE collection = :c AND doc_id = :d"), {"c": collection, "d": doc_id})
            conn.execute(text("DELETE FROM documents WHERE collection = :c AND doc_id = :d"), {"c": collection, "d": doc_id})
    return tuple(sorted(doc_ids))


def _sources_file(settings: Settings) -> Path:
    """data_dir/sources.toml, or the project's own when data_dir is a scratch folder."""
    own = settings.data_dir / "sources.toml"
    return own if own.is_file() else PROJECT_ROOT / "data" / "sources.toml"


def index_documents(settings: Settings, store: Store, progress: Progress = silent, force: bool = False,
                    only: tuple[str, ...] | None = None, sources: Path | None = None) -> IndexReport:
    """Index the `[[fr_document]]` entries of data/sources.toml into the `rules` collection
    (`only`: just these doc_ids, and nothing is removed). Called by `carenav build`."""
    documents = load_fr_documents(sources or _sources_file(settings))
    chosen = [d for d in documents if only is None or d.doc_id in only or d.document_number in only]
    chunks = [c for document in chosen for c in document_chunks(settings, document)]
    return index_chunks(store, RULES, chunks, progress=progress, force=force, remove_missing=only is None)
