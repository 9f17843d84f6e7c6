"""The screener harness through the real pgvector program store (not the lexical stand-in)."""
from carenav_core.screener.commands import evaluation_search
from carenav_core.screener.evaluation import run_evaluation
from carenav_core.screener.store import index_programs


def test_screener_harness_on_the_real_store(any_store):
    index_programs(any_store)
    search = evaluation_search(any_store)
    assert search is not None
    results = run_evaluation(seed=7, families=28, search=search)
    assert results["retrieval"] == "store"
    assert results["invented_programs_in_reports"] == 0
    assert results["coverage_described_for_retrieval_failed"] == 0
    assert results["citations"] > 0 and results["citation_validity"] == 1.0
    assert results["agreement"] == 1.0 and results["passed"]
