"""The in-memory half of the hybrid ranker: BM25 over PostgreSQL's lexemes, the snapshot that follows
the index, and the fitted re-ranker weights."""
from __future__ import annotations

from collections import namedtuple
from datetime import date

import numpy as np
import pytest

from carenav_core.errors import ConfigError
from carenav_core.retrieval import rank
from carenav_core.retrieval.chunk import Chunk
from carenav_core.retrieval.index import index_chunks
from carenav_core.retrieval.search import retrieve

Row = namedtuple("Row", "id label doc_id seq heading role pair_seq codes published rule_year kind decision words lexemes counts")


def _row(n: int, counts: dict[str, int], heading: str = "h", **extra) -> Row:
    """A snapshot row; `counts`: lexeme -> occurrences in the paragraph itself (0: only in its heading/context)."""
    values = dict(id=100 + n, label=f"[x ¶{n}]", doc_id="d", seq=n, heading=heading, role="cms_text", pair_seq=None,
                  codes=(), published=date(2024, 12, 9), rule_year="2025", kind="final rule", decision=False,
                  words=10, lexemes=list(counts), counts=list(counts.values()))
    return Row(**(values | extra))


def test_the_snapshot_counts_only_the_paragraphs_own_words(any_store):
    # Real PostgreSQL: "consent" is in the heading only (tsvector weight B), "month" in the text twice.
    chunk = Chunk(doc_id="w", seq=0, label="[w]", heading="Beneficiary consent", text="Billed per month; one month.",
                  codes=())
    index_chunks(any_store, "rank_words", [chunk])
    with any_store.engine.connect() as conn:
        index = rank.lexical_index(conn, any_store, ("rank_words",), version=("this test",))
    assert "consent" not in index.postings and list(index.postings["month"][1]) == [2.0]
    assert "bill" in index.postings and index.log_words[0] == pytest.approx(np.log1p(5))


def test_bm25_weighs_rare_words_and_reads_only_the_paragraph_itself():
    index = rank.LexicalIndex([_row(0, {"care": 1, "consent": 1}), _row(1, {"care": 2}),
                               _row(2, {"care": 1, "consent": 0}), _row(3, {"care": 1, "month": 0})], version=(1,))
    scores, _ = index.match(["consent", "care"])
    assert scores[0] > scores[1] > 0            # the rare word counts for more than a second "care"
    assert scores[2] == pytest.approx(scores[3])  # "consent" only in the heading/context (weight B) adds nothing
    ids, _, share = index.keyword_pool(["consent", "month"], pool=5, since=None)
    assert list(share) == [0.5, 0.0, 0.0, 0.0]
    assert list(ids) == [100]
    assert list(index.keyword_pool(["consent"], pool=5, since=date(2025, 1, 1))[0]) == []


def test_features_of_a_section_and_of_the_question():
    rows = [_row(0, {"a": 1}, heading="s1", decision=True), _row(1, {"a": 2}, heading="s1", role="cms_response"),
            _row(2, {"b": 1}, heading="s2", codes=("G0556",))]
    index = rank.LexicalIndex(rows, version=(1,))
    from carenav_core.retrieval.plan import plan
    bm25, share = index.match(["a", "c"])
    x = rank.features(index, plan("Is G0556 in the CY 2025 final rule?"), [0, 1, 2], bm25, np.array([0.2, 0.1, 0.5]), share)
    col = {name: x[:, n] for n, name in enumerate(rank.FEATURES)}
    assert list(col["bm25"]) == pytest.approx([col["bm25"][0], 1.0, 0.0]) and col["bm25"][0] < 1.0
    assert list(col["section_bm25"]) == [1.0, 1.0, 0.0]           # the best paragraph of each section
    assert list(col["vector"]) == pytest.approx([-0.3, -0.4, 0.0])
    assert list(col["neighbour_bm25"]) == pytest.approx([1.0, col["bm25"][0], 0.0])  # s2 has no neighbour in s1
    assert list(col["decision"]) == [1, 0, 0] and list(col["response"]) == [0, 1, 0]
    assert list(col["names_codes"]) == [0, 0, 1] and list(col["misses_codes"]) == [1, 1, 0]
    assert list(col["named_rule"]) == [1, 1, 1]
    assert list(col["coverage"]) == [0.5, 0.5, 0.0] and list(col["section_coverage"]) == [0.5, 0.5, 0.0]


def _feature(name: str, scale: str = "1", extra: str = "") -> str:
    return f'[[feature]]\nname = "{name}"\nmean = 0\nscale = {scale}\nweight = 1\n{extra}\n'


@pytest.mark.parametrize("body, words", [
    (_feature("bm25"), "missing ['coverage'"),                                   # the others are missing
    ("".join(_feature(n) for n in rank.FEATURES) + _feature("bm25"), "repeated ['bm25']"),
    ("".join(_feature(n) for n in rank.FEATURES) + _feature("tf_idf"), "unknown ['tf_idf']"),
    ("".join(_feature(n, scale="0" if n == "vector" else "1") for n in rank.FEATURES), "greater than 0"),
    ("".join(_feature(n, extra="wieght = 2" if n == "vector" else "") for n in rank.FEATURES), "wieght"),
    ("[[feature]\n", "expected [[feature]] tables"),
])
def test_a_broken_weights_file_is_named_with_its_problem(tmp_path, body, words):
    broken = tmp_path / "ranker.toml"
    broken.write_text(body)
    with pytest.raises(ConfigError) as error:
        rank.load_ranker(broken)
    assert "ranker.toml" in str(error.value) and words in str(error.value)


def test_the_shipped_weights_load():
    ranker = rank.load_ranker()
    assert len(ranker.weight) == len(rank.FEATURES) and (ranker.scale > 0).all()
    assert ranker.weight[rank.FEATURES.index("misses_codes")] < 0 < ranker.weight[rank.FEATURES.index("bm25")]


def test_the_snapshot_follows_documents_indexed_later(any_store):
    def chunk(doc: str, body: str) -> Chunk:
        return Chunk(doc_id=doc, seq=0, label=f"[{doc}]", heading=doc, text=body, codes=())
    index_chunks(any_store, "rank_test", [chunk("one", "Remote monitoring of physiologic parameters.")])
    assert [h.doc_id for h in retrieve(any_store, "physiologic monitoring", 3, ("rank_test",)).hits] == ["one"]
    index_chunks(any_store, "rank_test", [chunk("one", "Remote monitoring of physiologic parameters."),
                                          chunk("two", "Zebrafish husbandry is not a Medicare service.")])
    hits = retrieve(any_store, "zebrafish husbandry", 3, ("rank_test",)).hits
    assert hits and hits[0].doc_id == "two" and hits[0].text.startswith("Zebrafish")


def test_a_collection_with_no_paragraphs_gives_no_hits_and_no_error(any_store):
    # An emptied collection (a forced rebuild deletes before it inserts) has no candidates at all.
    result = retrieve(any_store, "chronic care management", 5, ("emptied_collection",))
    assert result.hits == () and result.warnings == ()
