"""Medicaid Alternative Care (MAC): support for the unpaid caregiver of a Medicaid client (WAC 182-513-1605)."""
from __future__ import annotations

from carenav_core.screener.intake import HOME_SETTINGS
from carenav_core.screener.profile import Profile, is_unknown
from carenav_core.screener.words import COVERAGE
from carenav_core.screener.rules import apple_health
from carenav_core.screener.rules.base import (Context, Program, Status, Verdict, at_home, at_or_below, minimum_age,
                                              nursing_facility_level, rule, unknown, verdict, yes_no)
from carenav_core.screener.rules.spousal import above_spousal_ceiling

KEY = "mac"
WAC_1605 = ("WAC 182-513-1605 Medicaid alternative care (HCA MAC page)",
            "https://hca.wa.gov/health-care-services-supports/program-administration/medicaid-alternative-care-mac")


@rule(program=KEY, label="Care receiver meets the minimum age", document="mac#age-and-category", legal=WAC_1605)
def care_receiver_55_or_older(profile: Profile, context: Context) -> Verdict:
    return minimum_age(profile, context, "mac_min_age")


@rule(program=KEY, label="Assessed at nursing-facility level of care", document="mac#functional-need", legal=WAC_1605)
def assessed_nursing_facility_level_of_care(profile: Profile, context: Context) -> Verdict:
    return nursing_facility_level(profile)


# MAC and TSOA are alternatives for one person (WAC 182-513-1615(3)-(4), the TSOA eligibility rule the TSOA card cites):
# MAC rides on categorically needy or ABP Apple Health, TSOA is only for a person not receiving it
ALTERNATIVE_TO_TSOA = ("; MAC and TSOA are alternatives: MAC needs categorically needy or ABP Apple Health, and TSOA "
                       "applies only while the person is not receiving it (WAC 182-513-1615)")


@rule(program=KEY, label="Eligible for categorically needy or ABP Apple Health", document="mac#financial-eligibility",
      legal=WAC_1605)
def categorically_needy_apple_health(profile: Profile, context: Context) -> Verdict:
    # MAC has no income or asset test of its own; it rides on noninstitutional CN/ABP (or SIPI)
    # eligibility, which the intake's coverage answer can confirm but not rule out.
    missing = unknown(profile, "apple_health")
    if missing:
        return missing
    if profile.apple_health == "categorically_needy":
        return verdict(True, f"has categorically needy Apple Health{ALTERNATIVE_TO_TSOA}")
    ruled_out = _not_categorically_needy(profile, context)
    if ruled_out is not None:
        return ruled_out
    if _apple_health_likely(profile, context):
        return verdict(True, f"current coverage: {COVERAGE[profile.apple_health]}, but categorically needy (or MAGI "
                       f"adult) Apple Health looks likely on these answers (see Apple Health), which MAC requires"
                       f"{ALTERNATIVE_TO_TSOA}")
    return Verdict(status=Status.UNKNOWN, reason=f"current coverage: {COVERAGE[profile.apple_health]}",
                   needs=("whether the care receiver is eligible for categorically needy Apple Health",))


def _apple_health_likely(profile: Profile, context: Context) -> bool:
    """Whether Apple Health's own rules, run on the care receiver's answers, all pass at home: a pass there is the
    categorically needy (SSI-related) or MAGI adult (ABP) limit, never a spend-down (medically needy stays unknown)
    nor the long-term-care route away from home (programs.md section 2 row 3: no separate MAC financial test)."""
    if profile.living_situation not in HOME_SETTINGS:
        return False
    return all(r.evaluate(profile, context).status is Status.PASS for r in apple_health.PROGRAM.rules)


def _not_categorically_needy(profile: Profile, context: Context) -> Verdict | None:
    """A FAIL when the answers rule out CN for an unmarried person: 19-64 without Medicare and not disabled, income
    wholly above the MAGI adult limit (ABP); otherwise (65 or older, or with Medicare) income or countable assets wholly
    above the SSI-related CN limits. A spend-down makes a person medically needy, not CN; a married person, living
    with the spouse or not, keeps the SIPI route, CN with spousal impoverishment protections (WAC 182-513-1605), unless
    the couple's assets are wholly above what those protections allow (`spousal.above_spousal_ceiling`)."""
    if profile.married is not False and not is_unknown(profile.assets):
        above = above_spousal_ceiling(profile, context)     # the SIPI route's resource ceiling
        if above is not None:
            return verdict(False, f"{above.reason}, so not categorically needy under spousal impoverishment (SIPI) "
                           "rules, which MAC requires", *above.thresholds)
    if profile.couple is True and not is_unknown(profile.assets) and not apple_health.long_term_care_need(profile):
        # SIPI rules protect a spouse's resources only with a long-term care need; none listed and nursing-facility
        # level of care not assessed, the couple's CN standard applies, as on the Apple Health card
        if apple_health.pathway(profile, context) == "magi":
            return _magi_couple_assets(profile, context)
        couple = at_or_below(profile.assets, context.thresholds.for_unit("apple_health_cn_resources", context.on,
                                                                         married=True), "the couple's countable assets")
        if couple.status is Status.FAIL:
            return verdict(False, f"{couple.reason} of categorically needy Apple Health, which MAC requires; spousal "
                           "impoverishment (SIPI) protections apply only with a long-term care need (no help with daily "
                           "activities listed and nursing-facility level of care not assessed)", *couple.thresholds)
    if profile.married is not False or is_unknown(profile.age) or is_unknown(profile.medicare_parts):
        return None
    if profile.age < 65 and not profile.medicare_parts:
        # 19-64 without Medicare: the MAGI adult route (ABP), the only one unless they are disabled
        if profile.disability is not False or is_unknown(profile.monthly_income) or \
                is_unknown(profile.household_size):
            return None
        magi = at_or_below(profile.monthly_income, context.thresholds.for_size(
            "apple_health_magi_income", context.on, profile.household_size), "household income")
        if magi.status is not Status.FAIL:
            return None
        return verdict(False, f"{magi.reason} of MAGI adult Apple Health (ABP), the only categorically needy route "
                       "for a working-age adult without Medicare or a disability, which MAC requires",
                       *magi.thresholds)
    checks = []
    if not is_unknown(profile.monthly_income) and not is_unknown(profile.household_size) and \
            profile.household_size == 1:
        checks.append(at_or_below(profile.monthly_income, context.thresholds.for_unit(
            "apple_health_cn_income", context.on, married=False), "income"))
    if not is_unknown(profile.assets):
        checks.append(at_or_below(profile.assets, context.thresholds.for_unit(
            "apple_health_cn_resources", context.on, married=False), "countable assets"))
    failed = [c for c in checks if c.status is Status.FAIL]
    if not failed:
        return None
    return verdict(False, f"{failed[0].reason} of categorically needy Apple Health, which MAC requires (a "
                   "spend-down makes a person medically needy, not categorically needy)", *failed[0].thresholds)


def _magi_couple_assets(profile: Profile, context: Context) -> Verdict | None:
    """A couple's assets for a working-age adult without Medicare: MAGI adult Apple Health (ABP) has no asset test, so
    they rule out CN only where Apple Health's own resource rule fails (disabled and over the MAGI income; with the
    disability not known, worded both ways: `apple_health._magi_or_ssi_related`)."""
    resources = apple_health.resources_within_limit.evaluate(profile, context).verdict
    if resources.status is not Status.FAIL:
        return None
    return verdict(False, f"{resources.reason}: not categorically needy (or ABP) Apple Health, which MAC requires",
                   *resources.thresholds)


@rule(program=KEY, label="Lives at home, not in a residential or institutional setting",
      document="mac#living-situation", legal=WAC_1605)
def lives_at_home(profile: Profile, context: Context) -> Verdict:
    return at_home(profile, HOME_SETTINGS)


@rule(program=KEY, label="Has an unpaid caregiver", document="mac#caregiver", legal=WAC_1605)
def has_unpaid_caregiver(profile: Profile, context: Context) -> Verdict:
    # The caregiver must be an adult (WAC 182-513-1605); the intake knows the age when the caregiver answers.
    if profile.has_unpaid_caregiver is True and not is_unknown(profile.caregiver_age) and profile.caregiver_age < 18:
        return verdict(False, f"the unpaid caregiver is {profile.caregiver_age}, under 18")
    return yes_no(profile, "has_unpaid_caregiver", "an unpaid caregiver helps them", "no unpaid caregiver")


PROGRAM = Program(
    key=KEY, name="Medicaid Alternative Care (MAC)",
    rules=(care_receiver_55_or_older, assessed_nursing_facility_level_of_care, categorically_needy_apple_health,
           lives_at_home, has_unpaid_caregiver),
    always_needed=("current MAC enrollment status (a statewide waitlist was reported from 2025-12-01)",
                   "the caregiver is 18 or older and unpaid",
                   "Washington residency and citizenship or qualifying immigration status"),
    official_url="https://hca.wa.gov/health-care-services-supports/program-administration/medicaid-alternative-care-mac",
    serves="care_receiver")
