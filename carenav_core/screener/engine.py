"""Layer 1 engine: classify every program from its rule outcomes.

likely_relevant: every rule passes. possibly_relevant: none fails, at least one is unknown.
excluded: at least one fails (excluded programs never reach retrieval or the model).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from carenav_core.screener.intake import IntakeOptions, load_intake_options
from carenav_core.screener.profile import Profile
from carenav_core.screener.rules import PROGRAMS
from carenav_core.screener.rules.base import Context, Outcome, Program, Status
from carenav_core.screener.thresholds import ThresholdTable, load_thresholds


class Classification(StrEnum):
    LIKELY = "likely_relevant"
    POSSIBLY = "possibly_relevant"
    EXCLUDED = "excluded"


@dataclass(frozen=True, kw_only=True)
class ProgramResult:
    """One program's classification with the outcomes that produced it."""

    program: Program
    classification: Classification
    outcomes: tuple[Outcome, ...]
    for_care_receiver: bool = False   # judged on the facts of the person the screened caregiver cares for

    @property
    def failed_rules(self) -> tuple[Outcome, ...]:
        return tuple(o for o in self.outcomes if o.status is Status.FAIL)

    @property
    def unknown_rules(self) -> tuple[Outcome, ...]:
        return tuple(o for o in self.outcomes if o.status is Status.UNKNOWN)

    @property
    def unknown_fields(self) -> tuple[str, ...]:
        """Intake fields whose answers are missing and would settle an unknown rule, first-seen order."""
        return tuple(dict.fromkeys(f for o in self.unknown_rules for f in o.verdict.unknown_fields))

    @property
    def figures_missing(self) -> tuple[str, ...]:
        """Plain notices of figures not on file for the date (their rules fell back to unknown)."""
        return tuple(dict.fromkeys(o.verdict.figure_missing for o in self.outcomes if o.verdict.figure_missing))

    @property
    def needs(self) -> tuple[str, ...]:
        """Facts beyond the intake that would settle an unknown rule (exact income, an assessment...)."""
        return tuple(dict.fromkeys(n for o in self.unknown_rules for n in o.verdict.needs))


def classify(outcomes: tuple[Outcome, ...]) -> Classification:
    """Any fail excludes; otherwise any unknown makes it possible; otherwise likely."""
    statuses = {o.status for o in outcomes}
    if Status.FAIL in statuses:
        return Classification.EXCLUDED
    return Classification.POSSIBLY if Status.UNKNOWN in statuses else Classification.LIKELY


def screen_program(program: Program, profile: Profile, context: Context) -> ProgramResult:
    """Run one program's rules on the facts of the person it would serve (Profile.care_receiver)."""
    other = program.serves == "care_receiver" and profile.cares_for_another()
    subject = profile.care_receiver() if other else profile
    outcomes = tuple(r.evaluate(subject, context) for r in program.rules)
    result = ProgramResult(program=program, classification=classify(outcomes), outcomes=outcomes, for_care_receiver=other)
    if program.serves == "either" and result.classification is Classification.EXCLUDED and profile.cares_for_another():
        theirs = tuple(r.evaluate(profile.care_receiver(), context) for r in program.rules)
        if classify(theirs) is not Classification.EXCLUDED:
            return ProgramResult(program=program, classification=classify(theirs), outcomes=theirs,
                                 for_care_receiver=True)
    return result


def screen(profile: Profile, *, on: date, thresholds: ThresholdTable | None = None,
           options: IntakeOptions | None = None, programs: tuple[Program, ...] = PROGRAMS) -> tuple[ProgramResult, ...]:
    """Classify all programs for a profile on a date, in registry order."""
    context = Context(thresholds=thresholds or load_thresholds(), on=on, options=options or load_intake_options())
    return tuple(screen_program(p, profile, context) for p in programs)
