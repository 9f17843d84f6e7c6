"""The labelled retrieval queries (data/eval/retrieval_queries.toml) and the ranking metrics computed
on them: recall@k, reciprocal rank and nDCG@k over chunk labels, reported per split.

Relevance is binary and judged per label. Near-identical relevant paragraphs (the APCM code
descriptors are printed four times in the CY 2025 rule) form one relevance group: showing one of them
answers the query, so a group counts once, whichever member is shown.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from carenav_core.retrieval.dedup import duplicate_groups
from carenav_core.settings import PROJECT_ROOT
from carenav_core.tomlfile import read_tables

QUERIES_FILE = PROJECT_ROOT / "data" / "eval" / "retrieval_queries.toml"
# More labelled queries, all "tuning", written later from the paragraphs without reading QUERIES_FILE and kept
# apart from its held-out paragraphs. bench/cv_fitting.py measures what they add to the fit out of fold (so far:
# nothing beyond noise, so the shipped fit does not use them); never used for held-out figures.
TRAINING_FILE = PROJECT_ROOT / "data" / "eval" / "retrieval_training.toml"
Split = Literal["tuning", "heldout"]


class LabelledQuery(BaseModel):
    """One `[[query]]` of the labelled set."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    question: str = Field(min_length=3, description="The analyst's question, as typed.")
    category: Literal["code", "family", "topic", "rule_year", "negative", "v1"] = Field(
        description="How the question is asked; v1 = the 31 queries the first weights were tuned on.")
    split: Split = Field(description="heldout: never used to fit a weight or threshold.")
    origin: str = Field(description="Which labelling round wrote it.")
    documents: list[str] = Field(description="doc_ids the relevant chunks come from.")
    relevant: list[str] = Field(description="Labels of the chunks that answer it; [] = a negative.")
    evidence: list[str] = Field(description="Regexes over chunk text (or explicit labels) that select `relevant`.")

    @property
    def negative(self) -> bool:
        return not self.relevant


def load_labelled(path: Path = QUERIES_FILE) -> tuple[LabelledQuery, ...]:
    """The labelled queries; ConfigError names the file, the query number and the field."""
    return tuple(read_tables(path, "query", LabelledQuery))


def fitting_queries() -> tuple[LabelledQuery, ...]:
    """What the shipped weights are fitted on: the positive queries of QUERIES_FILE's tuning half."""
    return tuple(q for q in load_labelled() if q.split == "tuning" and not q.negative)


def recall_at(ranked: Sequence[str], groups: dict[str, str], k: int) -> float:
    """Relevant groups among the first k labels / min(k, relevant groups).

    >>> recall_at(["a", "x", "b"], {"a": "a", "b": "b", "c": "c"}, 2)
    0.5
    """
    found = {groups[label] for label in ranked[:k] if label in groups}
    return len(found) / max(1, min(k, len(set(groups.values()))))


def reciprocal_rank(ranked: Sequence[str], groups: dict[str, str], k: int = 10) -> float:
    """1 / rank of the first relevant label within the first k (0 when none).

    >>> reciprocal_rank(["x", "y", "a"], {"a": "a"})
    0.3333333333333333
    """
    return next((1 / rank for rank, label in enumerate(ranked[:k], start=1) if label in groups), 0.0)


def ndcg_at(ranked: Sequence[str], groups: dict[str, str], k: int = 10) -> float:
    """Binary-gain nDCG@k; a group earns its gain once (at its best rank).

    >>> round(ndcg_at(["x", "a"], {"a": "a"}), 3)
    0.631
    """
    seen: set[str] = set()
    dcg = 0.0
    for rank, label in enumerate(ranked[:k], start=1):
        group = groups.get(label)
        if group is not None and group not in seen:
            seen.add(group)
            dcg += 1 / math.log2(rank + 1)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(k, len(set(groups.values()))) + 1))
    return dcg / ideal if ideal else 0.0


@dataclass(frozen=True, kw_only=True)
class Figures:
    """Mean metrics of one ranker over the positive queries of one split."""
    split: str
    queries: int
    recall_at_5: float
    mrr: float
    ndcg_at_10: float

    def line(self, label: str) -> str:
        return (f"{label:28s} {self.split:8s} n={self.queries:3d}  recall@5 {self.recall_at_5:.3f}  "
                f"MRR {self.mrr:.3f}  nDCG@10 {self.ndcg_at_10:.3f}")


def score(queries: Iterable[LabelledQuery], rank: Callable[[str], Sequence[str]],
          texts: dict[str, str], split: str) -> Figures:
    """Figures of a ranker (`rank(question)` -> labels, best first, at least 10) on the positive
    queries of `split` ("all" for both halves); `texts` (label -> chunk text) groups near-duplicates."""
    chosen = [q for q in queries if not q.negative and split in (q.split, "all")]
    rows = []
    for query in chosen:
        ranked = list(rank(query.question))
        groups = duplicate_groups({label: texts.get(label, label) for label in query.relevant})
        rows.append((recall_at(ranked, groups, 5), reciprocal_rank(ranked, groups), ndcg_at(ranked, groups)))
    means = [statistics.mean(column) if rows else 0.0 for column in zip(*rows)] or [0.0, 0.0, 0.0]
    return Figures(split=split, queries=len(chosen), recall_at_5=means[0], mrr=means[1], ndcg_at_10=means[2])
