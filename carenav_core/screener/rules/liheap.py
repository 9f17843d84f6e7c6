"""LIHEAP energy assistance, administered by WA Commerce through local agencies."""
from __future__ import annotations

from carenav_core.screener.profile import Profile
from carenav_core.screener.rules.base import (Context, Program, Status, Verdict, at_or_below, rule, under_smallest,
                                              unknown, yes_no)

KEY = "liheap"
COMMERCE = ("Commerce: energy assistance", "https://commerce.wa.gov/ko/energy-policy/energy-assistance")
COMMERCE_POLICY = ("Commerce LIHEAP policy (2016 archive)",
                   "http://eot.us.archive.org/eot/20161202053616/http:/fortress.wa.gov/com/liheappolicy/Page.aspx?hid=42")


@rule(program=KEY, label="Household income at or below the LIHEAP limit for the household size", document="liheap#income-limit", legal=COMMERCE)
def income_within_150_percent_fpl(profile: Profile, context: Context) -> Verdict:
    def check(person: Profile) -> Verdict:
        return at_or_below(person.monthly_income, context.thresholds.for_size(
            "liheap_income", context.on, person.household_size), "household income")
    missing = under_smallest(unknown(profile, "monthly_income", "household_size"), profile, check, household_size=1)
    return missing or check(profile)


@rule(program=KEY, label="Pays for heat directly or through rent", document="liheap#other-requirements",
      legal=COMMERCE_POLICY)
def pays_for_heating(profile: Profile, context: Context) -> Verdict:
    result = yes_no(profile, "pays_for_heating", "pays for heat", "does not pay for heat")
    if result.status is Status.PASS and profile.living_situation == "nursing_facility":
        # programs.md section 12 row 3: the household pays for heat directly or through rent; a nursing facility's
        # charge is not rent, and its resident does not heat a home of their own (a spouse at home may)
        return Verdict(status=Status.UNKNOWN, reason="the answers say they pay for heat, and that they live in a "
                       "nursing facility, whose resident does not pay for heat directly or through rent",
                       needs=("who pays for heat: a home the household heats (a spouse at home, for example), not "
                              "the nursing facility's charge",))
    return result


PROGRAM = Program(
    key=KEY, name="LIHEAP energy assistance",
    rules=(income_within_150_percent_fpl, pays_for_heating),
    always_needed=("whether the household already received LIHEAP this program year",
                   "whether a tribe's own LIHEAP program serves the household"),
    official_url=COMMERCE[1])
