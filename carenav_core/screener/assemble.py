"""Deterministic assembly: the report a navigator sees, built from rules, retrieval and layer 3.

Confidence comes from the rules classification, retrieval score and unknown count (the model's label
is discarded); citations only from chunk ids that were retrieved; official links from the manifest.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import date
from typing import Any

from carenav_core.llm import ModelClient
from carenav_core.screener.corpus import ManifestEntry, ProgramSearch, load_manifest
from carenav_core.screener.engine import Classification, ProgramResult, screen
from carenav_core.screener.evidence import gather_evidence
from carenav_core.screener.explain import Candidate, Explanation, ProgramSummary, deterministic_summary, explain
from carenav_core.screener.profile import Profile

DISCLAIMER = ("This screen is not an eligibility decision. It shows which programs may be worth a closer look, "
              "based on the answers given and on thresholds gathered on 2026-11-29 that may have changed. "
              "The agency that runs each program decides eligibility.")
MOSTLY_UNKNOWN = 0.5   # share of intake fields unknown above which generic follow-up questions are added
FOLLOW_UP = {
    "age": "How old is the person?", "monthly_income": "About how much income does the household get each month?",
    "assets": "About how much do they have in countable savings and other assets?",
    "nursing_facility_level_of_care": "Has DSHS assessed them for nursing-facility level of care?",
    "medicare_parts": "Which parts of Medicare do they have?", "apple_health": "Do they have Apple Health, and which kind?",
    "living_situation": "Where do they live now?", "household_size": "How many people live and buy food together?",
    "has_unpaid_caregiver": "Does a family member or friend help them without pay?",
    "veteran_status": "Are they a veteran or a veteran's surviving spouse?", "county": "Which county do they live in?",
}


@dataclass(frozen=True, kw_only=True)
class Citation:
    chunk_id: str
    heading: str
    source_url: str


@dataclass(frozen=True, kw_only=True)
class Card:
    """One candidate program as shown to the navigator."""

    program: str
    name: str
    classification: str
    confidence: str
    why: tuple[str, ...]
    missing: tuple[str, ...]
    what_would_change: tuple[str, ...]
    still_needed: tuple[str, ...]
    summary: str
    claims: tuple[str, ...]
    citations: tuple[Citation, ...]
    official_url: str
    retrieval_failed: bool


@dataclass(frozen=True, kw_only=True)
class Exclusion:
    program: str
    name: str
    failed_rules: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Report:
    on: date
    cards: tuple[Card, ...]
    excluded: tuple[Exclusion, ...]
    follow_up_questions: tuple[str, ...]
    disclaimer: str
    writer: str
    model_overridden: int
    model_proposals: int
    rejections: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["on"] = self.on.isoformat()
        return data


def confidence(classification: Classification, best_score: float, unknown_count: int, retrieval_failed: bool) -> str:
    """high / medium / low from the rules classification, retrieval quality and the number of unknowns.

    >>> confidence(Classification.LIKELY, 0.8, 0, False), confidence(Classification.POSSIBLY, 0.8, 3, False)
    ('high', 'low')
    """
    points = (2 if classification is Classification.LIKELY else 1) - (0 if best_score >= 0.6 else 1)
    points -= 1 if retrieval_failed else 0
    points -= min(unknown_count, 2) // 2 + (1 if unknown_count >= 3 else 0)
    return "high" if points >= 2 else "medium" if points == 1 else "low"


def what_would_change(result: ProgramResult) -> tuple[str, ...]:
    """For a possibly-relevant program: which open answer would make it likely or excluded."""
    open_rules = result.unknown_rules
    lines = []
    for outcome in open_rules:
        settle = ", ".join(outcome.verdict.unknown_fields or outcome.verdict.needs) or "more detail"
        if_pass = "likely relevant" if len(open_rules) == 1 else "one step closer to likely relevant"
        lines.append(f"{outcome.label}: knowing {settle} decides it — if met, {if_pass}; if not met, excluded.")
    return tuple(lines)


def _citations(summary: ProgramSummary, candidate: Candidate) -> tuple[Citation, ...]:
    passages = {p.chunk_id: p for p in candidate.evidence.passages}
    cited = dict.fromkeys(c for claim in summary.claims for c in claim.chunk_ids if c in passages)
    return tuple(Citation(chunk_id=c, heading=passages[c].heading, source_url=passages[c].source_url) for c in cited)


def build_card(candidate: Candidate, summary: ProgramSummary, manifest: dict[str, ManifestEntry]) -> Card:
    result, evidence = candidate.result, candidate.evidence
    still = (*summary.still_needed, *result.unknown_fields, *result.needs, *result.program.always_needed)
    return Card(program=candidate.key, name=result.program.name, classification=result.classification.value,
                confidence=confidence(result.classification, evidence.best_score, len(result.unknown_fields),
                                      evidence.retrieval_failed),
                why=tuple(o.verdict.reason for o in result.outcomes if o.status == "pass"),
                missing=tuple(o.verdict.reason for o in result.unknown_rules),
                what_would_change=what_would_change(result), still_needed=tuple(dict.fromkeys(still)),
                summary=summary.summary, claims=tuple(c.text for c in summary.claims),
                citations=_citations(summary, candidate), official_url=manifest[candidate.key].official_url,
                retrieval_failed=evidence.retrieval_failed)


def follow_up_questions(profile: Profile, explanation: Explanation) -> tuple[str, ...]:
    """The model's questions, plus fixed ones for the most useful unknowns when most answers are missing."""
    asked = [q for s in explanation.report.programs for q in s.follow_up_questions]
    unknown = profile.unknown_fields()
    if len(unknown) / len(vars(profile)) > MOSTLY_UNKNOWN:
        asked += [FOLLOW_UP[f] for f in unknown if f in FOLLOW_UP]
    return tuple(dict.fromkeys(asked))


def assemble(profile: Profile, results: tuple[ProgramResult, ...], candidates: tuple[Candidate, ...],
             explanation: Explanation, *, on: date, manifest: dict[str, ManifestEntry] | None = None) -> Report:
    """Combine everything; the model's label is only counted, never used."""
    manifest = manifest or load_manifest()
    by_key = {c.key: c for c in candidates}
    proposed = {s.program: s for s in explanation.report.programs if s.program in by_key}
    overridden = sum(1 for s in proposed.values() if s.proposed_label != by_key[s.program].result.classification)
    # A candidate the model left out still gets a card, written deterministically.
    summaries = {**{c.key: deterministic_summary(c) for c in candidates}, **proposed}
    order = [k for k in explanation.report.priorities if k in by_key] + list(summaries)
    cards = tuple(build_card(by_key[k], summaries[k], manifest) for k in dict.fromkeys(order))
    excluded = tuple(Exclusion(program=r.program.key, name=r.program.name,
                               failed_rules=tuple(f"{o.label} — {o.verdict.reason}" for o in r.failed_rules))
                     for r in results if r.classification is Classification.EXCLUDED)
    return Report(on=on, cards=cards, excluded=excluded, follow_up_questions=follow_up_questions(profile, explanation),
                  disclaimer=DISCLAIMER, writer=explanation.writer, model_overridden=overridden,
                  model_proposals=len(proposed) if explanation.writer == "model" else 0,
                  rejections=explanation.rejections)


def run_screen(profile: Profile, *, on: date, search: ProgramSearch | None, model: ModelClient | None = None) -> Report:
    """The whole screener: rules -> retrieval for candidates -> explanation -> assembly."""
    results = screen(profile, on=on)
    candidates = tuple(Candidate(result=r, evidence=gather_evidence(r, profile, search))
                       for r in results if r.classification is not Classification.EXCLUDED)
    explanation = explain(profile, candidates, model=model)
    return assemble(profile, results, candidates, explanation, on=on)
