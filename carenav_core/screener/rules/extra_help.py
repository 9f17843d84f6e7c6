"""Extra Help (Medicare Part D Low-Income Subsidy), administered by SSA."""
from __future__ import annotations

import dataclasses

from carenav_core.screener.profile import Profile, is_unknown
from carenav_core.screener.rules.apple_health import (INSTITUTIONAL_SETTINGS, assessment_pending, long_term_care_route,
                                                      pathway, pending_fields, pending_needs)
from carenav_core.screener.rules.base import (Context, Program, Status, Verdict, at_or_below, figure_not_on_file,
                                              gross_of_disregard, limits_unknown, own_share, rule, under_smallest,
                                              unknown, verdict)
from carenav_core.screener.rules import apple_health, msp
from carenav_core.screener.rules.spousal import above_spousal_ceiling
from carenav_core.screener.thresholds import ThresholdNotInForce

KEY = "extra_help"
SSA_PUB = ("SSA publication 10128 (archived): Extra Help with Medicare prescription drug costs",
           "https://cybercemetery.unt.edu/archive/oilspill/20121016233213/http://www.ssa.gov/pubs/10128.html")
POMS_RESOURCES = ("SSA POMS HI 03030.025: resource limits for subsidy eligibility",
                  "https://secure.ssa.gov/apps10/poms.nsf/lnx/0603030025")
SSA_EXTRA_HELP = ("SSA: Extra Help with Medicare prescription drug plan costs", "https://www.ssa.gov/medicare/part-d-extra-help")
ELDERLAW = ("Elder Law Answers: Medicare prescription drug coverage for low-income beneficiaries",
            "https://attorney.elderlawanswers.com/medicare-prescription-drug-coverage-for-low-income-beneficiaries-12181")
DEEMED = ("categorically_needy", "medically_needy", "msp_only")


DEEMED_WORDS = {"categorically_needy": "categorically needy Apple Health", "medically_needy": "medically needy Apple Health",
                "msp_only": "a Medicare Savings Program"}
ENROLLED = "already enrolled in Extra Help"


def _deemed(profile: Profile, test: str) -> Verdict | None:
    """The PASS of a limit (`test`, "income" or "resource") that the person's enrolment settles, or None: full Medicaid
    or a Medicare Savings Program confers Extra Help whatever its own limits (42 CFR 423.773(c)), in the program's own
    words; being already enrolled in Extra Help is said as that, and claims no limit met (SSA rechecks them at its
    redetermination; answers far above them are a check notice, `enrolment_misfit`)."""
    if profile.apple_health in DEEMED:
        program = DEEMED_WORDS[profile.apple_health]
        return dataclasses.replace(
            verdict(True, f"automatic through {program}, which confers Extra Help whatever its own limits "
                    "(42 CFR 423.773(c))"),
            met_as=f"Automatic through {program} (Extra Help's own {test} limit does not apply)")
    if profile.extra_help is True:
        return dataclasses.replace(
            verdict(True, f"{ENROLLED} (its income and resource limits are not checked here; SSA rechecks them, so "
                    "confirm it continues at SSA's redetermination)"),
            met_as="Already enrolled in Extra Help (income and resources not checked here)")
    return None


def enrolment_misfit(profile: Profile, on) -> str | None:
    """Why answers that say already enrolled in Extra Help (with no Apple Health or Medicare Savings Program that would
    confer it) do not fit it, in words: the income or assets answer fails Extra Help's own test and no route confers it
    on the same answers (`income_below_150_percent_fpl` and `resources_within_lis_limit` as for someone not enrolled);
    None when they may fit, a figure is not on file, or the enrolment is not the answer."""
    if profile.extra_help is not True or profile.apple_health != "none":
        return None
    from carenav_core.screener.intake import load_intake_options
    from carenav_core.screener.thresholds import load_thresholds
    context = Context(thresholds=load_thresholds(), on=on, options=load_intake_options())
    applicant = dataclasses.replace(profile, extra_help=False)
    found = [o.verdict.reason for o in (income_below_150_percent_fpl.evaluate(applicant, context),
                                         resources_within_lis_limit.evaluate(applicant, context))
             if o.status is Status.FAIL]
    return "; ".join(found) or None


@rule(program=KEY, label="Has Medicare (Part A and/or B)", document="extra_help#age-and-category", legal=SSA_PUB)
def has_medicare(profile: Profile, context: Context) -> Verdict:
    missing = unknown(profile, "medicare_parts")
    if missing:
        return missing
    if profile.medicare_contradictions():
        # Extra Help or an MSP with Medicare answered as none, or Part D alone (which needs A or B): the answers are
        # incomplete or contradict each other, so they decide nothing (Medicaid without Medicare is no contradiction)
        said = ", ".join(sorted(profile.medicare_parts)) or "none"
        return Verdict(status=Status.UNKNOWN, reason=f"Medicare parts: {said}, which does not fit the other answers "
                       "(Extra Help and Part D need Part A or B)", needs=("which parts of Medicare they have",))
    has = bool(profile.medicare_parts & {"A", "B"})
    if not has and not is_unknown(profile.age) and profile.age >= 65:
        # 65 or older without Medicare can still enroll (premium Part A through QMB, or Part B); Extra Help follows
        return Verdict(status=Status.UNKNOWN, reason="no Medicare yet; at 65 or older they can enroll in it, and Extra "
                       "Help then applies", needs=("whether they enroll in Medicare (Part A or B)",))
    return verdict(has, f"Medicare parts: {', '.join(sorted(profile.medicare_parts)) or 'none'}")


@rule(program=KEY, label="Income within the Extra Help limit after the general income exclusion (or automatic through Medicaid/MSP)", document="extra_help#income-limit",
      legal=ELDERLAW)
def income_below_150_percent_fpl(profile: Profile, context: Context) -> Verdict:
    enrolled = _deemed(profile, "income")
    if enrolled is not None:
        return enrolled
    # SSA counts income after the $20 general income exclusion (20 CFR 418.3325; HI 03030.005), as MSP does.
    def check(person: Profile) -> Verdict:
        return gross_of_disregard(person, context, context.thresholds.for_unit("extra_help_income", context.on,
                                                                             married=person.couple))
    return _decided(profile, context, check, "monthly_income")


def _decided(profile: Profile, context: Context, check, field: str) -> Verdict:
    """`check` (income or assets against the single or couple limit) when `field` and the marriage are known, or passes
    under the single limit whatever the marriage; short of a pass, and before anything unanswered is asked, a Medicare
    Savings Program or Apple Health the same answers rate likely confers Extra Help (`_conferred`); a fail stays open
    while a Medicare Savings Program or long-term care Medicaid may be ahead. Extra Help's own figure not on file for
    the date leaves `check` open, and the routes that confer Extra Help whatever its own limits are still consulted
    (programs.md section 6 intro, section 7 row 2)."""
    try:
        missing = under_smallest(limits_unknown(profile, field, "married"), profile, check, married=False)
        result = missing or check(profile)
    except ThresholdNotInForce as exc:
        missing, result = None, figure_not_on_file(exc)
    if result.status is Status.PASS:
        return result
    through_msp = _msp_ahead(profile, context)
    conferred = _conferred(profile, context, through_msp)
    if conferred is not None:       # a missing Extra Help figure is still said (the report's notice), deciding nothing
        return Verdict(status=Status.PASS, reason=f"{result.reason}; but {conferred.reason}",
                       thresholds=result.thresholds + conferred.thresholds, figure_missing=result.figure_missing)
    if missing:
        return missing
    route = _medicaid_ahead(profile, context) if result.status is Status.FAIL else None
    if route:
        pending = pending_needs(profile) if assessment_pending(profile) else ()
        return Verdict(status=Status.UNKNOWN, reason=f"{result.reason}; {route} would make Extra Help automatic",
                       thresholds=result.thresholds, unknown_fields=pending_fields(profile) if pending else (),
                       needs=(*pending, "whether they enroll in long-term care Apple Health (which confers Extra Help)"))
    if through_msp is not None and result.status is Status.FAIL:
        return dataclasses.replace(through_msp, reason=f"{result.reason}; but {through_msp.reason}",
                                   thresholds=result.thresholds + through_msp.thresholds)
    return result


def _conferred(profile: Profile, context: Context, through_msp: Verdict | None) -> Verdict | None:
    """A PASS when a program that confers Extra Help automatically is likely on the same answers (programs.md section 7
    row 2: full Medicaid, a Medicare Savings Program or SSI; 42 CFR 423.773(c)): the Medicare Savings Program
    (`_msp_ahead`), else Apple Health (`_apple_health_likely`); None when neither is."""
    if through_msp is not None and through_msp.status is Status.PASS:
        return through_msp
    return _apple_health_likely(profile, context)


APPLE_HEALTH_CONFERS = "full Medicaid confers Extra Help automatically (42 CFR 423.773(c))"


def _apple_health_likely(profile: Profile, context: Context) -> Verdict | None:
    """A PASS when every Apple Health rule passes on the same answers (categorically needy coverage, or long-term care
    Apple Health within the special income level: full Medicaid), in words; None otherwise (possibly is not enough:
    a spend-down or an enrolment still to come stays with `_medicaid_ahead`)."""
    if profile.apple_health in DEEMED:
        return None
    outcomes = [r.evaluate(profile, context) for r in apple_health.PROGRAM.rules]
    if any(o.status is not Status.PASS for o in outcomes):
        return None
    return verdict(True, f"Apple Health looks likely on these answers (see Apple Health), and {APPLE_HEALTH_CONFERS}")


MSP_CONFERS = "enrolling in it confers Extra Help automatically (42 CFR 423.773(c); Washington's MSP has no resource " \
              "test, WAC 182-517-0100)"


def _msp_ahead(profile: Profile, context: Context) -> Verdict | None:
    """A Medicare Savings Program the same answers rate likely (PASS) or possibly (UNKNOWN), which confers Extra Help
    once enrolled (programs.md section 6; section 7 row 2), in words; None when the MSP is excluded, or open only
    through enrolling in Extra Help itself (WAC 182-517-0100 since 2026-01-19: no Part A, under 65), which would be
    circular."""
    if profile.apple_health in DEEMED:
        return None
    if not is_unknown(profile.medicare_parts) and "A" not in profile.medicare_parts and \
            (is_unknown(profile.age) or profile.age < msp.MEDICARE_AGE):
        return None
    outcomes = [r.evaluate(profile, context) for r in msp.PROGRAM.rules]
    if any(o.status is Status.FAIL for o in outcomes):
        return None
    level = msp.tier(profile, context)
    named = f"a Medicare Savings Program ({level})" if level else "a Medicare Savings Program"
    open_ = [o for o in outcomes if o.status is Status.UNKNOWN]
    if not open_:
        return verdict(True, f"{named} looks likely on these answers, and {MSP_CONFERS}")
    return Verdict(status=Status.UNKNOWN, reason=f"{named} may apply ({open_[0].verdict.reason}), and {MSP_CONFERS}",
                   unknown_fields=tuple(dict.fromkeys(f for o in open_ for f in o.verdict.unknown_fields)),
                   needs=(*dict.fromkeys(n for o in open_ for n in o.verdict.needs),
                          "whether they enroll in a Medicare Savings Program (which confers Extra Help)"))


def _medicaid_ahead(profile: Profile, context: Context) -> str | None:
    """The Apple Health route ahead that would confer Extra Help whatever the income (42 CFR 423.773(c): full Medicaid,
    categorically or medically needy), in words, or None: not on Apple Health yet, in one of its coverage groups
    (apple_health.pathway: not when Apple Health's own age and disability test excludes them), and long-term care opens
    it — within the special income level (in a nursing facility, or at nursing-facility level of care with a waiver),
    or above it once the cost of that care is spent down (medically needy, in a nursing facility or at home at
    nursing-facility level of care)."""
    if profile.apple_health in DEEMED or pathway(profile, context) == "none":
        return None
    if long_term_care_route(profile, context) is not None:
        route = "long-term care Apple Health (within the special income level)"
    elif profile.living_situation == "nursing_facility" or profile.nursing_facility_level_of_care is True or \
            assessment_pending(profile):
        route = "medically needy Apple Health (once the cost of long-term care is spent down)"
    else:
        return None
    if assessment_pending(profile) and profile.living_situation not in INSTITUTIONAL_SETTINGS:
        route = f"{route}, if DSHS assesses nursing-facility level of care,"
    if is_unknown(profile.assets):
        return route
    if profile.married is not False:
        # a couple keeps more under spousal-impoverishment rules, up to the federal maximum CSRA
        return None if above_spousal_ceiling(profile, context) else route
    standard = context.thresholds.for_unit("ltc_resources", context.on, married=False)
    return route if at_or_below(profile.assets, standard, "countable assets").status is not Status.FAIL else None


@rule(program=KEY, label="Resources within the Extra Help limit (or automatic through Medicaid/MSP)",
      document="extra_help#resource-limit", legal=POMS_RESOURCES)
def resources_within_lis_limit(profile: Profile, context: Context) -> Verdict:
    enrolled = _deemed(profile, "resource")
    if enrolled is not None:
        return enrolled
    def check(person: Profile) -> Verdict:
        return own_share(person, at_or_below(person.assets, context.thresholds.for_unit(
            "extra_help_resources", context.on, married=person.couple), "countable assets"))
    return _decided(profile, context, check, "assets")


PROGRAM = Program(
    key=KEY, name="Extra Help (Medicare Part D Low-Income Subsidy)",
    rules=(has_medicare, income_below_150_percent_fpl, resources_within_lis_limit),
    always_needed=(),
    official_url=SSA_EXTRA_HELP[1])
