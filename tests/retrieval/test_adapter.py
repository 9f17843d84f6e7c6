"""The query adapter (issue 12): fitting moves questions toward their paragraphs, the shipped file belongs to
the offline embedder and the rule text only, a bad file is a clear error, and the search really uses it."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pgvector.sqlalchemy import Vector
from sqlalchemy import text

from carenav_core.errors import ConfigError
from carenav_core.retrieval.adapter import (ADAPTER_FILE, QueryAdapter, adapter_for, fit_adapter, load_adapter,
                                            save_adapter)
from carenav_core.retrieval.rank import RANKER_FILE
from carenav_core.retrieval.embed import OnnxMiniLM
from carenav_core.retrieval.search import candidates


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def _skewed_problem(seed: int, n: int = 300, d: int = 24):
    """Documents, and questions that are each document seen through a fixed distortion plus noise: the raw
    nearest document is often the wrong one, a linear map of the question can undo most of the distortion."""
    rng = np.random.default_rng(seed)
    documents = _unit(rng.normal(size=(n, d)))
    distortion = 0.5 * np.eye(d) + rng.normal(size=(d, d)) / np.sqrt(d)
    targets = rng.integers(0, n, size=600)
    questions = _unit(documents[targets] @ distortion + 0.1 * rng.normal(size=(600, d)))
    return documents, questions, targets


def _top1(questions: np.ndarray, documents: np.ndarray, targets: np.ndarray) -> float:
    return float(np.mean(np.argmax(questions @ documents.T, axis=1) == targets))


def test_fitting_moves_unseen_questions_to_their_documents():
    documents, questions, targets = _skewed_problem(seed=3)
    train, test = slice(0, 450), slice(450, 600)
    matrix = fit_adapter(questions[train], targets[train], documents, epochs=40, rate=0.01, l2=1e-3)
    adapter = QueryAdapter(matrix=matrix, embedder="x", collections=frozenset({"rules"}))
    adapted = np.array([adapter.apply(q) for q in questions[test]])
    before, after = _top1(questions[test], documents, targets[test]), _top1(adapted, documents, targets[test])
    assert before < 0.5 and after > 0.9, (before, after)   # seen: 0.17 -> 0.97


def test_fitting_is_deterministic_for_a_seed_and_checks_its_input():
    documents, questions, targets = _skewed_problem(seed=4, n=50)
    first = fit_adapter(questions[:60], targets[:60], documents, epochs=2)
    assert np.array_equal(first, fit_adapter(questions[:60], targets[:60], documents, epochs=2))
    assert not np.array_equal(first, fit_adapter(questions[:60], targets[:60], documents, epochs=2, seed=1))
    with pytest.raises(ValueError, match="as many targets"):
        fit_adapter(questions[:3], targets[:2], documents)


def test_apply_returns_a_unit_vector_and_a_zero_matrix_changes_nothing():
    q = _unit(np.arange(1.0, 9.0))
    zero = QueryAdapter(matrix=np.zeros((8, 8), np.float32), embedder="x", collections=frozenset({"rules"}))
    assert np.allclose(zero.apply(q), q)
    some = QueryAdapter(matrix=np.diag(np.linspace(-0.5, 0.5, 8)).astype(np.float32), embedder="x",
                        collections=frozenset({"rules"}))
    assert abs(float(np.linalg.norm(some.apply(q))) - 1) < 1e-6 and not np.allclose(some.apply(q), q)


def test_the_shipped_adapter_belongs_to_the_offline_embedder_and_the_rule_text_only():
    adapter = load_adapter(ADAPTER_FILE)
    assert adapter is not None, f"{ADAPTER_FILE} is missing: run bench/fit_ranker.py --write"
    assert adapter.matrix.shape == (OnnxMiniLM.dimension, OnnxMiniLM.dimension)
    assert 0 < float(np.abs(adapter.matrix).max()) < 1          # fitted, and near the identity (L2)

    class Other:
        name, dimension = "ollama:nomic-embed-text", 384

    onnx = type("Onnx", (), {"name": OnnxMiniLM.name, "dimension": OnnxMiniLM.dimension})()
    assert adapter_for(onnx, ("rules",)) is adapter
    assert adapter_for(Other(), ("rules",)) is None                  # another embedder: vectors unchanged
    assert adapter_for(onnx, ("programs",)) is None                  # the screener's corpus: unchanged
    assert adapter_for(onnx, ("rules", "programs")) is None


def test_the_shipped_weights_were_fitted_with_the_shipped_adapter():
    # bench/fit_ranker.py writes both; the re-ranker's weights trust cosines of this very adapter.
    recorded = [line.split(":", 1)[1].strip() for line in RANKER_FILE.read_text(encoding="utf-8").splitlines()
                if line.startswith("# adapter sha256:")]
    assert recorded == [load_adapter(ADAPTER_FILE).digest]


def test_a_damaged_file_is_an_error_naming_it_and_the_search_goes_on_without_it(tmp_path: Path, caplog):
    good = tmp_path / "good.npz"
    save_adapter(good, np.eye(4, dtype=np.float32) * 0.1, "x", ("rules",))
    data = good.read_bytes()
    for name, damaged in (("truncated", data[:len(data) // 2]), ("empty", b""),
                          ("flipped", data[:200] + bytes(b ^ 0xFF for b in data[200:400]) + data[400:])):
        path = tmp_path / f"{name}.npz"
        path.write_bytes(damaged)
        with pytest.raises(ConfigError, match=f"{name}.npz"):
            load_adapter(path)
        embedder = type("E", (), {"name": "x", "dimension": 4})()
        with caplog.at_level("ERROR"):
            assert adapter_for(embedder, ("rules",), path) is None
        assert f"{name}.npz" in caplog.text and "without the query adapter" in caplog.text
    assert adapter_for(type("E", (), {"name": "x", "dimension": 4})(), ("rules",), good) is not None


def test_a_missing_file_means_no_adapter_and_a_bad_one_names_the_file(tmp_path: Path):
    assert load_adapter(tmp_path / "none.npz") is None
    broken = tmp_path / "broken.npz"
    broken.write_text("not an npz", encoding="utf-8")
    with pytest.raises(ConfigError, match="broken.npz"):
        load_adapter(broken)
    oblong = tmp_path / "oblong.npz"
    np.savez(oblong, matrix=np.zeros((3, 4)), embedder=np.array("x"), collections=np.array(["rules"]))
    with pytest.raises(ConfigError, match=r"oblong.npz: matrix must be square"):
        load_adapter(oblong)
    good = tmp_path / "good.npz"
    save_adapter(good, np.eye(4) * 0.1, "x", ("rules",))
    loaded = load_adapter(good)
    assert loaded.embedder == "x" and loaded.collections == {"rules"} and np.allclose(loaded.matrix, np.eye(4) * 0.1)


_STORED = text("SELECT id, embedding FROM chunks WHERE id = ANY(CAST(:ids AS bigint[]))").columns(embedding=Vector())


def test_the_search_pools_with_the_adapted_question(pg_store):
    question = "Can APCM be billed in the same month as chronic care management?"
    rng = np.random.default_rng(0)
    adapter = QueryAdapter(matrix=(0.3 * rng.normal(size=(384, 384)) / np.sqrt(384)).astype(np.float32),
                           embedder=pg_store.embedder.name, collections=frozenset({"rules"}))
    raw = pg_store.embedder.embed_query(question)
    with pg_store.engine.begin() as conn:
        adapted = candidates(conn, pg_store, question, ("rules",), adapt=adapter)
        plain = candidates(conn, pg_store, question, ("rules",), adapt=False)
        stored = {r.id: np.asarray(r.embedding, dtype=np.float32)
                  for r in conn.execute(_STORED, {"ids": adapted.ids + plain.ids})}
    assert np.allclose(adapted.similarity, [stored[i] @ adapter.apply(raw) for i in adapted.ids], atol=1e-4)
    assert np.allclose(plain.similarity, [stored[i] @ raw for i in plain.ids], atol=1e-4)
    assert set(adapted.ids) != set(plain.ids) or not np.allclose(adapted.similarity, plain.similarity)


def test_by_default_the_rule_text_search_uses_the_shipped_adapter(pg_store):
    question = "Is an initiating visit required before starting advanced primary care management?"
    shipped = load_adapter(ADAPTER_FILE)
    raw = pg_store.embedder.embed_query(question)
    with pg_store.engine.begin() as conn:
        found = candidates(conn, pg_store, question, ("rules",))
        stored = {r.id: np.asarray(r.embedding, dtype=np.float32) for r in conn.execute(_STORED, {"ids": found.ids})}
    assert np.allclose(found.similarity, [stored[i] @ shipped.apply(raw) for i in found.ids], atol=1e-4)
    assert not np.allclose(found.similarity, [stored[i] @ raw for i in found.ids], atol=1e-4)
