"""What a rule is: one criterion of one program, returning pass | fail | unknown with its sources."""
from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import product
from datetime import date
from enum import StrEnum
from typing import Callable, Literal

from carenav_core.screener.intake import Bracket, IntakeOptions
from carenav_core.screener.profile import Profile, contradictory, is_unknown
from carenav_core.screener.thresholds import Reference, Threshold, ThresholdNotInForce, ThresholdTable
from carenav_core.screener.words import YES_NO_WORDS, facts_in_words, place_words


class Status(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"


@dataclass(frozen=True, kw_only=True)
class Context:
    """What every rule may read besides the profile: the thresholds, the date, the intake options."""

    thresholds: ThresholdTable
    on: date
    options: IntakeOptions


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """A rule's answer. `needs` names facts beyond the intake that would settle an unknown."""

    status: Status
    reason: str
    unknown_fields: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    thresholds: tuple[Threshold, ...] = ()
    figure_missing: str = ""   # set when a figure is not on file for the date (the Screen page shows a notice)
    opened_by: str = ""        # the contradicted answer that left this criterion open (engine.open_where_contradicted)
    met_as: str = ""           # a PASS settled otherwise than by the criterion's own test (already enrolled): the
                               # criterion in words, shown in place of the rule's label, so no limit is claimed met


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """A verdict with the rule that produced it, so the UI can cite the criterion."""

    program: str
    rule: str
    label: str
    document: str
    legal: Reference
    verdict: Verdict

    @property
    def status(self) -> Status:
        return self.verdict.status


@dataclass(frozen=True, kw_only=True)
class Rule:
    name: str
    program: str
    label: str
    document: str
    legal: Reference
    check: Callable[[Profile, Context], Verdict]

    def evaluate(self, profile: Profile, context: Context) -> Outcome:
        """Run the check; a limit with no value in force on the date makes the rule unknown; a check left open only on
        yes-or-no answers is decided when every answer they could take decides it alike (`settled_either_way`)."""
        verdict = settled_either_way(self._checked, profile, context, self._checked(profile, context))
        return Outcome(program=self.program, rule=self.name, label=verdict.met_as or self.label, document=self.document,
                       legal=self.legal, verdict=verdict)

    def _checked(self, profile: Profile, context: Context) -> Verdict:
        try:
            return self.check(profile, context)
        except ThresholdNotInForce as exc:
            return figure_not_on_file(exc)


def figure_not_on_file(exc: ThresholdNotInForce) -> Verdict:
    """The UNKNOWN a criterion is when a figure it compares has no value in force on the date."""
    return Verdict(status=Status.UNKNOWN, reason=f"{exc}, so this cannot be checked yet",
                   needs=(f"the current figure from the agency ({exc})",), figure_missing=str(exc))


# Intake answers with two values (profile field: (value, words) each): a check left open on these alone is run under
# every combination, and asks them only when the results differ
EITHER_WAY: dict[str, tuple[tuple[bool, str], ...]] = {
    name: ((False, YES_NO_WORDS[name][1]), (True, YES_NO_WORDS[name][0])) for name in ("married", "disability")}


def settled_either_way(check: Callable[[Profile, Context], Verdict], profile: Profile, context: Context,
                       open_: Verdict) -> Verdict:
    """An UNKNOWN whose only unanswered facts (`unknown_fields`) are yes-or-no answers (EITHER_WAY), decided when
    `check` passes under every value they could take, or fails under every one: the answer would not change the
    result, so it is not asked. Anything else (a result that differs, or stays open) is `open_` unchanged.

    >>> from carenav_core.screener.profile import Unknown
    >>> person = Profile(**{f: Unknown(reason="unanswered") for f in Profile.__dataclass_fields__})
    >>> open_ = Verdict(status=Status.UNKNOWN, reason="?", unknown_fields=("married",))
    >>> settled_either_way(lambda p, c: verdict(False, "over"), person, None, open_).status
    <Status.FAIL: 'fail'>
    >>> settled_either_way(lambda p, c: verdict(p.married, "?"), person, None, open_).status
    <Status.UNKNOWN: 'unknown'>
    """
    names = open_.unknown_fields
    if open_.status is not Status.UNKNOWN or not names or any(n not in EITHER_WAY for n in names) or \
            any(not is_unknown(getattr(profile, n)) for n in names):
        return open_
    found = []
    for values in product(*(EITHER_WAY[n] for n in names)):
        result = check(replace(profile, **{n: value for n, (value, _) in zip(names, values)}), context)
        if result.status is Status.UNKNOWN:
            return open_
        found.append((" and ".join(words for _, words in values), result))
    if len({result.status for _, result in found}) != 1:
        return open_
    said = "; ".join(f"if {words}: {result.reason}" for words, result in found)
    return Verdict(status=found[0][1].status, reason=f"{said} (the same either way, so {facts_in_words(names)} "
                   "does not change it)", thresholds=tuple(dict.fromkeys(t for _, r in found for t in r.thresholds)))


def rule(*, program: str, label: str, document: str, legal: tuple[str, str]) -> Callable[..., Rule]:
    """Declare a criterion: `document` is the corpus chunk id, `legal` the (title, href) of its source."""
    def wrap(check: Callable[[Profile, Context], Verdict]) -> Rule:
        return Rule(name=check.__name__, program=program, label=label, document=document,
                    legal=Reference(title=legal[0], href=legal[1]), check=check)
    return wrap


@dataclass(frozen=True, kw_only=True)
class Program:
    """A screened program: its rules and the facts it needs that the intake never collects."""

    key: str
    name: str
    rules: tuple[Rule, ...]
    always_needed: tuple[str, ...]
    official_url: str
    # whose facts the rules read (Profile.care_receiver); "either": the person's, and when those exclude a caregiver,
    # the person they care for (a veteran's pension is the veteran's: a caregiver may care for one)
    serves: Literal["person", "care_receiver", "either"] = "person"


def unknown(profile: Profile, *names: str, reason: str = "") -> Verdict | None:
    """An UNKNOWN verdict naming the unanswered fields among `names`, or None if all are known. An answer that
    contradicts the others (`profile.contradictory`) is named as such, and checking it is what the verdict needs."""
    missing = tuple(n for n in names if is_unknown(getattr(profile, n)))
    if not missing:
        return None
    conflicting = tuple(n for n in missing if contradictory(getattr(profile, n)))
    said = reason or f"not known yet: {facts_in_words(missing)}"
    if not conflicting:
        return Verdict(status=Status.UNKNOWN, unknown_fields=missing, reason=said)
    conflict = f"the answer about {facts_in_words(conflicting)} contradicts other answers (see the warning)"
    return Verdict(status=Status.UNKNOWN, unknown_fields=missing, reason=f"{said}: {conflict}",
                   needs=(f"which answer is right about {facts_in_words(conflicting)} (it contradicts other answers; see "
                          "the warning)",))


def limits_unknown(profile: Profile, *names: str) -> Verdict | None:
    """`unknown` for the facts a couple-or-single limit needs: "married" counts as unknown only when whether couple
    limits apply is (a household of one is judged alone whatever the marriage: Profile.couple); when the marriage is
    known and the household size is not, the household size is what is asked (whether the spouse lives with them)."""
    def asked(name: str) -> tuple[str, ...]:
        if name != "married":
            return (name,)
        if not is_unknown(profile.couple):
            return ()
        return ("married",) if is_unknown(profile.married) else ("household_size",)
    return unknown(profile, *dict.fromkeys(n for name in names for n in asked(name)))


def verdict(passed: bool, reason: str, *thresholds: Threshold) -> Verdict:
    """PASS or FAIL with a reason and the figures compared."""
    return Verdict(status=Status.PASS if passed else Status.FAIL, reason=reason, thresholds=thresholds)


def at_least(value: int, limit: Threshold, what: str) -> Verdict:
    """PASS when value >= limit (ages)."""
    return verdict(value >= limit.amount, f"{what} {value} vs minimum {limit.shown()}", limit)


# How far above a floor (a figure whose newer value is not on file, ScreenerValue.at_least) the figure in force may
# be: every floor is indexed yearly (poverty guidelines, the SSI and VA cost-of-living adjustments, SNAP's resource
# limit). The largest yearly rises of recent decades came after the 2022 inflation: the 8.7% COLA of 2023 and SNAP's
# resource limit for a member 60+ or disabled, $3,750 to $4,250 (+13.3%) in FY2023 (it moves in $250 steps). An
# answer above the floor plus this share is above the figure in force.
FLOOR_HEADROOM = 0.15


def floor_headroom(limit: Threshold) -> float:
    """How far above a floor the figure in force may be: FLOOR_HEADROOM compounded over the yearly index changes
    since the figure carried (`Threshold.index_steps`).

    >>> from datetime import date
    >>> two = Threshold(key="k", label="l", unit="USD", amount=1.0, effective=date(2028, 1, 1), tag="D",
    ...                 reference=(), at_least=True, index_steps=2)
    >>> round(floor_headroom(two), 4)
    0.3225
    """
    return (1 + FLOOR_HEADROOM) ** limit.index_steps - 1


def at_or_below(bracket: Bracket, limit: Threshold, what: str, *, scale: float = 1.0) -> Verdict:
    """Compare an answer bracket (whole dollars, both ends included) with an at-or-below limit.

    The whole bracket at or below passes, the whole bracket above fails, and a bracket that straddles the
    limit is unknown: an approximation may make a result unknown, never flip it. `scale` turns a monthly
    bracket into the limit's unit (x12 for a yearly limit). Against a floor (the figure in force not on file) only a
    pass, or a whole bracket above the floor plus its headroom (`floor_headroom`), is settled.
    """
    lower = bracket.lower * scale
    upper = None if bracket.upper is None else bracket.upper * scale
    said = f"{what} {bracket.label()}{' (times 12 for a year)' if scale == 12 else ''} vs limit {limit.describe()}"
    if upper is not None and upper <= limit.amount:
        return verdict(True, f"{said}: the whole range is at or below the limit", limit)
    headroom = floor_headroom(limit)
    if limit.at_least and limit.indexed and lower > limit.amount * (1 + headroom):
        years = "a year" if limit.index_steps == 1 else f"{limit.index_steps} years"
        return verdict(False, f"{said}: the whole range is above even {headroom:.0%} more than this figure "
                       f"(the figure in force from {limit.effective:%B %-d, %Y} is not on file; these indexed figures "
                       f"have never risen that much in {years})", limit)
    if limit.at_least:          # the figure in force is not seen and may be higher: only a pass is settled
        missing = f"{limit.label}: the figure in force from {limit.effective:%B %-d, %Y} is not on file (it is at least " \
                  f"{limit.shown()})"
        return Verdict(status=Status.UNKNOWN, reason=f"{said}: the figure in force from {limit.effective:%B %-d, %Y} "
                       "is not on file, and it is not lower than this one", thresholds=(limit,),
                       needs=(f"the current figure from the agency ({missing})",), figure_missing=missing)
    if lower > limit.amount:
        return verdict(False, f"{said}: the whole range is above the limit", limit)
    return Verdict(status=Status.UNKNOWN, reason=f"{said}: the range includes amounts on both sides of the limit",
                   thresholds=(limit,), needs=(f"the exact {what} (the range given includes {limit.shown()})",))


def only_passes(result: Verdict, need: str, *fields: str) -> Verdict:
    """A FAIL that the compared figure cannot settle (wrong income scope, deductions) becomes UNKNOWN."""
    if result.status is not Status.FAIL:
        return result
    return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}; {need}", unknown_fields=fields,
                   needs=(need,), thresholds=result.thresholds)


OWN_SHARE = ("the person's own share of the assets (the answer covers the person and spouse; a married person living "
             "apart from the spouse, or in a nursing facility, is judged on their own)")


def own_share(profile: Profile, result: Verdict) -> Verdict:
    """Assets vs a single limit for a married person judged alone (`Profile.couple` False: living apart, or in a
    nursing facility). The intake's assets answer covers the person and spouse, so a pass holds (their own share is no
    more) and a fail does not: their own share is asked (WAC 182-512-0960(1)(e): only spouses who live together count
    each other's resources)."""
    if profile.married is not True or profile.couple is not False:
        return result
    return only_passes(result, OWN_SHARE)


def income_scope_exact(profile: Profile, *, individual: bool) -> bool:
    """Whether household income is exactly the income the limit counts.

    Individual limits (TSOA, SIL) count the applicant's own income: exact only for a household of 1.
    Single/couple limits count the person and spouse: exact for a household of 1 (single, or married and living
    apart: `Profile.couple`) or 2 (married).
    """
    if is_unknown(profile.household_size) or (not individual and is_unknown(profile.couple)):
        return False
    return profile.household_size == (1 if individual or not profile.couple else 2)


def income_within(profile: Profile, limit: Threshold, what: str, *, individual: bool) -> Verdict:
    """Household income bracket vs a personal or couple limit; household income can only prove a pass."""
    result = at_or_below(profile.monthly_income, limit, what)
    if income_scope_exact(profile, individual=individual):
        return result
    own = "the person's own income" if individual or profile.couple is False else "the income of the person and spouse"
    scope = tuple(n for n in ("household_size",) if is_unknown(profile.household_size))
    return only_passes(result, f"{own} (household income covers more people)", *scope)


def minimum_age(profile: Profile, context: Context, key: str, field: str = "age") -> Verdict:
    """Age field vs an age parameter."""
    missing = unknown(profile, field)
    return missing or at_least(getattr(profile, field), context.thresholds.amount(key, context.on),
                               "age of the person cared for" if field == "care_recipient_age" else "age")


def nursing_facility_level(profile: Profile) -> Verdict:
    """A CARE assessment result; 'not assessed' stays unknown (the assessment is what settles it)."""
    missing = unknown(profile, "nursing_facility_level_of_care",
                      reason="nursing-facility level of care has not been assessed or is not known")
    if missing:
        return Verdict(status=missing.status, reason=missing.reason, unknown_fields=missing.unknown_fields,
                       needs=("a DSHS CARE assessment of nursing-facility level of care (WAC 388-106-0355)",))
    return verdict(profile.nursing_facility_level_of_care,
                   "assessed at nursing-facility level of care" if profile.nursing_facility_level_of_care
                   else "assessed as not at nursing-facility level of care")


def at_home(profile: Profile, homes: tuple[str, ...]) -> Verdict:
    """Living situation within the settings a program serves."""
    missing = unknown(profile, "living_situation")
    return missing or verdict(profile.living_situation in homes, f"lives: {place_words(profile.living_situation)}")


def yes_no(profile: Profile, field: str, yes: str, no: str) -> Verdict:
    """PASS on yes, FAIL on no, UNKNOWN when unanswered."""
    missing = unknown(profile, field)
    return missing or verdict(getattr(profile, field), yes if getattr(profile, field) else no)


def under_smallest(missing: Verdict | None, profile: Profile, check: Callable[[Profile], Verdict],
                   **smallest: object) -> Verdict | None:
    """With only the household's size or marriage unknown (`missing` names them), income wholly under the smallest
    limit (`smallest`: household_size=1, married=False, the fields `check` is run with) passes whatever they are, for
    the limits rise with the household; anything else stays `missing`. None when nothing is missing."""
    # the single limits (married=False) hold whatever the household size too: it only says whether a spouse counts
    settles = set(smallest) | ({"household_size"} if smallest.get("married") is False else set())
    if missing is None or set(missing.unknown_fields) - settles:
        return missing
    result = check(replace(profile, **smallest))
    if result.status is not Status.PASS:
        return missing
    unsettled = " and ".join(_UNSETTLED[name] for name in missing.unknown_fields)
    return replace(result, reason=f"{result.reason} ({'a single person' if 'married' in smallest else 'one person'}"
                   f"'s, the smallest: it holds whatever the {unsettled})")


_UNSETTLED = {"married": "marital status", "household_size": "household size"}


def gross_of_disregard(profile: Profile, context: Context, countable: Threshold) -> Verdict:
    """Household gross income vs a countable-income limit plus the SSI-related $20 general income disregard."""
    disregard = context.thresholds.amount("ssi_general_income_disregard", context.on)
    gross = replace(countable, amount=countable.amount + disregard.amount,
                    label=f"{countable.label}, plus the {disregard.shown()} general income disregard: the limit "
                          "on gross income")
    result = income_within(profile, gross, f"household income (the limit includes the {disregard.shown()} "
                           "general income disregard)", individual=False)
    return replace(result, thresholds=(countable, disregard))
