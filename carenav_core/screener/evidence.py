"""Layer 2 retrieval for candidates: one profile-derived query per program, restricted to its chunks."""
from __future__ import annotations

import logging
from dataclasses import dataclass

from carenav_core.errors import CareNavError
from carenav_core.screener.corpus import QUALITY_THRESHOLD, TOP_K, Passage, ProgramSearch
from carenav_core.screener.engine import ProgramResult
from carenav_core.screener.profile import Profile, is_unknown

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """Passages retrieved for one candidate; `retrieval_failed` when the best is below the threshold."""

    program: str
    passages: tuple[Passage, ...]
    best_score: float
    retrieval_failed: bool

    @property
    def chunk_ids(self) -> frozenset[str]:
        return frozenset(p.chunk_id for p in self.passages)


def _profile_terms(profile: Profile) -> list[str]:
    terms = []
    if not is_unknown(profile.age):
        terms.append(f"age {profile.age}")
    if not is_unknown(profile.living_situation):
        terms.append(f"lives {profile.living_situation.replace('_', ' ')}")
    if profile.caring_for_someone is True or profile.has_unpaid_caregiver is True:
        terms.append("unpaid family caregiver")
    if not is_unknown(profile.medicare_parts) and profile.medicare_parts:
        terms.append("has Medicare")
    return terms


def candidate_query(profile: Profile, result: ProgramResult) -> str:
    """A search query naming the program, its criteria still open or met, and the person's situation."""
    open_first = sorted(result.outcomes, key=lambda o: o.status != "unknown")
    criteria = "; ".join(o.label for o in open_first)
    return f"{result.program.name}: {criteria}. What it provides and how to apply. {', '.join(_profile_terms(profile))}"


def gather_evidence(result: ProgramResult, profile: Profile, search: ProgramSearch | None, *,
                    k: int = TOP_K, threshold: float = QUALITY_THRESHOLD) -> Evidence:
    """Search one candidate's chunks; other programs' passages are dropped, search errors fail retrieval."""
    key = result.program.key
    try:
        found = search(key, candidate_query(profile, result), k) if search else []
    except (CareNavError, OSError) as exc:
        log.warning("retrieval for %s failed: %s", key, exc)
        found = []
    passages = tuple(sorted((p for p in found if p.program == key), key=lambda p: -p.score)[:k])
    best = passages[0].score if passages else 0.0
    return Evidence(program=key, passages=passages if best >= threshold else (), best_score=best,
                    retrieval_failed=best < threshold)
