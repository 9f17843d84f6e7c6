"""Medicare Savings Programs (QMB, SLMB, QI-1): WAC 182-517-0100. No resource test in WA since 2023-01-01."""
from __future__ import annotations

import dataclasses
from datetime import date

from carenav_core.screener.profile import Profile, is_unknown
from carenav_core.screener.thresholds import ThresholdNotInForce
from carenav_core.screener.rules.base import (Context, Program, Status, Verdict, gross_of_disregard,
                                              income_scope_exact, limits_unknown, rule, under_smallest, unknown,
                                              verdict)

KEY = "msp"
MEDICARE_AGE = 65
HCA_MSP = ("HCA: Medicare Savings Program (WAC 182-517-0100)",
           "https://www.hca.wa.gov/free-or-low-cost-health-care/i-help-others-apply-and-access-apple-health/medicare-savings-program-msp")
WSR_26_01_043 = ("WSR 26-01-043 (WAC 182-517-0100 amended 2026-01-19)",
                 "https://lawfilesext.leg.wa.gov/law/wsr/2026/01/26-01-043.htm")


@rule(program=KEY, label="Entitled to Medicare Part A, or enrolled in Extra Help where the rule in force allows it",
      document="msp#age-and-category", legal=WSR_26_01_043)
def medicare_part_a_or_extra_help(profile: Profile, context: Context) -> Verdict:
    if not is_unknown(profile.medicare_parts) and "A" in profile.medicare_parts:
        return verdict(True, "has Medicare Part A")
    route = context.thresholds.amount("msp_extra_help_route", context.on)
    contradictions = profile.medicare_contradictions()
    if {"msp", "part_d_only"} & set(contradictions):
        # enrolled in an MSP with no Medicare, or Part D alone (which needs A or B): incomplete or contradictory
        return Verdict(status=Status.UNKNOWN, reason="the Medicare answer does not fit the other answers (an MSP and "
                       "Part D go with Part A or B)", thresholds=(route,), needs=("which parts of Medicare they have",))
    if route.amount and "extra_help" in contradictions:
        # contradictory answers (Extra Help requires Medicare): neither is taken over the other
        return Verdict(status=Status.UNKNOWN, reason="the answers say enrolled in Extra Help, which requires "
                       "Medicare, and no Medicare", thresholds=(route,), needs=("which parts of Medicare they have",))
    if route.amount and not is_unknown(profile.extra_help) and profile.extra_help:
        return verdict(True, f"enrolled in Extra Help, which qualifies from {route.effective:%B %-d, %Y}", route)
    aged = not is_unknown(profile.age) and profile.age >= MEDICARE_AGE
    if not is_unknown(profile.medicare_parts) and "A" not in profile.medicare_parts and aged:
        level = tier(profile, context)
        if level and "QMB" not in level:
            # income above QMB: conditional enrollment (premium Part A that QMB pays) is not theirs; SLMB and QI-1
            # need Part A entitlement and pay only the Part B premium (programs.md section 6)
            return Verdict(status=Status.UNKNOWN, reason=f"no Medicare Part A yet; at 65 or older they can enroll in "
                           f"it (premium-free with enough work history, otherwise at their own premium: QMB, which "
                           f"would pay it, is not open at this income), and {level} then pays the Part B premium",
                           thresholds=(route,), needs=("whether they enroll in Medicare Part A through Social "
                                                       "Security",))
        # 65 or older without premium-free Part A: SSA enrolls them in premium Part A on the condition that the State
        # approves QMB, which then pays that premium (POMS HI 00801.140)
        return Verdict(status=Status.UNKNOWN, reason="no Medicare Part A yet; at 65 or older premium Part A can be "
                       "taken up conditionally on QMB approval (SSA POMS HI 00801.140), and QMB then pays its premium",
                       thresholds=(route,), needs=("whether they apply for Part A through Social Security's "
                                                   "conditional enrollment for QMB",))
    if not is_unknown(profile.medicare_parts) and not profile.medicare_parts:
        # Extra Help itself requires Medicare, so no Medicare at all settles both routes (under 65).
        return verdict(False, "no Medicare (Extra Help also requires Medicare)", route)
    fields = ("medicare_parts", "extra_help") if route.amount else ("medicare_parts",)
    missing = unknown(profile, *fields)
    if missing:
        return missing
    if route.amount and profile.extra_help is False:
        # with Part B, Extra Help is open to them; once enrolled in it, it qualifies them here (WAC 182-517-0100)
        return Verdict(status=Status.UNKNOWN, reason=f"no Medicare Part A and not enrolled in Extra Help, whose "
                       f"enrollment qualifies from {route.effective:%B %-d, %Y}", thresholds=(route,),
                       needs=("whether they enroll in Extra Help (which then qualifies them here)",))
    return verdict(False, "no Medicare Part A" + (" and no Extra Help" if route.amount else ""), route)


ENROLLED = "msp_only"
# HCA rechecks income at renewal; answers wholly above the QI-1 limit are a check notice (`enrolment_misfit`), as for
# Extra Help (extra_help._deemed) and categorically needy Apple Health (apple_health.already_enrolled)
ALREADY_ENROLLED = dataclasses.replace(
    verdict(True, "already enrolled in a Medicare Savings Program (its income limit is not checked here; HCA rechecks "
            "it, so confirm it continues at renewal)"),
    met_as="Already enrolled in a Medicare Savings Program (income not checked here)")


def enrolment_misfit(profile: Profile, on: date) -> str | None:
    """Why answers that say already enrolled in a Medicare Savings Program do not fit it, in words: the income answer
    fails the QI-1 limit, the highest of the three (WAC 182-517-0100; Washington's MSP has no resource test), as for
    someone not enrolled (`income_within_qi1_limit`); None when it may fit, the figure is not on file for `on`, or the
    enrolment is not the answer."""
    if profile.apple_health != ENROLLED:
        return None
    from carenav_core.screener.intake import load_intake_options
    from carenav_core.screener.thresholds import load_thresholds
    context = Context(thresholds=load_thresholds(), on=on, options=load_intake_options())
    outcome = income_within_qi1_limit.evaluate(dataclasses.replace(profile, apple_health="none"), context)
    return outcome.verdict.reason if outcome.status is Status.FAIL else None


@rule(program=KEY, label="Countable income at or below the QI-1 limit after the general income disregard",
      document="msp#income-limit", legal=HCA_MSP)
def income_within_qi1_limit(profile: Profile, context: Context) -> Verdict:
    if profile.apple_health == ENROLLED:        # already enrolled: said as that, claiming no limit met
        return ALREADY_ENROLLED
    def check(person: Profile) -> Verdict:
        return gross_of_disregard(person, context, context.thresholds.for_unit("msp_qi1_income", context.on,
                                                                             married=person.couple))
    missing = under_smallest(limits_unknown(profile, "monthly_income", "married"), profile, check, married=False)
    return missing or check(profile)


TIERS = (("QMB", "msp_qmb_income"), ("SLMB", "msp_slmb_income"), ("QI-1", "msp_qi1_income"))


def tier(profile: Profile, context: Context) -> str:
    """The tier the income answer points to: 'QMB', 'SLMB', 'QI-1', or e.g. 'SLMB or QI-1' when the
    income range spans a tier limit; '' when income or marital status is unknown or above QI-1."""
    if is_unknown(profile.monthly_income) or is_unknown(profile.married) or \
            not income_scope_exact(profile, individual=False):
        return ""           # household income that covers more people cannot point to a tier
    names = []
    for name, key in TIERS:
        try:
            limit = context.thresholds.for_unit(key, context.on, married=profile.couple)
        except ThresholdNotInForce:
            return ""       # a tier figure not on file for the date: no tier is named (the card says why elsewhere)
        status = gross_of_disregard(profile, context, limit).status
        names += [] if status is Status.FAIL else [name]
        if status is Status.PASS:
            break
    return " or ".join(names)


PROGRAM = Program(
    key=KEY, name="Medicare Savings Programs (QMB / SLMB / QI-1)",
    rules=(medicare_part_a_or_extra_help, income_within_qi1_limit),
    always_needed=("Washington residency and citizenship or qualifying immigration status",),
    official_url="https://www.hca.wa.gov/health-care-services-supports/apple-health-medicaid-coverage/medicare-savings-program")
