"""COPES 1915(c) waiver: WAC 388-106-0310 (functional/age), WAC 182-515-1506 to -1508 (financial)."""
from __future__ import annotations

import dataclasses

from carenav_core.screener.intake import HOME_SETTINGS
from carenav_core.screener.profile import Profile
from carenav_core.screener.words import place_words
from carenav_core.screener.rules.base import (Context, Program, Status, Verdict, at_least, at_or_below,
                                              income_within, nursing_facility_level, rule, under_smallest,
                                              unknown, verdict)
from carenav_core.screener.rules.apple_health import long_term_care_need
from carenav_core.screener.rules.spousal import spousal_resources

KEY = "copes"
WAC_0310 = ("WAC 388-106-0310 COPES eligibility", "http://apps.leg.wa.gov/wac/default.aspx?cite=388-106-0310")
WAC_1506 = ("WAC 182-515-1506 HCB waiver general eligibility", "https://app.leg.wa.gov/WAC/default.aspx?cite=182-515-1506")
WAC_1508 = ("HCA: HCS home and community based waivers (WAC 182-515-1507/-1508)",
            "https://hca.wa.gov/health-care-services-supports/program-administration/hcs-home-and-community-based-hcb-waivers")
WAC_1350 = ("WAC 182-513-1350 LTC resource standards", "https://www.hca.wa.gov/node?page=90")
COMMUNITY_SETTINGS = (*HOME_SETTINGS, "adult_family_home", "assisted_living")


@rule(program=KEY, label="Old enough on age alone, or an adult who is blind or disabled", document="copes#age-and-category", legal=WAC_0310)
def aged_65_or_disabled_adult(profile: Profile, context: Context) -> Verdict:
    t, on = context.thresholds, context.on
    missing = unknown(profile, "age")
    if missing:
        return missing
    if profile.age >= t.amount("copes_age", on).amount:
        return at_least(profile.age, t.amount("copes_age", on), "age")
    adult = at_least(profile.age, t.amount("copes_disabled_min_age", on), "age")
    if adult.status is Status.FAIL:
        return adult
    return unknown(profile, "disability") or verdict(profile.disability, f"{adult.reason}; disabled: "
                                                     f"{'yes' if profile.disability else 'no'}", *adult.thresholds)


@rule(program=KEY, label="Nursing-facility level of care", document="copes#functional-need", legal=WAC_0310)
def assessed_nursing_facility_level_of_care(profile: Profile, context: Context) -> Verdict:
    return nursing_facility_level(profile)


@rule(program=KEY, label="Lives at home, in an adult family home or in assisted living", document="copes#living-situation",
      legal=WAC_1506)
def community_setting(profile: Profile, context: Context) -> Verdict:
    missing = unknown(profile, "living_situation")
    if missing:
        return missing
    if profile.living_situation == "nursing_facility":
        # A nursing-facility resident may move back to the community with waiver services.
        return Verdict(status=Status.UNKNOWN, reason="lives in a nursing facility",
                       needs=("whether a return to home or a residential setting is planned",))
    return verdict(profile.living_situation in COMMUNITY_SETTINGS, f"lives: {place_words(profile.living_situation)}")


@rule(program=KEY, label="Own income at or below the Special Income Level, or already on categorically needy Apple Health",
      document="copes#income-limit", legal=WAC_1508)
def income_within_special_income_level(profile: Profile, context: Context) -> Verdict:
    if profile.apple_health == "categorically_needy":
        # route A: the enrolment settles it; the special income level is not checked (apple_health.already_enrolled)
        return dataclasses.replace(
            verdict(True, "already eligible for SSI-related CN Apple Health (route A, WAC 182-515-1507; own income "
                    "not checked against the special income level here)"),
            met_as="Already on categorically needy Apple Health (route A; own income not checked here)")
    missing = unknown(profile, "monthly_income")
    return missing or income_within(profile, context.thresholds.amount("special_income_level", context.on),
                                    "income", individual=True)


@rule(program=KEY, label="Resources within the long-term-care resource standard (spousal protections for a married couple)",
      document="copes#resource-limit", legal=WAC_1350)
def resources_within_ltc_standard(profile: Profile, context: Context) -> Verdict:
    def check(person: Profile) -> Verdict:
        result = at_or_below(person.assets, context.thresholds.for_unit("ltc_resources", context.on,
                                                                        married=person.married), "countable assets")
        if not person.married:
            return result
        if long_term_care_need(person):
            return spousal_resources(person, context, result)
        if result.status is not Status.FAIL:
            return result
        # COPES's money test is long-term care Apple Health's (programs.md section 4 rows 5-7): its spousal protections
        # apply once nursing-facility level of care is assessed, and with no help with daily activities the
        # assessment gives no reason to expect it; Apple Health's long-term-care route is closed on the same answers
        return Verdict(status=Status.FAIL, reason=f"{result.reason}; spousal impoverishment protections apply only with "
                       "a long-term care need (no help with daily activities listed and nursing-facility level of care "
                       "not assessed, so long-term care Apple Health, COPES's financial test, is not open)",
                       thresholds=result.thresholds)
    return under_smallest(unknown(profile, "assets", "married"), profile, check, married=False) or check(profile)


PROGRAM = Program(
    key=KEY, name="COPES waiver (Community Options Program Entry System)",
    rules=(aged_65_or_disabled_adult, assessed_nursing_facility_level_of_care, community_setting,
           income_within_special_income_level, resources_within_ltc_standard),
    always_needed=("needs and would receive at least one COPES waiver service each month",
                   "asset transfers in the last 60 months (transfer penalty)",
                   "home equity (a limit applies)",
                   "Washington residency and citizenship or qualifying immigration status"),
    official_url="https://hca.wa.gov/health-care-services-supports/program-administration/hcs-home-and-community-based-hcb-waivers",
    serves="care_receiver")
