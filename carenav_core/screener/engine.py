"""Layer 1 engine: classify every program from its rule outcomes.

likely_relevant: every rule passes. possibly_relevant: none fails, at least one is unknown.
excluded: at least one fails (excluded programs never reach retrieval or the model).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from enum import StrEnum

from carenav_core.screener.intake import IntakeOptions, load_intake_options
from carenav_core.screener.profile import Profile
from carenav_core.screener.rules import PROGRAMS
from carenav_core.screener.rules.base import Context, Outcome, Program, Rule, Status, Verdict
from carenav_core.screener.thresholds import ThresholdTable, load_thresholds
from carenav_core.screener.words import YES_NO_WORDS, fact_words


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
    # the person screened's own excluded result, when a program serving "either" was judged for the person they care
    # for in its place (`screen_program`): why it moved, said on the card and in the warnings
    replaces: ProgramResult | None = None

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


def judge(program: Program, subject: Profile, context: Context, *, for_care_receiver: bool = False) -> ProgramResult:
    """Run one program's rules on `subject`, the person it is judged for; a criterion an answer flagged as
    contradicting the others decides is left open (`open_where_contradicted`)."""
    outcomes = tuple(open_where_contradicted(r, subject, context) for r in program.rules)
    return ProgramResult(program=program, classification=classify(outcomes), outcomes=outcomes,
                         for_care_receiver=for_care_receiver)


def open_where_contradicted(rule: Rule, subject: Profile, context: Context) -> Outcome:
    """The rule's outcome, unless an answer that contradicts the others (Profile.contradicted, warned about on the
    report) decides it: when the other answer would give another status, the criterion is left open, naming the
    contradiction as what is needed (as the other contradictions decide nothing: programs.md section 1a row 1 and
    section 1b row 8 for the disability; section 9 for caring for someone)."""
    outcome = rule.evaluate(subject, context)
    for name in subject.contradicted():
        other = rule.evaluate(replace(subject, **{name: not getattr(subject, name)}), context).verdict
        if other.status is outcome.status:
            continue
        given, flipped = (YES_NO_WORDS[name][1], YES_NO_WORDS[name][0]) if getattr(subject, name) is False else \
            YES_NO_WORDS[name]
        need = f"which answer is right about {fact_words(name)} (it contradicts other answers; see the warning)"
        return replace(outcome, verdict=Verdict(
            status=Status.UNKNOWN, needs=(need,), thresholds=outcome.verdict.thresholds + other.thresholds,
            opened_by=name,
            reason=f"if {given}, as answered: {outcome.verdict.reason}; but that answer contradicts other answers "
                   f"(see the warning), and if {flipped}: {other.reason}"))
    return outcome


def screen_program(program: Program, profile: Profile, context: Context) -> ProgramResult:
    """Run one program's rules on the facts of the person it would serve: the person screened, or, for a care-receiver
    program, the one they care for when they care for someone and their own answers show no care need
    (Profile.care_receiver, Profile.needs_care). A program serving "either" (VA pension) excluded for the person
    screened is judged for the one they care for, and that result kept (naming the exclusion it `replaces`) unless it
    is excluded too: a person cared for who cannot be the program's claimant at all (a child under 18 is neither a
    veteran nor a veteran's surviving spouse: programs.md section 10, va_pension.veteran_or_surviving_spouse) is
    never shown in the person screened's place."""
    other = program.serves == "care_receiver" and profile.cares_for_another() and not profile.needs_care()
    result = judge(program, profile.care_receiver() if other else profile, context, for_care_receiver=other)
    if program.serves == "either" and result.classification is Classification.EXCLUDED and (
            profile.cares_for_another() or profile.also_a_caregiver()):
        theirs = judge(program, profile.care_receiver(), context, for_care_receiver=True)
        if theirs.classification is not Classification.EXCLUDED:
            return replace(theirs, replaces=result)
    return result


def also_for_care_receiver(program: Program, profile: Profile, context: Context) -> ProgramResult | None:
    """A care-receiver program judged for the person the screened person cares for, kept beside the screened person's
    own result when both need care (their own answers show a care need: Profile.needs_care, or they are screened as
    someone the answerer cares for: Profile.also_a_caregiver); None otherwise. COPES,
    TSOA, PACE and MAC each serve the person needing care (programs.md sections 2-5), and here both do."""
    if program.serves != "care_receiver" or not (
            (profile.cares_for_another() and profile.needs_care()) or profile.also_a_caregiver()):
        return None
    return judge(program, profile.care_receiver(), context, for_care_receiver=True)


def screen(profile: Profile, *, on: date, thresholds: ThresholdTable | None = None,
           options: IntakeOptions | None = None, programs: tuple[Program, ...] = PROGRAMS) -> tuple[ProgramResult, ...]:
    """Classify all programs for a profile on a date, in registry order. A care-receiver program judged for both the
    person screened and the person they care for (`also_for_care_receiver`) has two results: the person's own first,
    then the other person's (`for_care_receiver`); `own_results` keeps one a program."""
    context = Context(thresholds=thresholds or load_thresholds(), on=on, options=options or load_intake_options())
    found = []
    for program in programs:
        found.append(screen_program(program, profile, context))
        theirs = also_for_care_receiver(program, profile, context)
        found += [theirs] if theirs is not None else []
    return tuple(found)


def own_results(results: tuple[ProgramResult, ...]) -> dict[str, ProgramResult]:
    """One result a program, by key: the first `screen` gave (the person screened's own where a program was judged
    for both them and the person they care for)."""
    found: dict[str, ProgramResult] = {}
    for result in results:
        found.setdefault(result.program.key, result)
    return found


def left_open_by(results: tuple[ProgramResult, ...], name: str) -> tuple[str, ...]:
    """The programs, in words, whose result the contradicted answer `name` left open (`open_where_contradicted`): not
    excluded on another criterion, with a criterion it opened. What the answer's warning says is left open."""
    return tuple(dict.fromkeys(
        f"{r.program.name}{' for the person they care for' if r.for_care_receiver else ''}" for r in results
        if r.classification is not Classification.EXCLUDED and any(o.verdict.opened_by == name for o in r.outcomes)))


def beside(results: tuple[ProgramResult, ...], result: ProgramResult) -> ProgramResult | None:
    """The other result of the same program (judged for the other person), or None when it was judged once."""
    return next((r for r in results if r.program.key == result.program.key and r is not result), None)
