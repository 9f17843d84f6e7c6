"""Spousal impoverishment (WAC 182-513-1350; 42 U.S.C. 1396r-5): what a married couple keeps when one spouse needs
long-term care. The intake's assets answer covers the person and spouse together."""
from __future__ import annotations

from dataclasses import replace

from carenav_core.screener.profile import Profile
from carenav_core.screener.rules.base import Context, Status, Verdict, at_or_below, only_passes
from carenav_core.screener.thresholds import Threshold, ThresholdNotInForce

PROTECTED = "the community spouse's protected resource amount (spousal impoverishment rules for long-term care)"


def spousal_ceiling(context: Context) -> tuple[Threshold, Threshold, Threshold]:
    """(ceiling, federal maximum CSRA, the institutionalized spouse's standard): the most a couple keeps under
    spousal impoverishment rules is the federal maximum community spouse resource allowance (programs.md section 1c
    row 15) plus the $2,000 standard of the spouse needing care (WAC 182-513-1350), the ceiling their sum."""
    csra = context.thresholds.amount("spousal_csra_federal_max", context.on)
    standard = context.thresholds.for_unit("ltc_resources", context.on, married=False)
    ceiling = replace(csra, amount=csra.amount + standard.amount,
                      label=f"{csra.label}, plus the {standard.shown()} resource standard of the spouse needing care")
    return ceiling, csra, standard


def above_spousal_ceiling(profile: Profile, context: Context) -> Verdict | None:
    """A FAIL when the couple's countable assets are wholly above anything spousal impoverishment rules protect (the
    federal maximum CSRA plus the institutionalized spouse's standard; a floor past its year only far above it);
    None otherwise."""
    ceiling, csra, standard = spousal_ceiling(context)
    result = at_or_below(profile.assets, ceiling, "the couple's countable assets")
    if result.status is not Status.FAIL:
        return None
    return Verdict(status=Status.FAIL, reason=f"{result.reason}: more than spousal impoverishment rules protect (the "
                   f"spouse at home keeps at most the federal maximum community spouse resource allowance, "
                   f"{csra.describe()}, and the spouse needing care the {standard.shown()} standard; WAC 182-513-1350)",
                   thresholds=(csra, standard))


def within_spousal_floor(profile: Profile, context: Context) -> Verdict | None:
    """A PASS when the couple's countable assets are wholly at or under what the spouse at home keeps at least (the
    state spousal resource standard: WAC 182-513-1355(3)(b) allocates the greater of half the couple's resources, up
    to the federal maximum, or this standard) plus the $2,000 standard of the spouse needing care (WAC 182-513-1350):
    whatever the allocation, the spouse needing care is left within the $2,000. None otherwise, or when no state
    standard is on file for the date (a floor past its year still decides a pass)."""
    try:
        state = context.thresholds.amount("spousal_csra_state_standard", context.on)
    except ThresholdNotInForce:
        return None
    standard = context.thresholds.for_unit("ltc_resources", context.on, married=False)
    floor = replace(state, amount=state.amount + standard.amount,
                    label=f"{state.label}, plus the {standard.shown()} resource standard of the spouse needing care")
    result = at_or_below(profile.assets, floor, "the couple's countable assets")
    if result.status is not Status.PASS:
        return None
    return Verdict(status=Status.PASS, reason=f"{result.reason}: the spouse at home keeps at least the state spousal "
                   f"resource standard ({state.describe()}), which leaves the spouse needing care within the "
                   f"{standard.shown()} standard (WAC 182-513-1355, 182-513-1350)", thresholds=(state, standard))


def spousal_resources(profile: Profile, context: Context, couple_result: Verdict) -> Verdict:
    """A married applicant's long-term-care resource test: a pass under the couple or single figure holds; wholly
    above the spousal impoverishment ceiling fails; wholly at or under the floor (the state standard the spouse at
    home keeps at least, plus the $2,000 of the spouse needing care) passes; between, the community spouse's protected
    amount (at most the federal maximum) decides, which the answers cannot show."""
    if couple_result.status is Status.PASS:
        return couple_result
    floor = within_spousal_floor(profile, context)
    if floor is not None:
        return replace(floor, reason=f"{couple_result.reason}; but {floor.reason}",
                       thresholds=couple_result.thresholds + floor.thresholds)
    return above_spousal_ceiling(profile, context) or only_passes(couple_result, PROTECTED)
