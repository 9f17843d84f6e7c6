"""Apple Health (Washington Medicaid): SSI-related coverage for 65+/blind/disabled, MAGI for 19-64."""
from __future__ import annotations

import dataclasses
from datetime import date

from carenav_core.screener.intake import load_intake_options
from carenav_core.screener.profile import Profile, is_unknown
from carenav_core.screener.rules.base import (Context, Program, Status, Verdict, at_or_below, income_within,
                                              limits_unknown, own_share, rule, settled_either_way, under_smallest,
                                              unknown, verdict)
from carenav_core.screener.rules.spousal import above_spousal_ceiling, spousal_resources
from carenav_core.screener.thresholds import ThresholdNotInForce, load_thresholds
from carenav_core.screener.words import fact_words

KEY = "apple_health"
HCA_ABD = ("HCA: Apple Health for aged, blind or disabled (WAC 182-512-0050)",
           "https://hca.wa.gov/free-or-low-cost-health-care/i-need-medical-dental-or-vision-care/aged-blind-or-disabled")
WAC_512_0010 = ("WAC 182-512-0010 SSI-related income and resource limits",
                "http://www.dshs.wa.gov/manuals/wac/182-512-0010.shtml")
ENROLLED = "categorically_needy"


def already_enrolled() -> Verdict:
    """The PASS of an income or resource criterion that an enrolment in categorically needy Apple Health settles, said
    as that: no limit is claimed met (HCA rechecks them at renewal; answers far above every route's limits are a check
    notice, `categorically_needy_misfit`), as for Extra Help (extra_help._deemed)."""
    return dataclasses.replace(
        verdict(True, "already enrolled in categorically needy Apple Health (its income and resource limits are not "
                "checked here; HCA rechecks them, so confirm it continues at renewal)"),
        met_as="Already enrolled in categorically needy Apple Health (income and resources not checked here)")


def pathway(profile: Profile, context: Context) -> str | None:
    """'ssi' (65+ or disabled), 'magi' (19-64 without Medicare, disabled or not: MAGI has no asset test and the
    higher income limit), 'none', or None when not settled."""
    t, on = context.thresholds, context.on
    if not is_unknown(profile.age) and profile.age >= t.amount("apple_health_ssi_related_age", on).amount:
        return "ssi"
    if not is_unknown(profile.age) and not is_unknown(profile.medicare_parts) and not profile.medicare_parts and \
            t.amount("apple_health_magi_min_age", on).amount <= profile.age <= t.amount("apple_health_magi_max_age", on).amount:
        return "magi"
    if not is_unknown(profile.disability) and profile.disability:
        return "ssi"
    if is_unknown(profile.age) or is_unknown(profile.disability) or is_unknown(profile.medicare_parts):
        return None
    return "none"


WAC_KIDS = "WAC 182-505-0210"


def children_not_judged(profile: Profile, context: Context, what: str) -> Verdict | None:
    """Under the MAGI adult minimum age (19), Apple Health for Kids covers children and teens (WAC 182-505-0210): a
    group with its own standards that this screener does not judge. Every Apple Health criterion is then left open
    (`what`: the criterion's words), never failed on the adult groups' tests; None for an adult or an unknown age (the
    adult groups' own rules ask the age). An enrolment in categorically needy Apple Health is accepted as before."""
    if profile.apple_health == ENROLLED or is_unknown(profile.age) or \
            profile.age >= context.thresholds.amount("apple_health_magi_min_age", context.on).amount:
        return None
    return Verdict(status=Status.UNKNOWN, reason=f"age {profile.age}: Apple Health for Kids covers people under 19 "
                   f"({WAC_KIDS}), a group this screener does not judge; {what}",
                   needs=(f"whether they qualify for Apple Health for Kids (under 19, {WAC_KIDS}): ask HCA or apply at "
                          "Washington Healthplanfinder; this screener judges only the adult groups",))


@rule(program=KEY, label="In an adult coverage group: older adult, blind or disabled, or a working-age adult without Medicare",
      document="apple_health#age-and-category", legal=HCA_ABD)
def in_coverage_category(profile: Profile, context: Context) -> Verdict:
    """The adult coverage groups (programs.md section 1a row 1, section 1b row 8). An enrolment in categorically needy
    Apple Health is in a coverage group by definition, and is accepted here as the income and resource rules accept
    it: an answer left unknown or declined (the disability, under 65 with Medicare) does not reopen it. A misfit of the
    enrolment with the answers is the warning's to raise (`categorically_needy_misfit`), not this card's."""
    if profile.apple_health == ENROLLED:
        return verdict(True, "already enrolled in categorically needy Apple Health (a coverage group)")
    child = children_not_judged(profile, context, "so the coverage group is left open")
    if child:
        return child
    route = pathway(profile, context)
    if route is None:
        return unknown(profile, "age", "disability", "medicare_parts")
    names = {"ssi": "SSI-related (older adult, blind or disabled)", "magi": "MAGI adult (working age, no Medicare)"}
    return verdict(route != "none", f"coverage group: {names.get(route, 'none of the adult groups')}")


@rule(program=KEY, label="Income within the categorically needy (SSI-related) or MAGI adult limit",
      document="apple_health#income-limit", legal=WAC_512_0010)
def income_within_cn_or_magi_limit(profile: Profile, context: Context) -> Verdict:
    if profile.apple_health == ENROLLED:
        return already_enrolled()
    child = children_not_judged(profile, context, "the adult groups' income limits are not its limits")
    if child:
        return child
    route = pathway(profile, context)
    missing = unknown(profile, "monthly_income") or (None if route else unknown(profile, "age", "disability", "medicare_parts"))
    if missing:
        return missing
    if route == "magi":
        def check(person: Profile) -> Verdict:
            return at_or_below(person.monthly_income, context.thresholds.for_size(
                "apple_health_magi_income", context.on, person.household_size), "household income")
        result = under_smallest(unknown(profile, "household_size"), profile, check, household_size=1) or \
            check(profile)
        if result.status is Status.FAIL and (is_unknown(profile.disability) or profile.disability):
            # over the MAGI limit, a disabled adult may still qualify SSI-related (CN, or medically needy)
            # the SSI-related route needs a disability under 65 (programs.md section 1a row 1): with the answer
            # unknown it is asked first, for medical expenses decide nothing without it
            asked = is_unknown(profile.disability)
            return _spend_down(result, f"{'if disabled' if asked else 'as a disabled adult'}, the SSI-related route "
                               "(with a medically needy spend-down) may still apply", *(("disability",) if asked else ()))
        return result
    return _ssi_income(profile, context)


def _ssi_income(profile: Profile, context: Context) -> Verdict:
    # Above the CN level a person may still qualify as medically needy with a spend-down
    # (WAC 182-519-0110), so income alone never excludes the SSI-related group.
    def check(person: Profile) -> Verdict:
        return income_within(person, context.thresholds.for_unit("apple_health_cn_income", context.on,
                                                                 married=person.couple), "income", individual=False)
    missing = under_smallest(limits_unknown(profile, "married"), profile, check, married=False)
    if missing:
        return missing
    result = check(profile)
    if result.status is Status.PASS:
        return result
    long_term = long_term_care_route(profile, context, above=result)
    if long_term is not None:
        return long_term
    return _spend_down(result, "above the CN level a medically needy spend-down may still apply")


WAC_LTC = ("WAC 182-513-1315 / 182-515-1508: long-term care Apple Health at the special income level",
           "https://app.leg.wa.gov/WAC/default.aspx?cite=182-515-1508")


def long_term_care_route(profile: Profile, context: Context, above: Verdict | None = None) -> Verdict | None:
    """Above the CN income level, long-term care opens categorically needy Apple Health up to the special income level
    (300% of the SSI FBR, the person's own income): living in a nursing facility, or assessed at nursing-facility level
    of care and served by a waiver (COPES at home or in residential care). A pass under the SIL settles it; a resident
    of residential care not yet assessed is told what would. None when the route does not apply."""
    in_facility = profile.living_situation == "nursing_facility"
    assessed = profile.nursing_facility_level_of_care is True
    residential = profile.living_situation in INSTITUTIONAL_SETTINGS
    pending = assessment_pending(profile)
    if not (in_facility or assessed or residential or pending) or is_unknown(profile.monthly_income):
        return None
    sil = context.thresholds.amount("special_income_level", context.on)
    result = income_within(profile, sil, "income", individual=True)
    if result.status is Status.FAIL:
        return None
    if result.status is Status.UNKNOWN:
        # their own income may be within it (a couple's household income, a bracket across the line): the route stays
        # open, and is what the answer points to
        where = "lives in a nursing facility" if in_facility else "assessed at nursing-facility level of care" \
            if assessed else "lives in residential care" if residential else pending_words(profile)
        return Verdict(status=Status.UNKNOWN, reason=f"{above.reason + '; ' if above else ''}{result.reason}: long-term "
                       f"care Apple Health is open up to the special income level ({where}; WAC 182-513-1315, "
                       "182-515-1508), and above it a medically needy spend-down may still apply",
                       thresholds=(above.thresholds if above else ()) + result.thresholds,
                       unknown_fields=result.unknown_fields + (pending_fields(profile) if pending else ()),
                       needs=result.needs + (pending_needs(profile) if pending else ()))
    # the CN comparison first (`above`: income over the CN level), then the special income level's
    result = Verdict(status=result.status, reason=f"{above.reason}; {result.reason}" if above else result.reason,
                     thresholds=(above.thresholds if above else ()) + result.thresholds)
    if in_facility:
        return Verdict(status=Status.PASS, reason=f"{result.reason}: within the special income level for long-term care "
                       "(lives in a nursing facility; WAC 182-513-1315)", thresholds=result.thresholds)
    if assessed:
        return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}: within the special income level, which makes "
                       "a COPES waiver client categorically needy (WAC 182-515-1508)", thresholds=result.thresholds,
                       needs=("whether they enroll in COPES waiver services (see COPES; without them a medically needy "
                            "spend-down may still apply)",))
    who = "a resident of residential care" if residential else "a person"
    return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}: within the special income level, which opens "
                   f"categorically needy coverage to {who} assessed at nursing-facility level of care and served by a "
                   f"waiver{'' if residential else ' (' + pending_words(profile) + ')'}", thresholds=result.thresholds,
                   unknown_fields=pending_fields(profile) if pending else ("nursing_facility_level_of_care",),
                   needs=pending_needs(profile) if pending else (CARE_ASSESSMENT,))


CARE_ASSESSMENT = "a DSHS CARE assessment of nursing-facility level of care (WAC 388-106-0355)"
ADL_ASKED = "which daily activities they need help with (help with them is what a CARE assessment weighs)"


def pending_words(profile: Profile) -> str:
    """Why the long-term-care route is open while the assessment is pending, in words."""
    help_ = "help with daily activities not known" if is_unknown(profile.adl_help) else "needs help with daily activities"
    return f"{help_}; nursing-facility level of care not yet assessed"


def pending_fields(profile: Profile) -> tuple[str, ...]:
    """The intake answers a pending assessment leaves to ask: the assessment, and the daily-activity help if unknown."""
    return ("nursing_facility_level_of_care",) + (("adl_help",) if is_unknown(profile.adl_help) else ())


def pending_needs(profile: Profile) -> tuple[str, ...]:
    """What would settle a pending assessment: the CARE assessment, and the daily-activity help if unknown."""
    return (CARE_ASSESSMENT,) + ((ADL_ASKED,) if is_unknown(profile.adl_help) else ())


def assessment_pending(profile: Profile) -> bool:
    """Nursing-facility level of care not assessed (or not known) while help with daily activities is needed or not
    known: the CARE assessment (WAC 388-106-0355, which weighs that help) may open the long-term-care route, so it is
    not closed on a guess. Help answered as none closes it (every NFLOC test but daily nursing care counts help with
    daily activities), and then the spousal route of COPES and MAC closes with it."""
    if not is_unknown(profile.nursing_facility_level_of_care):
        return False
    return is_unknown(profile.adl_help) or bool(profile.adl_help)


def long_term_care_need(profile: Profile) -> bool:
    """Long-term care Apple Health may be the route: in a nursing facility or residential care, assessed at
    nursing-facility level of care, or an assessment pending (`assessment_pending`)."""
    return profile.living_situation in INSTITUTIONAL_SETTINGS or profile.nursing_facility_level_of_care is True or \
        assessment_pending(profile)


def _pending_assessment(profile: Profile, couple_result: Verdict, result: Verdict) -> Verdict:
    """A spousal-impoverishment result (open, or a pass the couple's own figure did not give) that rests on an
    assessment not yet made asks for it: without a long-term care need the couple's figure is the test."""
    if result.status is Status.FAIL or couple_result.status is Status.PASS or not assessment_pending(profile):
        return result
    return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}; these rules apply once DSHS assesses "
                   "nursing-facility level of care (long-term care Apple Health)", thresholds=result.thresholds,
                   unknown_fields=(*result.unknown_fields, *pending_fields(profile)),
                   needs=(*result.needs, *pending_needs(profile)))


def _spend_down(result: Verdict, why: str, *asked: str) -> Verdict:
    """An income over the limit that a medically needy spend-down (WAC 182-519-0110) may still bring within it;
    `asked`: intake answers the spend-down route itself rests on (the disability, under 65)."""
    return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}; {why}",
                   unknown_fields=(*asked, *result.unknown_fields), thresholds=result.thresholds,
                   needs=(*result.needs, "monthly medical expenses (for a medically needy spend-down)"))


@rule(program=KEY, label="Resources within the SSI-related resource limit (MAGI adult coverage has no asset test)",
      document="apple_health#resource-limit", legal=WAC_512_0010)
def resources_within_limit(profile: Profile, context: Context) -> Verdict:
    if profile.apple_health == ENROLLED:
        return already_enrolled()
    child = children_not_judged(profile, context, "the adult groups' resource limits are not its test")
    if child:
        return child
    route = pathway(profile, context)
    if route == "magi":
        income = income_within_cn_or_magi_limit.check(profile, context)
        if income.status is Status.PASS or profile.disability is False:
            return verdict(True, "MAGI adult coverage has no asset test")
        if is_unknown(profile.disability):
            return _magi_or_ssi_related(profile, context)
        # over (or maybe over) the MAGI limit a disabled adult is left with the SSI-related route and its asset test
    def check(person: Profile) -> Verdict:
        return at_or_below(person.assets, context.thresholds.for_unit("apple_health_cn_resources", context.on,
                                                                      married=person.couple), "countable assets")
    missing = under_smallest(limits_unknown(profile, "assets", "married"), profile, check, married=False) or \
        (None if route else unknown(profile, "age", "disability", "medicare_parts"))
    if missing:
        return missing
    limit = context.thresholds.for_unit("apple_health_cn_resources", context.on, married=profile.couple)
    result = at_or_below(profile.assets, limit, "countable assets")
    if profile.married is True and long_term_care_need(profile):
        # long-term care for a married person is judged under spousal-impoverishment rules: the spouse at home keeps a
        # protected resource amount (WAC 182-513-1350) up to the federal maximum, which the couple figure cannot show
        return _pending_assessment(profile, result, spousal_resources(profile, context, result))
    result = own_share(profile, result)
    extra = 0 if is_unknown(profile.household_size) else profile.household_size - (2 if profile.couple else 1)
    if result.status is not Status.FAIL or extra <= 0:
        return result
    # Medically needy (the spend-down route) adds $50 per family member beyond the person and spouse (WAC 182-512-0010,
    # noted with the figure): over the CN limit, a household of 3 may still be within the MN one.
    each = context.thresholds.amount("apple_health_mn_resources_each_additional", context.on)
    needy = dataclasses.replace(limit, amount=limit.amount + each.amount * extra,
                                label=f"{limit.label}, medically needy for a household of {profile.household_size}")
    if at_or_below(profile.assets, needy, "countable assets").status is Status.FAIL:
        return result
    return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}; the medically needy limit for a household of "
                   f"{profile.household_size} ({each.shown()} per extra family member) is {needy.shown()}",
                   thresholds=(limit, each), needs=("whether the medically needy (spend-down) route applies",))


def _magi_or_ssi_related(profile: Profile, context: Context) -> Verdict:
    """A working-age adult without Medicare over (or maybe over) the MAGI income limit, the disability not known: not
    disabled, MAGI adult coverage is the only route, and its income decides (no asset test, no spend-down: programs.md
    section 1b); disabled, the SSI-related route and its asset test (section 1a row 4). The asset test passing passes
    either way; both routes failing fails, worded both ways (`settled_either_way`); anything else asks the disability."""
    disabled = resources_within_limit.check(dataclasses.replace(profile, disability=True), context)
    if disabled.status is Status.PASS:
        return dataclasses.replace(disabled, reason=f"if disabled: {disabled.reason}; if not disabled, MAGI adult "
                                   "coverage has no asset test")

    def by_route(person: Profile, context: Context) -> Verdict:
        if person.disability:
            return resources_within_limit.check(person, context)
        income = income_within_cn_or_magi_limit.check(person, context)
        return dataclasses.replace(income, reason=f"{income.reason} (MAGI adult coverage, the route without a "
                                   "disability, has no asset test and no spend-down: the income decides)")
    open_ = Verdict(status=Status.UNKNOWN, reason=f"not known yet: {fact_words('disability')}; if disabled, the "
                    f"SSI-related asset test applies ({disabled.reason}); if not, MAGI adult coverage has none",
                    unknown_fields=("disability", *disabled.unknown_fields), needs=disabled.needs,
                    thresholds=disabled.thresholds)
    return settled_either_way(by_route, profile, context, open_)


# Settings where long-term care Apple Health applies (a nursing facility, or residential care paid by a waiver)
INSTITUTIONAL_SETTINGS = ("nursing_facility", "adult_family_home", "assisted_living")


PROGRAM = Program(
    key=KEY, name="Apple Health (Washington Medicaid)",
    rules=(in_coverage_category, income_within_cn_or_magi_limit, resources_within_limit),
    always_needed=("Washington residency and citizenship or qualifying immigration status",),
    official_url="https://hca.wa.gov/free-or-low-cost-health-care/i-need-medical-dental-or-vision-care/aged-blind-or-disabled")


def categorically_needy_misfit(profile: Profile, on: date) -> str | None:
    """Why no categorically needy route fits the answers (income or countable assets wholly above the most any route
    open to the person allows), in words; None when one may fit, or a figure is not on file for `on`. Each route is
    applied only where its age and disability condition can hold: the SSI-related routes (CN, and long-term care up to
    the special income level) need 65+, blindness or a disability (programs.md section 1a row 1, section 4 row 1), the
    MAGI adult route 19-64 without Medicare (section 1b row 8). Income: the special income level, the highest
    SSI-related limit (section 1c row 11), only for a household of one, since it counts the person's own income; and
    the MAGI adult limit for the household's size (section 1b row 9a). Assets: open on the MAGI route (no asset test,
    section 1b row 10); otherwise the $2,000 standard (section 1a row 4, 1c row 12), or for a married person the
    spousal impoverishment ceiling (row 15). A married couple living together with no long-term-care need
    (`long_term_care_need`) has neither the special income level nor spousal protections: its income (a household of
    two) and assets are held to the couple's categorically needy standards (section 1a rows 3b-4)."""
    context = Context(thresholds=load_thresholds(), on=on, options=load_intake_options())
    try:
        found = [r for r in (_income_misfit(profile, context), _assets_misfit(profile, context)) if r]
    except ThresholdNotInForce:
        return None
    return "; ".join(found) or None


def _magi_open(profile: Profile, context: Context) -> bool:
    """Whether the MAGI adult route (19-64, no Medicare: programs.md section 1b row 8) is not ruled out by the answers."""
    t, on = context.thresholds, context.on
    if not is_unknown(profile.medicare_parts) and profile.medicare_parts:
        return False
    return is_unknown(profile.age) or \
        t.amount("apple_health_magi_min_age", on).amount <= profile.age <= t.amount("apple_health_magi_max_age", on).amount


def _ssi_related_open(profile: Profile, context: Context) -> bool:
    """Whether the SSI-related routes (65+, blind or disabled: programs.md section 1a row 1, section 4 row 1) are not
    ruled out by the answers: only an age under 65 beside a "no disability" answer rules them out, and not when that
    answer contradicts the others (Profile.contradicted: it decides nothing)."""
    if is_unknown(profile.age) or profile.age >= context.thresholds.amount("apple_health_ssi_related_age", context.on).amount:
        return True
    return profile.disability is not False or "disability" in profile.contradicted()


def _income_misfit(profile: Profile, context: Context) -> str | None:
    if is_unknown(profile.monthly_income):
        return None
    magi = _magi_income(profile, context) if _magi_open(profile, context) else None
    if magi is not None and magi.status is not Status.FAIL:
        return None
    if _ssi_related_open(profile, context):
        if profile.couple is True and profile.household_size == 2 and not long_term_care_need(profile):
            # a married couple living together with no long-term-care need: no special income level and no spousal
            # protections, so the couple's categorically needy income standard is the highest (programs.md section
            # 1a row 3b; a household of two is the couple alone, so its income is theirs)
            cn = at_or_below(profile.monthly_income, context.thresholds.for_unit(
                "apple_health_cn_income", context.on, married=True), "household income")
            return None if cn.status is not Status.FAIL else \
                f"{cn.reason} (the couple's categorically needy income standard; with no long-term-care need the " \
                "special income level and spousal protections do not apply)"
        if profile.household_size != 1:
            return None
        if not long_term_care_need(profile):
            # no long-term-care need: the special income level (a long-term care limit, section 1c row 11) is not a
            # route, so the single person's categorically needy income standard is (section 1a row 3b)
            cn = at_or_below(profile.monthly_income, context.thresholds.for_unit(
                "apple_health_cn_income", context.on, married=False), "household income")
            return None if cn.status is not Status.FAIL else \
                f"{cn.reason} (the categorically needy income standard; with no long-term-care need the special " \
                "income level does not apply)"
        sil = at_or_below(profile.monthly_income, context.thresholds.amount("special_income_level", context.on),
                          "household income")
        return None if sil.status is not Status.FAIL else \
            f"{sil.reason} (the special income level, the highest categorically needy income limit)"
    if magi is None:
        return None         # the household size unknown, or no adult route by age and Medicare at all
    return (f"{magi.reason} (the MAGI adult limit; the other categorically needy routes need age 65 or older, "
            "blindness or a disability)")


def _magi_income(profile: Profile, context: Context) -> Verdict | None:
    """Household income against the MAGI adult limit for its size; None when the size is not known."""
    if is_unknown(profile.household_size):
        return None
    return at_or_below(profile.monthly_income, context.thresholds.for_size(
        "apple_health_magi_income", context.on, profile.household_size), "household income")


def _assets_misfit(profile: Profile, context: Context) -> str | None:
    if is_unknown(profile.assets) or _magi_open(profile, context) or not _ssi_related_open(profile, context):
        return None
    if profile.couple is True and not long_term_care_need(profile):
        # spousal protections exist only with a long-term-care need (programs.md section 1c rows 11-15): without one
        # a couple living together is held to the couple's categorically needy resource standard (section 1a row 4)
        couple = at_or_below(profile.assets, context.thresholds.for_unit("apple_health_cn_resources", context.on,
                                                                        married=True), "the couple's countable assets")
        return f"{couple.reason} (the couple's categorically needy resource standard; with no long-term-care need " \
            "spousal protections do not apply)" if couple.status is Status.FAIL else None
    if profile.married is not False:
        above = above_spousal_ceiling(profile, context)
        return None if above is None else above.reason
    single = at_or_below(profile.assets, context.thresholds.for_unit("ltc_resources", context.on, married=False),
                         "countable assets")
    return f"{single.reason} (the categorically needy resource standard)" if single.status is Status.FAIL else None
