"""The labelled retrieval set is well-formed, split once, and its labels still name the paragraphs
its evidence picks out (so a chunking change cannot silently move the relevance judgements)."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from carenav_core.errors import ConfigError
from carenav_core.retrieval.fr import load_fr_documents
from carenav_core.retrieval.index import document_chunks
from carenav_core.retrieval.labelled import (TRAINING_FILE, fitting_queries, load_labelled, ndcg_at, recall_at,
                                             reciprocal_rank)
from carenav_core.settings import PROJECT_ROOT, Settings
from tests.fixtures_pg import PG_MIRROR

QUERIES = load_labelled()
TRAINING = load_labelled(TRAINING_FILE) if TRAINING_FILE.exists() else ()


def test_at_least_150_queries_of_every_kind_in_both_halves():
    assert len(QUERIES) >= 150
    assert len({q.question for q in QUERIES}) == len(QUERIES)
    halves = Counter((q.category, q.split) for q in QUERIES if q.category != "v1")
    for category in ("code", "family", "topic", "rule_year", "negative"):
        assert halves[(category, "heldout")] >= 4 and halves[(category, "tuning")] >= 4, category
    assert all(q.split == "tuning" for q in QUERIES if q.category == "v1")   # the old weights saw them
    assert all(q.negative == (q.category == "negative") for q in QUERIES)


@pytest.fixture(scope="module")
def chunks_by_label():
    if not (PG_MIRROR / "fr").is_dir():
        pytest.fail(f"FR mirror not found at {PG_MIRROR / 'fr'}; set CARENAV_MIRROR=../shared/data")
    settings = Settings(mirror=PG_MIRROR)
    return {c.label: c for d in load_fr_documents(PROJECT_ROOT / "data" / "sources.toml")
            for c in document_chunks(settings, d)}


def _selected(query, chunks_by_label) -> set[str]:
    """Labels the evidence picks: regexes over text (and heading, except for the v1 phrases) or labels."""
    found = set()
    for evidence in query.evidence:
        if evidence.startswith("["):
            found |= {evidence} & set(chunks_by_label)
        else:
            found |= {label for label, c in chunks_by_label.items() if c.doc_id in query.documents
                      and (re.search(evidence, c.text, re.M) or (query.origin != "v1" and re.search(evidence, c.heading)))}
    return found


def test_fitting_only_queries_are_tuning_and_ask_nothing_the_labelled_set_asks():
    assert len(TRAINING) >= 70
    held_out = {label for q in QUERIES if q.split == "heldout" for label in q.relevant}
    assert not [q.question for q in TRAINING if held_out & set(q.relevant)]     # decontaminated
    assert all(q.split == "tuning" and q.category != "v1" for q in TRAINING)
    asked = {q.question.casefold().strip(" ?") for q in QUERIES}
    assert len({q.question for q in TRAINING}) == len(TRAINING)
    assert not [q.question for q in TRAINING if q.question.casefold().strip(" ?") in asked]
    fitted = fitting_queries()
    assert fitted and all(q.split == "tuning" and q.relevant for q in fitted)


def test_relevant_labels_exist_and_are_what_the_evidence_selects(chunks_by_label):
    for query in QUERIES + TRAINING:
        assert set(query.relevant) <= set(chunks_by_label), query.question
        assert _selected(query, chunks_by_label) == set(query.relevant), query.question
        assert {chunks_by_label[label].doc_id for label in query.relevant} == set(query.documents), query.question


def test_metrics_count_a_near_duplicate_group_once():
    groups = {"a": "a", "a2": "a", "b": "b"}          # a2 repeats a (e.g. a code descriptor printed twice)
    assert recall_at(["a", "a2", "x"], groups, 5) == 0.5
    assert recall_at(["a2", "b"], groups, 5) == 1.0
    assert reciprocal_rank(["x", "x", "b"], groups) == pytest.approx(1 / 3)
    assert ndcg_at(["a", "b"], groups) == pytest.approx(1.0)
    assert ndcg_at(["x"] * 10 + ["a"], groups) == 0.0


def test_a_malformed_query_file_names_the_query_and_field(tmp_path: Path):
    bad = tmp_path / "q.toml"
    bad.write_text('[[query]]\nquestion = "x?y"\ncategory = "code"\nsplit = "both"\norigin = "t"\n'
                   'documents = []\nrelevant = []\nevidence = []\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"(?s)query 1: .*split"):
        load_labelled(bad)
