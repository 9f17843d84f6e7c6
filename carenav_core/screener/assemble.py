"""Deterministic assembly: the report a navigator sees, built from rules, retrieval and layer 3.

Confidence comes from the rules classification, retrieval score and unknown count (the model's label
is discarded); citations only from chunk ids that were retrieved; official links from the manifest;
source links from the rules and figures actually applied. Everything a person reads is in plain words.
"""
from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from carenav_core.llm import ModelClient
from carenav_core.params import TAG_MEANINGS
from carenav_core.screener.branches import what_would_change
from carenav_core.screener.corpus import ManifestEntry, ProgramSearch, load_manifest
from carenav_core.screener.engine import Classification, Context, ProgramResult, beside, screen
from carenav_core.screener.evidence import gather_evidence
from carenav_core.screener.explain import Candidate, Explanation, ProgramSummary, deterministic_summary, explain
from carenav_core.screener.intake import load_intake_options
from carenav_core.screener.profile import Profile, answer_warnings
from carenav_core.screener.rules import msp
from carenav_core.screener.thresholds import load_thresholds
from carenav_core.screener.words import FACT_WORDS
from carenav_core.settings import PROJECT_ROOT

REPORT_FILE = PROJECT_ROOT / "data" / "programs" / "report.toml"
RESULT_WORDS = {"likely_relevant": "Likely relevant", "possibly_relevant": "Possibly relevant",
                "excluded": "Not likely to apply"}
FOLLOW_UP = {
    "age": "How old is the person?", "monthly_income": "About how much income does the household get each month?",
    "assets": "About how much do they have in countable savings and other assets?",
    "nursing_facility_level_of_care": "Has DSHS assessed them for nursing-facility level of care?",
    "medicare_parts": "Which parts of Medicare do they have?", "apple_health": "Do they have Apple Health, and which kind?",
    "living_situation": "Where do they live now?", "household_size": "How many people live and buy food together?",
    "has_unpaid_caregiver": "Does a family member or friend help them without pay?",
    "veteran_status": "Are they a veteran or a veteran's surviving spouse?", "county": "Which county do they live in?",
}


class _Confidence(BaseModel):
    model_config = ConfigDict(extra="forbid")
    good_retrieval: float = Field(ge=0, le=1, description="Best retrieval score that counts as good evidence.")
    mostly_unknown: float = Field(ge=0, le=1, description="Share of unknown facts above which follow-ups are added.")


class _ReportFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    confidence: _Confidence


@lru_cache(maxsize=2)
def report_settings(path: Path = REPORT_FILE) -> _Confidence:
    """The confidence cut-offs of data/programs/report.toml."""
    return _ReportFile.model_validate(tomllib.loads(path.read_text(encoding="utf-8"))).confidence


def disclaimer(manifest: dict[str, ManifestEntry]) -> str:
    """The disclaimer, with the date the program facts were gathered (from the corpus manifest)."""
    gathered = max(entry.gathered for entry in manifest.values())
    return ("This screen is not an eligibility decision. It shows which programs may be worth a closer look, "
            f"based on the answers given and on program figures gathered by {gathered:%B %-d, %Y} that may have "
            "changed. The agency that runs each program decides eligibility.")


@dataclass(frozen=True, kw_only=True)
class Citation:
    chunk_id: str
    heading: str
    source_url: str


@dataclass(frozen=True, kw_only=True)
class Source:
    """A page that supports a rule applied or a figure compared, with the figure's confidence tag."""

    title: str
    href: str
    tag: str = ""


@dataclass(frozen=True, kw_only=True)
class Card:
    """One candidate program as shown to the navigator."""

    program: str
    name: str
    classification: str
    result: str
    confidence: str
    why: tuple[str, ...]
    missing: tuple[str, ...]
    what_would_change: tuple[str, ...]
    still_needed: tuple[str, ...]
    summary: str
    claims: tuple[str, ...]
    citations: tuple[Citation, ...]
    sources: tuple[Source, ...]
    official_url: str
    retrieval_failed: bool
    tier: str = ""
    judged_for: str = ""
    judged_for_because: str = ""   # why it was judged for them (`judged_for_reason`)
    figures_missing: tuple[str, ...] = ()
    contact: str = ""              # how to reach the program when its official link is a law (manifest `contact`)
    also_judged: str = ""          # the same program judged for the other person too (engine.also_for_care_receiver)
    deciding: str = ""             # a likely result's deciding criterion met, in words (`deciding_reason`)


@dataclass(frozen=True, kw_only=True)
class Exclusion:
    program: str
    name: str
    failed_rules: tuple[str, ...]
    sources: tuple[Source, ...] = ()


@dataclass(frozen=True, kw_only=True)
class SummaryRow:
    program: str
    result: str
    why: str
    next_step: str


@dataclass(frozen=True, kw_only=True)
class Report:
    on: date
    summary: tuple[SummaryRow, ...]
    cards: tuple[Card, ...]
    excluded: tuple[Exclusion, ...]
    follow_up_questions: tuple[str, ...]
    notices: tuple[str, ...]
    warnings: tuple[str, ...]
    legend: tuple[str, ...]
    disclaimer: str
    writer: str
    model_overridden: int
    model_proposals: int
    rejections: tuple[str, ...]
    passages_dropped: int = 0          # rule passages left out of the model's prompt to fit its context

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["on"] = self.on.isoformat()
        return data


def confidence(classification: Classification, best_score: float, unknown_count: int, retrieval_failed: bool,
               *, good_retrieval: float | None = None) -> str:
    """high / medium / low from the rules classification, retrieval quality and the number of unknowns.

    >>> confidence(Classification.LIKELY, 0.8, 0, False), confidence(Classification.POSSIBLY, 0.8, 3, False)
    ('high', 'low')
    """
    good = report_settings().good_retrieval if good_retrieval is None else good_retrieval
    points = (2 if classification is Classification.LIKELY else 1) - (0 if best_score >= good else 1)
    points -= 1 if retrieval_failed else 0
    points -= min(unknown_count, 2) // 2 + (1 if unknown_count >= 3 else 0)
    return "high" if points >= 2 else "medium" if points == 1 else "low"


def _citations(summary: ProgramSummary, candidate: Candidate) -> tuple[Citation, ...]:
    passages = {p.chunk_id: p for p in candidate.evidence.passages}
    cited = dict.fromkeys(c for claim in summary.claims for c in claim.chunk_ids if c in passages)
    return tuple(Citation(chunk_id=c, heading=passages[c].heading, source_url=passages[c].source_url) for c in cited)


def rule_sources(result: ProgramResult) -> tuple[Source, ...]:
    """The legal source of every rule applied and the references of every figure compared, deduplicated."""
    found: dict[str, Source] = {}
    for outcome in result.outcomes:       # a page that gave a figure is cited for the figure, with its tag
        for figure in outcome.verdict.thresholds:
            for ref in figure.reference:
                found.setdefault(ref.href, Source(title=f"{ref.title} — {figure.label}", href=ref.href, tag=figure.tag))
    for outcome in result.outcomes:
        found.setdefault(outcome.legal.href, Source(title=outcome.legal.title, href=outcome.legal.href))
    return tuple(found.values())


def still_needed(summary: ProgramSummary, result: ProgramResult) -> tuple[str, ...]:
    """Model and rule needs in words, without repeats (compared case-insensitively)."""
    items = (*summary.still_needed, *(FACT_WORDS[f] for f in result.unknown_fields), *result.needs,
             *result.program.always_needed)
    unique: dict[str, str] = {}
    for item in items:
        unique.setdefault(" ".join(item.lower().split()).rstrip("."), item)
    return tuple(unique.values())


def _context(on: date) -> Context:
    return Context(thresholds=load_thresholds(), on=on, options=load_intake_options())


def _tier(result: ProgramResult, profile: Profile, on: date) -> str:
    if result.program.key != msp.KEY or result.classification is Classification.EXCLUDED:
        return ""
    return msp.tier(profile, _context(on))


def build_card(candidate: Candidate, summary: ProgramSummary, manifest: dict[str, ManifestEntry], *,
               profile: Profile | None = None, on: date | None = None, other: ProgramResult | None = None) -> Card:
    """A candidate's card; `other`, the same program judged for the other person, is said on it (`also_judged`)."""
    result, evidence = candidate.result, candidate.evidence
    return Card(program=candidate.key, name=result.program.name, classification=result.classification.value,
                result=RESULT_WORDS[result.classification.value],
                confidence=confidence(result.classification, evidence.best_score, len(result.unknown_fields),
                                      evidence.retrieval_failed),
                why=tuple(dict.fromkeys(o.verdict.reason for o in result.outcomes if o.status == "pass")),
                missing=_each_once(o.verdict.reason for o in result.unknown_rules),
                what_would_change=what_would_change(result, profile, _context(on) if on else None),
                still_needed=still_needed(summary, result),
                summary=summary.summary, claims=tuple(c.text for c in summary.claims),
                citations=_citations(summary, candidate), sources=rule_sources(result),
                official_url=manifest[candidate.key].official_url, retrieval_failed=evidence.retrieval_failed,
                contact=manifest[candidate.key].contact,
                tier=_tier(result, profile, on) if profile is not None and on is not None else "",
                judged_for="the person they care for" if result.for_care_receiver else "",
                judged_for_because=judged_for_reason(result),
                figures_missing=result.figures_missing, also_judged=also_judged(other) if other else "",
                deciding=deciding_reason(result))


def deciding_reason(result: ProgramResult) -> str:
    """What decided a likely result, for the summary table: the income test met when the program has one (the test
    the answers sit closest to, and the one a reader looks for), else its financial-eligibility criterion (MAC's
    categorically needy Apple Health), else the first criterion met in the program's own order; '' for a result that
    is not likely (its row says what is missing or what excludes it)."""
    if result.classification is not Classification.LIKELY:
        return ""
    met = [o for o in result.outcomes if o.status == "pass"]
    money = next((o for o in met if "income" in o.rule), None) or \
        next((o for o in met if o.document.endswith("#financial-eligibility")), None)
    return (money or met[0]).verdict.reason if met else ""


SERVES_THE_PERSON_CARED_FOR = "the program serves the person receiving care"


def judged_for_reason(result: ProgramResult) -> str:
    """Why a result is the person cared for's, in words ('' for the person screened's own): a care program serves the
    person receiving care (programs.md sections 2-5); a program serving either (VA pension: section 10) moved to them
    because the person screened is excluded, with the criteria that exclude them (engine.screen_program)."""
    if not result.for_care_receiver:
        return ""
    if result.replaces is None:
        return SERVES_THE_PERSON_CARED_FOR
    failed = "; ".join(f"{o.label} — {o.verdict.reason}" for o in result.replaces.failed_rules)
    return f"the person screened is not likely to qualify themselves ({failed}), so it is judged for the person they " \
           "care for instead"


def whom(result: ProgramResult) -> str:
    return "the person they care for" if result.for_care_receiver else "the person screened"


def also_judged(result: ProgramResult) -> str:
    """One line for a program's other result: whom it was judged for, its result and why, in words."""
    if result.classification is Classification.EXCLUDED:
        why = "; ".join(f"{o.label} — {o.verdict.reason}" for o in result.failed_rules)
    elif result.classification is Classification.POSSIBLY:
        why = "not known yet: " + "; ".join(_each_once(o.verdict.reason for o in result.unknown_rules))
    else:
        why = "every criterion checked is met on the answers given"
    return f"Also judged for {whom(result)}: {RESULT_WORDS[result.classification.value].lower()} ({why})."


def card_results(results: tuple[ProgramResult, ...]) -> tuple[ProgramResult, ...]:
    """The results that get a card: a program's first result not excluded (the person screened's own, else the one
    judged for the person they care for: engine.screen), one a program."""
    shown: dict[str, ProgramResult] = {}
    for result in results:
        if result.classification is not Classification.EXCLUDED:
            shown.setdefault(result.program.key, result)
    return tuple(shown.values())


def listed_exclusions(results: tuple[ProgramResult, ...]) -> tuple[ProgramResult, ...]:
    """The excluded results the report lists: all, except one judged for the person they care for whose program has
    the person screened's own card (it is said on that card)."""
    carded = {r.program.key: r for r in card_results(results)}
    return tuple(r for r in results if r.classification is Classification.EXCLUDED and not
                 (r.for_care_receiver and r.program.key in carded and not carded[r.program.key].for_care_receiver))




def _each_once(reasons) -> tuple[str, ...]:
    """Each open reason once, and none that another one on the card already says in full ("not known yet: household
    income a month" beside "not known yet: household income a month; under the gross limit there is no resource
    test")."""
    unique = list(dict.fromkeys(reasons))
    # a reason another one says in full gives way to it in its own place, so the first open question stays first
    # (a VA card: "not known yet: whether they are a veteran ..." is said by the income criterion's longer reason)
    fuller = (max((o for o in unique if o.startswith(r)), key=len) for r in unique)
    return tuple(dict.fromkeys(fuller))
def follow_up_questions(profile: Profile, explanation: Explanation) -> tuple[str, ...]:
    """The model's questions, plus fixed ones for the most useful unknowns when most answers are missing."""
    asked = [q for s in explanation.report.programs for q in s.follow_up_questions]
    unknown = profile.unknown_fields()
    if len(unknown) / len(vars(profile)) > report_settings().mostly_unknown:
        asked += [FOLLOW_UP[f] for f in unknown if f in FOLLOW_UP]
    return tuple(dict.fromkeys(asked))


def summary_row(card: Card) -> SummaryRow:
    """One line of the table at the top: the program, the result, the main reason and the next step."""
    # An open rule says what is missing; a likely result names what decided it (`deciding_reason`).
    why = card.missing[0] if card.classification == "possibly_relevant" and card.missing else (
        card.deciding or (card.why[-1] if card.why else card.summary))
    step = (f"Ask: {card.still_needed[0]}" if card.classification == "possibly_relevant" and card.still_needed
            else f"Contact the program: {card.contact} ({card.official_url})" if card.contact
            else f"Contact the program ({card.official_url})")
    status = next((n for n in card.still_needed if "waitlist" in n), None)
    if card.classification == "likely_relevant" and status:   # MAC / TSOA: a statewide waitlist was reported
        step += f"; ask about the {status}"
    name = f"{card.name} — {card.tier}" if card.tier else card.name
    # named for whom it was judged, as an exclusion row is (`_exclusion`): when that is the person cared for, or when
    # the program was judged for both, so a row's why and "Ask" are never read as about the wrong person
    if card.judged_for:
        name += f" — for {card.judged_for}"
    elif card.also_judged:
        name += " — for the person screened"
    return SummaryRow(program=name, result=card.result, why=why, next_step=step)


def _exclusion(result: ProgramResult, results: tuple[ProgramResult, ...]) -> Exclusion:
    """An excluded program as listed: named for whom it was judged whenever that is not plainly the person screened
    (judged only for the person they care for), or when it was judged for both, so a failed rule ("age 16 vs minimum
    55 years") is never read as the screened person's own."""
    labelled = result.for_care_receiver or beside(results, result) is not None
    return Exclusion(program=result.program.key,
                     name=f"{result.program.name} — for {whom(result)}" if labelled else result.program.name,
                     failed_rules=tuple(f"{o.label} — {o.verdict.reason}" for o in result.failed_rules),
                     sources=rule_sources(result))


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
    cards = tuple(build_card(by_key[k], summaries[k], manifest, profile=profile, on=on,
                             other=beside(results, by_key[k].result)) for k in dict.fromkeys(order))
    excluded = tuple(_exclusion(r, results) for r in listed_exclusions(results))
    summary = (*(summary_row(c) for c in cards),
               *(SummaryRow(program=e.name, result=RESULT_WORDS["excluded"], why=e.failed_rules[0],
                            next_step="Nothing now; ask again if the situation changes") for e in excluded))
    notices = tuple(dict.fromkeys(f"{m[0].upper()}{m[1:]}; a program that rests on it shows as possibly relevant "
                                  "until it is added." for r in results if r.classification is not Classification.EXCLUDED
                                  for m in r.figures_missing))
    return Report(on=on, summary=summary, cards=cards, excluded=excluded,
                  follow_up_questions=follow_up_questions(profile, explanation), notices=notices,
                  warnings=answer_warnings(profile, on=on), legend=tuple(f"[{k}] {v}" for k, v in TAG_MEANINGS.items()),
                  disclaimer=disclaimer(manifest), writer=explanation.writer, model_overridden=overridden,
                  model_proposals=len(proposed) if explanation.writer == "model" else 0,
                  rejections=explanation.rejections, passages_dropped=explanation.passages_dropped)


def run_screen(profile: Profile, *, on: date, search: ProgramSearch | None, model: ModelClient | None = None) -> Report:
    """The whole screener: rules -> retrieval for candidates -> explanation -> assembly."""
    results = screen(profile, on=on)
    candidates = tuple(Candidate(result=r, evidence=gather_evidence(r, profile, search)) for r in card_results(results))
    explanation = explain(profile, candidates, model=model)
    return assemble(profile, results, candidates, explanation, on=on)
