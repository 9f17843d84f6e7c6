"""Near-duplicate paragraphs: the CY 2025 rule prints the APCM code descriptors four times, and the
MSSP proposed and final rules repeat whole background paragraphs. Two texts are near-duplicates when
their word 5-shingles overlap by at least 80% (Jaccard), so showing both adds nothing."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Sequence, TypeVar

SHINGLE = 5
NEAR = 0.8          # Jaccard of 5-shingles; measured: true repeats score >= 0.83, distinct paragraphs < 0.5
T = TypeVar("T")


@lru_cache(maxsize=20_000)     # paragraph texts repeat across questions; ~2 ms of a question's 20
def shingles(text: str, size: int = SHINGLE) -> frozenset[str]:
    """Lower-case word n-grams of a text (a short text is its own single shingle).

    >>> sorted(shingles("A b, c d", size=3))
    ['a b c', 'b c d']
    """
    words = re.findall(r"[a-z0-9]+", text.lower())
    return frozenset(" ".join(words[i:i + size]) for i in range(max(1, len(words) - size + 1)))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def drop_near_duplicates(items: Sequence[T], text_of: Callable[[T], str], keep: int | None = None) -> list[T]:
    """`items` in order without any item that near-duplicates an earlier kept one (at most `keep`).

    >>> drop_near_duplicates(["one two three four five six", "One two three four five six.", "x"], str)
    ['one two three four five six', 'x']
    """
    kept: list[tuple[T, frozenset[str]]] = []
    for item in items:
        signature = shingles(text_of(item))
        if all(jaccard(signature, other) < NEAR for _, other in kept):
            kept.append((item, signature))
            if keep is not None and len(kept) == keep:
                break
    return [item for item, _ in kept]


def duplicate_groups(texts: dict[str, str]) -> dict[str, str]:
    """key -> the first key (in order) whose text it near-duplicates, or itself.

    >>> duplicate_groups({"a": "one two three four five six", "b": "x y", "c": "one two three four five six"})
    {'a': 'a', 'b': 'b', 'c': 'a'}
    """
    signatures = {key: shingles(text) for key, text in texts.items()}
    groups: dict[str, str] = {}
    for key, signature in signatures.items():
        groups[key] = next((g for g in dict.fromkeys(groups.values())
                            if jaccard(signature, signatures[g]) >= NEAR), key)
    return groups
