"""Basic Food (Washington's SNAP): broad-based categorical eligibility at 200% FPL (WAC 388-414-0001)."""
from __future__ import annotations

from carenav_core.screener.profile import Profile, is_unknown
from carenav_core.screener.words import place_words
from carenav_core.screener.rules.base import (Context, Program, Status, Verdict, at_or_below, only_passes, rule,
                                              under_smallest, unknown, verdict)

KEY = "basic_food"
DSHS_CE = ("DSHS EA-Z: categorical eligibility for Basic Food (WAC 388-414-0001)",
           "https://dshs.wa.gov/esa/eligibility-z-manual-ea-z/categorical-eligibility-basic-food")
DSHS_STANDARDS = ("DSHS: Basic Food standards", "https://www.dshs.wa.gov/esa/standards/basic-food")


def elderly_or_disabled(profile: Profile, context: Context) -> bool | None:
    """Whether the household has a member 60+ or disabled (the screened person, or a spouse they care for: spouses
    are always one Basic Food household); None when the answers cannot say: a household of two or more whose other
    members' ages and disabilities the intake does not ask."""
    age_limit = context.thresholds.amount("basic_food_elderly_age", context.on).amount
    if (not is_unknown(profile.age) and profile.age >= age_limit) or profile.disability is True:
        return True
    spouse_age = profile.spouse_age()       # the spouse's own age, never the answering caregiver's read as it
    if profile.care_relationship == "spouse" and profile.couple is not False and \
            not is_unknown(spouse_age) and spouse_age >= age_limit:
        return True
    if is_unknown(profile.age) or is_unknown(profile.disability):
        return None
    if is_unknown(profile.household_size) or profile.household_size > 1:
        return None
    return False


WAC_0040 = ("WAC 388-408-0040 How does living in an institution affect my eligibility for Basic Food?",
            "https://app.leg.wa.gov/wac/default.aspx?cite=388-408-0040")
MEALS = "whether the facility provides most of their meals (more than half of three meals a day)"


@rule(program=KEY, label="Not living in an institution that provides most of their meals",
      document="basic_food#living-situation", legal=WAC_0040)
def not_in_an_institution(profile: Profile, context: Context) -> Verdict:
    """WAC 388-408-0040: a place that provides residents more than half of three meals a day is an institution, and
    most residents of institutions are not eligible (exceptions: subsidised elderly housing, some group homes and
    treatment centres, shelters). A nursing facility provides every meal; an adult family home or assisted living
    facility usually does, which the intake does not ask."""
    if is_unknown(profile.living_situation):
        # an exclusion needs its fact: most people do not live in an institution, and the answer stays open
        return verdict(True, "where they live was not given (only residents of a facility that provides most of "
                       "their meals are excluded)")
    if profile.living_situation == "nursing_facility":
        return verdict(False, "lives in a nursing facility, which provides their meals (residents of an institution "
                       "are not eligible)")
    if profile.living_situation in ("adult_family_home", "assisted_living"):
        return Verdict(status=Status.UNKNOWN, reason=f"lives {place_words(profile.living_situation)}; residents of a "
                       "facility that provides most of their meals are not eligible", needs=(MEALS,))
    return verdict(True, f"lives {place_words(profile.living_situation)}")


OTHER_MEMBERS = "whether another household member is 60 or older or disabled"


def gross_test(profile: Profile, context: Context) -> Verdict:
    """Household gross income vs the 200% FPL categorical-eligibility table."""
    def check(person: Profile) -> Verdict:
        return at_or_below(person.monthly_income, context.thresholds.for_size(
            "basic_food_gross_income", context.on, person.household_size), "household gross income")
    missing = under_smallest(unknown(profile, "monthly_income", "household_size"), profile, check, household_size=1)
    return missing or check(profile)


@rule(program=KEY, label="Household gross income within the categorical-eligibility limit, or the net income test for an older or disabled member",
      document="basic_food#income-limit", legal=DSHS_CE)
def income_within_basic_food_limit(profile: Profile, context: Context) -> Verdict:
    gross = gross_test(profile, context)
    if gross.status is not Status.FAIL:
        return gross
    senior = elderly_or_disabled(profile, context)
    if senior is None:
        return unknown(profile, "age", "disability") or Verdict(
            status=Status.UNKNOWN, reason=f"{gross.reason}; a household with a member 60+ or disabled has only the "
            "net income test", needs=(OTHER_MEMBERS,), thresholds=gross.thresholds)
    if not senior:
        return gross
    net = context.thresholds.for_size("basic_food_net_income", context.on, profile.household_size)
    return only_passes(gross, f"net income after deductions vs {net.describe()} (older or disabled member)")


@rule(program=KEY, label="Resources within the limit when not categorically eligible (older or disabled member)",
      document="basic_food#resource-limit", legal=DSHS_STANDARDS)
def resources_within_basic_food_limit(profile: Profile, context: Context) -> Verdict:
    gross = gross_test(profile, context)
    if gross.status is Status.PASS:
        return verdict(True, "categorically eligible: no resource test")
    if gross.status is Status.UNKNOWN:
        # At or under the gross limit broad-based categorical eligibility waives the resource test
        # (WAC 388-414-0001), so until income is settled the resources cannot exclude.
        return Verdict(status=Status.UNKNOWN, reason=f"{gross.reason}; under the gross limit there is no resource test",
                       unknown_fields=gross.unknown_fields, needs=gross.needs, thresholds=gross.thresholds)
    if elderly_or_disabled(profile, context) is False:
        return verdict(True, "no resource test applies here without an older or disabled member (gross test decides)")
    missing = unknown(profile, "assets")
    return missing or at_or_below(profile.assets, context.thresholds.amount(
        "basic_food_resources_elderly", context.on), "countable assets")


PROGRAM = Program(
    key=KEY, name="Basic Food (SNAP)",
    rules=(not_in_an_institution, income_within_basic_food_limit, resources_within_basic_food_limit),
    always_needed=("shelter, utility and medical costs (deductions for the net income test)",
                   "citizenship or qualifying immigration status of household members"),
    official_url=DSHS_STANDARDS[1])
