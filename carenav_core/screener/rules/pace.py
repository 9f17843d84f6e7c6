"""PACE: WAC 182-513-1230 (financial) and WAC 388-106-0705 (functional); DSHS PACE page."""
from __future__ import annotations

from carenav_core.screener.profile import Profile
from carenav_core.screener.rules.base import (Context, Program, Status, Verdict, minimum_age, nursing_facility_level,
                                              rule, unknown, verdict)

KEY = "pace"
DSHS_PACE = ("DSHS: Program of All-inclusive Care for the Elderly",
             "https://www.dshs.wa.gov/altsa/program-all-inclusive-care-elderly-pace")
WAC_1230 = ("WAC 182-513-1230 PACE", "https://lawfilesext.leg.wa.gov/Law/WAC/WAC%20182%20%20TITLE/WAC%20182%20-513%20%20CHAPTER/WAC%20182%20-513%20-1230.htm")


@rule(program=KEY, label="Meets the minimum age", document="pace#age-and-category", legal=DSHS_PACE)
def aged_55_or_older(profile: Profile, context: Context) -> Verdict:
    return minimum_age(profile, context, "pace_min_age")


@rule(program=KEY, label="Nursing-facility level of care", document="pace#functional-need", legal=WAC_1230)
def assessed_nursing_facility_level_of_care(profile: Profile, context: Context) -> Verdict:
    return nursing_facility_level(profile)


@rule(program=KEY, label="Lives in a PACE service area", document="pace#service-area", legal=DSHS_PACE)
def lives_in_pace_service_area(profile: Profile, context: Context) -> Verdict:
    # Service areas are ZIP-code lists inside a few counties; the county can only rule PACE out.
    missing = unknown(profile, "county")
    if missing:
        return missing
    if profile.county not in context.options.pace_counties:
        return verdict(False, f"{profile.county} County has no PACE service area on file")
    return Verdict(status=Status.UNKNOWN, reason=f"{profile.county} County is partly covered by a PACE service area",
                   needs=("whether the home ZIP code is in a PACE service area",))


PROGRAM = Program(
    key=KEY, name="PACE (Program of All-inclusive Care for the Elderly)",
    rules=(aged_55_or_older, assessed_nursing_facility_level_of_care, lives_in_pace_service_area),
    always_needed=("able to live safely in the community with PACE services",
                   "home ZIP code (PACE service areas are ZIP-code lists)",
                   "for Medicaid-funded PACE: 65+, or 55+ and blind or disabled, and HCB waiver financial rules"),
    official_url="https://www.dshs.wa.gov/altsa/program-all-inclusive-care-elderly-pace",
    serves="care_receiver")
