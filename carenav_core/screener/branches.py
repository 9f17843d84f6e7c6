"""What an open answer would do to a program, computed: the program's rules re-run with the answer set to each value
it could take, and the consequence worded from the re-run's classification, never from a template.

A yes-or-no answer is run both ways (and two of them under each combination). An amount (income, assets) is run at two
of the intake's own brackets: the highest that meets the criterion, and the lowest above it that the criterion reads
as it reads the top bracket (over the limit, not a bracket straddling it). Any other open answer (age, county, where
they live, a fact the intake does not ask) is not run: the card then says only that it decides the criterion.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import product

from carenav_core.screener.engine import Classification, ProgramResult, screen_program
from carenav_core.screener.intake import Bracket
from carenav_core.screener.profile import Profile
from carenav_core.screener.rules.base import Context, Outcome, Rule, Status, Verdict
from carenav_core.screener.words import FACT_WORDS, YES_NO_WORDS, facts_in_words

BRACKETED = {"monthly_income": "income_brackets", "assets": "asset_brackets"}   # field: IntakeOptions attribute
MAX_YES_NO = 2          # open yes-or-no answers of one criterion run under every combination (4 re-runs)


@dataclass(frozen=True, kw_only=True)
class Branch:
    """One value an open answer could take, and the program re-run with it."""

    words: str                 # "if disabled", "at $10,001 – $17,600"
    result: ProgramResult


def what_would_change(result: ProgramResult, profile: Profile | None, context: Context | None) -> tuple[str, ...]:
    """For each open criterion of a possibly-relevant program, what each answer to its open question would make of the
    program (`branches`), or, when that cannot be computed (or no profile and context are given), only that the answer
    decides the criterion."""
    subject = None if profile is None else profile.care_receiver() if result.for_care_receiver else profile
    return tuple(_line(outcome, result, subject, context) for outcome in result.unknown_rules)


def _line(outcome: Outcome, result: ProgramResult, subject: Profile | None, context: Context | None) -> str:
    fields = outcome.verdict.unknown_fields
    found = branches(outcome, result, subject, context) if subject is not None and context is not None else ()
    if not found:
        settle = facts_in_words(fields) if fields else "; ".join(outcome.verdict.needs) or "more detail"
        return f"{outcome.label}: knowing {settle} decides this criterion."
    said = " ".join(f"{b.words[0].upper()}{b.words[1:]}: {consequence(b.result, outcome)}." for b in found)
    return f"{outcome.label}: depends on {facts_in_words(fields)}. {said}"


def branches(outcome: Outcome, result: ProgramResult, subject: Profile, context: Context) -> tuple[Branch, ...]:
    """The program re-run on `subject` (the person it serves) under each value of the criterion's open answers;
    empty when they cannot all be set (an answer that is neither yes-or-no nor an amount, or too many)."""
    fields = outcome.verdict.unknown_fields
    if not fields:
        return ()
    if len(fields) == 1 and fields[0] in BRACKETED:
        values = _amounts(fields[0], _rule(result, outcome), subject, context)
    elif len(fields) <= MAX_YES_NO and all(f in YES_NO_WORDS for f in fields):
        values = [("if " + " and ".join(w for _, w in combo), dict(zip(fields, (v for v, _ in combo))))
                  for combo in product(*(_yes_no(f) for f in fields))]
    else:
        return ()
    program = result.program
    return tuple(Branch(words=words, result=screen_program(program, replace(subject, **answers), context))
                 for words, answers in values)


def _yes_no(field: str) -> tuple[tuple[bool, str], ...]:
    yes, no = YES_NO_WORDS[field]
    return (True, yes), (False, no)


def _rule(result: ProgramResult, outcome: Outcome) -> Rule:
    return next(r for r in result.program.rules if r.name == outcome.rule)


def _amounts(field: str, rule: Rule, subject: Profile, context: Context) -> list[tuple[str, dict[str, Bracket]]]:
    """Two of the intake's brackets for `field`: the highest that meets `rule`, and the lowest above it that `rule`
    reads as it reads the top bracket (the far side of the limit, past any bracket straddling it). Empty when either
    is missing (no bracket meets it, or none above reads as the top)."""
    brackets = getattr(context.options, BRACKETED[field])
    verdicts = [rule.evaluate(replace(subject, **{field: b}), context).verdict for b in brackets]
    meeting = [i for i, v in enumerate(verdicts) if v.status is Status.PASS]
    if not meeting:
        return []
    top = _reading(verdicts[-1])
    above = next((i for i in range(meeting[-1] + 1, len(brackets)) if _reading(verdicts[i]) == top), None)
    if above is None:
        return []
    return [(f"at {brackets[i].label()}", {field: brackets[i]}) for i in (meeting[-1], above)]


def _reading(verdict: Verdict) -> tuple[object, ...]:
    """What a verdict decides, without its wording of the amount: its status and what it would still ask."""
    return verdict.status, verdict.unknown_fields, verdict.needs


def consequence(result: ProgramResult, outcome: Outcome) -> str:
    """The re-run program's classification in words: likely; possibly, with what it would still ask; or not likely,
    with the criteria it would fail (when not only the criterion the answer is about)."""
    if result.classification is Classification.LIKELY:
        return "likely relevant"
    if result.classification is Classification.EXCLUDED:
        failed = [o.label for o in result.failed_rules if o.rule != outcome.rule]
        return f"not likely to apply{' (not met: ' + '; '.join(failed) + ')' if failed else ''}"
    asks = list(dict.fromkeys((*(FACT_WORDS[f] for f in result.unknown_fields), *result.needs)))
    return f"still possibly relevant; it would still ask: {'; '.join(asks)}" if asks else "still possibly relevant"
