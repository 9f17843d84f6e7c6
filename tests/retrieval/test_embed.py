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
