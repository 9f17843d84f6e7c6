"""The deterministic in-memory ProgramSearch used in tests: the evaluation's word-count cosine searcher.

`MemorySearch(scale=0.4)` pushes every score below the quality threshold (retrieval_failed).
"""
from __future__ import annotations

from carenav_core.screener.evaluation import LexicalSearch as MemorySearch

__all__ = ["MemorySearch"]
