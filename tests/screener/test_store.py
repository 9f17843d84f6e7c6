"""The `programs` collection in a real embedded PostgreSQL with the offline ONNX embedder (~10 s)."""
from __future__ import annotations

import pytest

from carenav_core.retrieval.store import Store
from carenav_core.screener.corpus import QUALITY_THRESHOLD
from carenav_core.screener.engine import screen
from carenav_core.screener.evidence import candidate_query, gather_evidence
from carenav_core.screener.store import index_programs, store_program_search
from carenav_core.settings import Settings
from tests.screener.conftest import ON, profile


@pytest.mark.slow
def test_programs_collection_search_is_restricted_to_one_program_and_clears_the_threshold(tmp_path):
    store = Store(Settings(data_dir=tmp_path, pg_dir=tmp_path / "pg", database_url=None, embedder="onnx"))
    try:
        assert index_programs(store).chunks_embedded == 66
        search, person = store_program_search(store), profile()
        for result in screen(person, on=ON):
            passages = search(result.program.key, candidate_query(person, result), 5)
            assert passages and {p.program for p in passages} == {result.program.key}
            assert passages[0].score >= QUALITY_THRESHOLD, (result.program.key, passages[0].score)
            assert not gather_evidence(result, person, search).retrieval_failed
        off_topic = search("liheap", "Medicare Part D prescription drug plan copays", 3)
        assert off_topic[0].score < QUALITY_THRESHOLD
    finally:
        store.close()
