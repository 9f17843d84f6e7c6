"""The Federal Register documents CareNav indexes, as the Data page lists them: every
`[[fr_document]]` of data/sources.toml with its title, kind, date, FR citation and how many
paragraphs (chunks) of it are in the store ("pending" until its transaction commits)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import text

from carenav_core.retrieval.fr import FrDocument, load_fr_documents
from carenav_core.retrieval.store import STORE_ERRORS, Store
from carenav_core.settings import PROJECT_ROOT, Settings


@dataclass(frozen=True, kw_only=True)
class CatalogEntry:
    """One FR document (or excerpt) and its state in the index."""
    doc_id: str
    title: str
    kind: str
    rule_id: str
    published: str
    citation: str
    paragraphs: int | None          # None: not indexed (yet)
    url: str

    def row(self) -> dict:
        return {"document": self.doc_id, "title": self.title, "kind": self.kind, "rule": self.rule_id,
                "published": self.published, "citation": self.citation,
                "paragraphs": "pending" if self.paragraphs is None else f"{self.paragraphs:,}", "source": self.url}


def sources_file(settings: Settings) -> Path:
    """data_dir/sources.toml, or the project's own when data_dir is a scratch folder."""
    own = settings.data_dir / "sources.toml"
    return own if own.is_file() else PROJECT_ROOT / "data" / "sources.toml"


def _entry(document: FrDocument, paragraphs: int | None) -> CatalogEntry:
    title = document.title if len(document.title) <= 140 else document.title[:137] + "..."
    return CatalogEntry(doc_id=document.doc_id, title=title, kind=document.kind, rule_id=document.rule_id,
                        published=document.published.isoformat(), citation=f"{document.volume} FR {document.first_page}",
                        paragraphs=paragraphs, url=f"https://www.federalregister.gov/d/{document.document_number}")


def indexed_counts(store: Store, collection: str = "rules") -> dict[str, int]:
    """doc_id -> chunks stored (empty when the store is down)."""
    try:
        with store.engine.connect() as conn:
            rows = conn.execute(text("SELECT doc_id, chunk_count FROM documents WHERE collection = :c"),
                                {"c": collection}).all()
    except STORE_ERRORS:      # the status lines already say the store is down
        return {}
    return {r.doc_id: r.chunk_count for r in rows}


def rule_catalog(settings: Settings, store: Store) -> list[CatalogEntry]:
    """Every configured FR document, newest first, with its indexed paragraph count."""
    counts = indexed_counts(store)
    documents = sorted(load_fr_documents(sources_file(settings)), key=lambda d: (d.published, d.doc_id), reverse=True)
    return [_entry(d, counts.get(d.doc_id)) for d in documents]
