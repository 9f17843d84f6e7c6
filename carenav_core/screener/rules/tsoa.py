"""Tailored Supports for Older Adults (TSOA): WAC 182-513-1610 to -1640."""
from __future__ import annotations

from carenav_core.screener.intake import HOME_SETTINGS
from carenav_core.screener.profile import Profile
from carenav_core.screener.words import COVERAGE
from carenav_core.screener.rules.base import (Context, Program, Verdict, at_home, at_or_below, income_within,
                                              minimum_age, nursing_facility_level, rule, under_smallest, unknown,
                                              verdict)

KEY = "tsoa"
WAC_1615 = ("WAC 182-513-1615 TSOA eligibility",
            "https://www.hca.wa.gov/health-care-services-and-supports/program-administration/wac-182-513-1615-tailored-supports-older")
WAC_1635 = ("WAC 182-513-1635 TSOA income", "http://app.leg.wa.gov/WAC/default.aspx?cite=182-513-1635")
WAC_1640 = ("WAC 182-513-1640 TSOA resources",
            "https://www.hca.wa.gov/free-or-low-cost-health-care/i-help-others-apply-and-access-apple-health/"
            "wac-182-513-1640-tailored-supports-older-adults-tsoa-resource-eligibility")


@rule(program=KEY, label="Meets the minimum age", document="tsoa#age-and-category", legal=WAC_1615)
def aged_55_or_older(profile: Profile, context: Context) -> Verdict:
    return minimum_age(profile, context, "tsoa_min_age")


@rule(program=KEY, label="Assessed at nursing-facility level of care", document="tsoa#functional-need", legal=WAC_1615)
def assessed_nursing_facility_level_of_care(profile: Profile, context: Context) -> Verdict:
    return nursing_facility_level(profile)


@rule(program=KEY, label="Lives at home, not in a residential or institutional setting",
      document="tsoa#living-situation", legal=WAC_1615)
def lives_at_home(profile: Profile, context: Context) -> Verdict:
    return at_home(profile, HOME_SETTINGS)


@rule(program=KEY, label="Not receiving categorically needy or ABP Apple Health", document="tsoa#financial-eligibility",
      legal=WAC_1615)
def not_on_categorically_needy_apple_health(profile: Profile, context: Context) -> Verdict:
    # Medically needy, MSP-only, family planning, TAKE CHARGE and kidney disease coverage do not bar TSOA.
    missing = unknown(profile, "apple_health")
    if missing:
        return missing
    if profile.apple_health == "categorically_needy":
        return verdict(False, f"current coverage: {COVERAGE[profile.apple_health]}")
    # WAC 182-513-1615(3)-(4): TSOA is for a person not receiving CN/ABP Apple Health, who may get MAC instead
    return verdict(True, f"current coverage: {COVERAGE[profile.apple_health]}; TSOA and MAC are alternatives: TSOA "
                   "applies only while the person is not receiving categorically needy or ABP Apple Health, and MAC "
                   "needs it (WAC 182-513-1615)")


@rule(program=KEY, label="Own gross income at or below the TSOA income limit (a multiple of the SSI federal benefit rate)",
      document="tsoa#income-limit", legal=WAC_1635)
def income_within_400_percent_fbr(profile: Profile, context: Context) -> Verdict:
    missing = unknown(profile, "monthly_income")
    return missing or income_within(profile, context.thresholds.amount("tsoa_income", context.on),
                                    "gross income", individual=True)


@rule(program=KEY, label="Resources within the TSOA resource standard", document="tsoa#resource-limit", legal=WAC_1640)
def resources_within_tsoa_standard(profile: Profile, context: Context) -> Verdict:
    def check(person: Profile) -> Verdict:
        # A married applicant's standard is the applicant's plus the state spousal resource standard (WAC
        # 182-513-1640(2)); the married figure on file from 2026 is that sum (an older one only the applicant's,
        # carried as a floor: couple_at_least), against the couple's assets, which the intake asks together.
        what = "the couple's countable assets (married standard: the applicant's plus the state spousal resource " \
               "standard, WAC 182-513-1640(2))" if person.married else "countable assets"
        return at_or_below(person.assets, context.thresholds.for_unit("tsoa_resources", context.on,
                                                                      married=person.married), what)
    return under_smallest(unknown(profile, "assets", "married"), profile, check, married=False) or check(profile)


PROGRAM = Program(
    key=KEY, name="Tailored Supports for Older Adults (TSOA)",
    rules=(aged_55_or_older, assessed_nursing_facility_level_of_care, lives_at_home,
           not_on_categorically_needy_apple_health, income_within_400_percent_fbr, resources_within_tsoa_standard),
    always_needed=("current TSOA enrollment status (a statewide waitlist was reported from 2025-12-01)",
                   "a valid Social Security number",
                   "Washington residency and citizenship or qualifying immigration status"),
    official_url="https://hca.wa.gov/health-care-services-supports/program-administration/tailored-supports-older-adults-tsoa-0",
    serves="care_receiver")
