"""The Data page lists every Federal Register document with title, date and paragraph count, and shows
the rule-text index's progress (complete here; a run in progress is shown as a bar with an ETA)."""
from __future__ import annotations

import streamlit as st
from sqlalchemy import text
from streamlit.testing.v1 import AppTest

from carenav_core.retrieval.catalog import rule_catalog, sources_file
from carenav_core.retrieval.fr import load_fr_documents
from carenav_core.retrieval.progress import finish_run, start_run
from carenav_core.settings import PROJECT_ROOT
from tests.app.conftest import use_settings
from tests.fixtures_pg import TEST_DOCUMENTS


def _data_page() -> AppTest:
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/data.py").run()
    assert not at.exception, at.exception
    return at


def test_catalog_lists_every_configured_document_with_its_paragraphs(full_settings, pg_store):
    catalog = rule_catalog(full_settings, pg_store)
    assert {e.doc_id for e in catalog} == {d.doc_id for d in load_fr_documents(sources_file(full_settings))}
    indexed = [e for e in catalog if e.doc_id.split(":")[0] in TEST_DOCUMENTS]
    assert indexed and all(e.paragraphs and e.paragraphs > 0 for e in indexed)
    assert all(e.paragraphs is None for e in catalog if e not in indexed)   # the MSSP texts: not in the test index
    assert all(e.title and e.published and e.citation.split()[1] == "FR" for e in catalog)


def test_data_page_shows_titles_dates_counts_and_progress(full_settings, pg_store, monkeypatch):
    use_settings(full_settings, monkeypatch)
    at = _data_page()
    frame = next(d.value for d in at.dataframe if "paragraphs" in d.value.columns)
    assert set(frame["document"]) >= {"2024-25382:II-G", "2025-08676"}
    assert {"title", "published", "kind", "citation"} <= set(frame.columns)
    assert any("Rule text complete" in s.value for s in at.success)
    with pg_store.engine.connect() as conn:
        total = conn.execute(text("SELECT total FROM index_runs WHERE collection = 'rules'")).scalar()
    start_run(pg_store.engine, "rules", planned=100, total=total)   # a run in progress
    try:
        at = _data_page()
        note = f"rule text still indexing: {total - 100:,} of {total:,} paragraphs"
        assert any(note in str(p.proto.text) for p in at.get("progress")), [p.proto for p in at.get("progress")]
    finally:
        start_run(pg_store.engine, "rules", planned=0, total=total)
        finish_run(pg_store.engine, "rules")
        st.cache_resource.clear()
