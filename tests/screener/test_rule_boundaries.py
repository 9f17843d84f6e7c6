"""Table-driven boundary tests: below, at and above every limit, across effective dates.

Expected limits are copied from shared/reference/carenav/programs.md and the sources cited in
data/programs/*.toml, not read from the data files. A bracket is whole dollars, both ends included: a
range wholly at or below the limit passes, one wholly above fails (or stays unknown where a deduction
could still bring it under), and one that includes the limit and a dollar above it is unknown.
"""
from __future__ import annotations

import math
from datetime import date

import pytest

from carenav_core.screener.intake import Bracket
from carenav_core.screener.rules.base import Status
from tests.screener.conftest import profile, run_rule, with_fields

P, F, U = Status.PASS, Status.FAIL, Status.UNKNOWN
MAGI_ADULT = {"age": 40, "medicare_parts": "none", "disability": "no"}
COUPLE = {"marital_status": "married", "household_size": 2}
# (at nursing-facility level of care long-term care Medicaid, which confers Extra Help, is ahead while their own income
# may be within the special income level)
NOT_ASSESSED = {"nursing_facility_level_of_care": "assessed_no"}
COUPLE_NOT_ASSESSED = {**COUPLE, **NOT_ASSESSED}
NOT_ELDERLY = {"age": 50, "disability": "no"}
ELDERLY_OVER_CE = {"monthly_income": "8000+"}
# income above the Medicare Savings Programs' QI-1 limit: no MSP confers Extra Help, so its own asset limit decides
ABOVE_QI1, COUPLE_ABOVE_QI1 = {"monthly_income": "1883-1956"}, {**COUPLE_NOT_ASSESSED, "monthly_income": "2510-2555"}

# (program, rule, answers, field, limit in the limit's unit, date, scale, status when wholly above, disregard)
CASES = [
    ("apple_health", "income_within_cn_or_magi_limit", {}, "monthly_income", 987, date(2025, 12, 31), 1, U, 0),
    ("apple_health", "income_within_cn_or_magi_limit", {}, "monthly_income", 1014, date(2026, 1, 1), 1, U, 0),
    ("apple_health", "income_within_cn_or_magi_limit", COUPLE, "monthly_income", 1511, date(2026, 1, 1), 1, U, 0),
    ("apple_health", "income_within_cn_or_magi_limit", MAGI_ADULT, "monthly_income", 1732, date(2025, 3, 31), 1, F, 0),
    ("apple_health", "income_within_cn_or_magi_limit", MAGI_ADULT, "monthly_income", 1800, date(2026, 3, 31), 1, F, 0),
    ("apple_health", "income_within_cn_or_magi_limit", MAGI_ADULT, "monthly_income", 1836, date(2026, 4, 1), 1, F, 0),
    ("apple_health", "income_within_cn_or_magi_limit", {**MAGI_ADULT, "household_size": 2}, "monthly_income",
     2489, date(2026, 4, 1), 1, F, 0),
    ("apple_health", "resources_within_limit", {}, "assets", 2000, date(2026, 1, 1), 1, F, 0),
    ("apple_health", "resources_within_limit", COUPLE_NOT_ASSESSED, "assets", 3000, date(2026, 1, 1), 1, F, 0),
    ("tsoa", "income_within_400_percent_fbr", {}, "monthly_income", 3868, date(2025, 12, 31), 1, F, 0),
    ("tsoa", "income_within_400_percent_fbr", {}, "monthly_income", 3976, date(2026, 1, 1), 1, F, 0),
    ("tsoa", "resources_within_tsoa_standard", {}, "assets", 53100, date(2023, 10, 8), 1, F, 0),
    ("tsoa", "resources_within_tsoa_standard", {}, "assets", 84354, date(2026, 1, 1), 1, F, 0),
    # the 2026 married figure is the whole standard (applicant + state spousal standard, WAC 182-513-1640(2))
    ("tsoa", "resources_within_tsoa_standard", COUPLE, "assets", 156883, date(2026, 1, 1), 1, F, 0),
    ("copes", "income_within_special_income_level", {}, "monthly_income", 2901, date(2025, 12, 31), 1, F, 0),
    ("copes", "income_within_special_income_level", {}, "monthly_income", 2982, date(2026, 1, 1), 1, F, 0),
    ("copes", "resources_within_ltc_standard", {}, "assets", 2000, date(2026, 1, 1), 1, F, 0),
    # the couple's $3,000 decides only without a long-term care need; with one, spousal impoverishment rules
    # protect at least the state standard plus $2,000 (session 16: test_session16_cases.py)
    ("copes", "resources_within_ltc_standard", COUPLE_NOT_ASSESSED, "assets", 3000, date(2026, 1, 1), 1, F, 0),
    ("msp", "income_within_qi1_limit", {}, "monthly_income", 1732 + 20, date(2025, 3, 31), 1, F, 20),
    ("msp", "income_within_qi1_limit", {}, "monthly_income", 1800 + 20, date(2026, 3, 31), 1, F, 20),
    ("msp", "income_within_qi1_limit", {}, "monthly_income", 1836 + 20, date(2026, 4, 1), 1, F, 20),
    ("msp", "income_within_qi1_limit", COUPLE, "monthly_income", 2489 + 20, date(2026, 4, 1), 1, F, 20),
    # SSA's yearly limit / 12 to the cent (programs.md: 150% of the 2025 guidelines $1,956.25 / $2,643.75 a month)
    ("extra_help", "income_below_150_percent_fpl", NOT_ASSESSED, "monthly_income", 1956.25 + 20, date(2025, 12, 31), 1,
     F, 20),
    ("extra_help", "income_below_150_percent_fpl", COUPLE_NOT_ASSESSED, "monthly_income", 2643.75 + 20,
     date(2025, 6, 1), 1, F, 20),
    ("extra_help", "income_below_150_percent_fpl", NOT_ASSESSED, "monthly_income", 1995 + 20, date(2026, 1, 13), 1, F,
     20),
    ("extra_help", "income_below_150_percent_fpl", COUPLE_NOT_ASSESSED, "monthly_income", 2705 + 20, date(2026, 1, 13),
     1, F, 20),
    ("extra_help", "resources_within_lis_limit", ABOVE_QI1, "assets", 17600, date(2025, 6, 1), 1, F, 0),
    ("extra_help", "resources_within_lis_limit", COUPLE_ABOVE_QI1, "assets", 35130, date(2025, 12, 31), 1, F, 0),
    ("extra_help", "resources_within_lis_limit", ABOVE_QI1, "assets", 18090, date(2026, 1, 1), 1, F, 0),
    ("extra_help", "resources_within_lis_limit", COUPLE_ABOVE_QI1, "assets", 36100, date(2026, 12, 31), 1, F, 0),
    ("basic_food", "income_within_basic_food_limit", NOT_ELDERLY, "monthly_income", 2510, date(2025, 3, 31), 1, F, 0),
    ("basic_food", "income_within_basic_food_limit", NOT_ELDERLY, "monthly_income", 2608, date(2025, 4, 1), 1, F, 0),
    ("basic_food", "income_within_basic_food_limit", NOT_ELDERLY, "monthly_income", 2660, date(2026, 4, 1), 1, F, 0),
    # a household of four whose other members' ages and disabilities the intake does not ask: over the gross limit
    # it may still have a member 60+ or disabled (net test only), so the gross test cannot exclude it
    ("basic_food", "income_within_basic_food_limit", {**NOT_ELDERLY, "household_size": 4}, "monthly_income",
     5500, date(2026, 4, 1), 1, U, 0),
    ("basic_food", "income_within_basic_food_limit", {}, "monthly_income", 2660, date(2026, 4, 1), 1, U, 0),
    ("basic_food", "resources_within_basic_food_limit", ELDERLY_OVER_CE, "assets", 4500, date(2026, 4, 1), 1, F, 0),
    ("liheap", "income_within_150_percent_fpl", {}, "monthly_income", 1882.5, date(2025, 9, 30), 1, F, 0),
    ("liheap", "income_within_150_percent_fpl", {}, "monthly_income", 1956.25, date(2026, 9, 30), 1, F, 0),
    ("liheap", "income_within_150_percent_fpl", {}, "monthly_income", 1995, date(2026, 10, 1), 1, F, 0),
    ("liheap", "income_within_150_percent_fpl", {"household_size": 3}, "monthly_income", 3415, date(2026, 10, 1), 1, F, 0),
    ("property_tax", "income_within_county_threshold", {}, "monthly_income", 84000, date(2026, 12, 31), 12, U, 0),
    ("property_tax", "income_within_county_threshold", {}, "monthly_income", 101000, date(2027, 1, 1), 12, U, 0),
    ("property_tax", "income_within_county_threshold", {"county": "Lewis"}, "monthly_income", 48000,
     date(2026, 1, 1), 12, U, 0),
]


def _points(limit: float, scale: int, above: Status) -> list[tuple[int, int, Status]]:
    """Whole-dollar ranges (monthly when scale is 12): below, at, straddling and above the limit."""
    top = math.floor(limit / scale)          # the highest whole amount at or below the limit
    straddle = U if top * scale < limit or top + 1 > limit / scale else P
    return [(0, top - 1, P), (0, top, P), (top, top + 1, straddle), (0, top + 5, U),
            (top + 1, top + 1000, above), (top - 5, top + 1000, U)]


@pytest.mark.parametrize(("program", "rule", "answers", "field", "limit", "on", "scale", "above", "disregard"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[4]}-{c[5]}" for c in CASES])
def test_limit_boundaries(program, rule, answers, field, limit, on, scale, above, disregard):
    base = profile(**answers)
    for lower, upper, expected in _points(limit, scale, above):
        bracket = Bracket(key="t", lower=lower, upper=upper, sliver=10, unit="test")
        outcome = run_rule(program, rule, with_fields(base, **{field: bracket}), on)
        assert outcome.status is expected, (lower, upper, outcome.verdict.reason)
        assert outcome.verdict.thresholds[0].amount == pytest.approx(limit - disregard)


# (program, rule, answers, age limit, date)
AGE_CASES = [
    ("apple_health", "in_coverage_category", {"disability": "no", "medicare_parts": ["A"]}, 65, date(2026, 1, 1)),
    ("mac", "care_receiver_55_or_older", {}, 55, date(2026, 1, 1)),
    ("tsoa", "aged_55_or_older", {}, 55, date(2026, 1, 1)),
    ("pace", "aged_55_or_older", {}, 55, date(2026, 1, 1)),
    ("copes", "aged_65_or_disabled_adult", {"disability": "no"}, 65, date(2026, 1, 1)),
    ("va_pension", "aged_65_or_disabled", {"disability": "no", "living_situation": "own_home"}, 65, date(2026, 1, 1)),
]


@pytest.mark.parametrize(("program", "rule", "answers", "limit", "on"), AGE_CASES, ids=[c[1] for c in AGE_CASES])
def test_age_boundaries(program, rule, answers, limit, on):
    for age, expected in ((limit - 1, F), (limit, P), (limit + 1, P)):
        assert run_rule(program, rule, profile(**{**answers, "age": age}), on).status is expected, age


@pytest.mark.parametrize(("age", "married", "expected"), [(59, "married", U), (60, "married", U), (61, "married", P),
                                                          (62, "married", P), (56, "single", F), (57, "single", U),
                                                          (59, "single", U)])
def test_property_tax_age_is_reached_by_december_31_of_the_application_year(age, married, expected):
    # RCW 84.36.381: 61 by December 31 of the year of application; a 60-year-old may turn 61 this year; a participant's
    # surviving spouse or partner (so not married now) may continue it from 57; a married person's spouse, whose age the
    # intake does not ask, may be the one of age (only one of a couple owning the home must be).
    outcome = run_rule("property_tax", "aged_61_or_disabled", profile(age=age, disability="no", veteran_status="no",
                                                                      marital_status=married), date(2026, 5, 1))
    assert outcome.status is expected, outcome.verdict.reason


def test_a_veteran_under_61_may_qualify_by_a_va_rating_the_intake_does_not_ask():
    outcome = run_rule("property_tax", "aged_61_or_disabled", profile(age=55, disability="no", veteran_status="veteran"),
                       date(2026, 5, 1))
    assert outcome.status is U and "the VA service-connected disability rating" in outcome.verdict.needs


def test_care_receiver_age_boundary():
    for age, expected in ((17, F), (18, P), (19, P)):
        person = profile(caring_for_someone="yes", has_unpaid_caregiver="no", care_recipient_age=age)
        assert run_rule("fcsp", "care_receiver_is_adult", person).status is expected


@pytest.mark.parametrize(("age", "on", "expected"), [(18, date(2026, 4, 1), U), (19, date(2026, 4, 1), P),
                                                     (64, date(2026, 4, 1), P)])
def test_magi_age_band(age, on, expected):
    person = profile(age=age, disability="no", medicare_parts="none")
    assert run_rule("apple_health", "in_coverage_category", person, on).status is expected


@pytest.mark.parametrize(("lower", "upper", "on", "expected"), [
    (0, 140_000, date(2025, 11, 30), P),        # 140,000 + 12 x 1,299 = 155,588 <= 159,240
    (0, 148_000, date(2025, 11, 30), U),        # 163,588 includes 159,240
    (0, 148_000, date(2025, 12, 1), P),         # 163,588 <= 163,699
    (0, 148_111, date(2025, 12, 1), P),         # 163,699: at the limit
    (0, 148_112, date(2025, 12, 1), U),         # 163,700: a dollar over, straddles
    (0, 153_000, date(2026, 11, 30), U),        # 168,588 > 163,699
    (0, 153_000, date(2026, 12, 1), U),         # 168,588 > 163,699, the floor of the unseen 12/2026 limit
    (0, 148_000, date(2026, 12, 1), P),         # 163,588 <= 163,699: a pass under the floor holds
    (159_241, 300_000, date(2025, 11, 30), F),  # assets alone exceed the limit
    (159_241, 300_000, date(2025, 12, 1), U),   # ... but not the next year's limit of 163,699
    (150_000, 159_000, date(2025, 11, 30), U),  # only with income above it: care costs may lower income
    (0, 140_000, date(2027, 12, 1), P),         # 12/2027: still a floor two years on, a pass under it holds
    (400_000, 500_000, date(2027, 12, 1), U),   # ... but two COLAs may outgrow the headroom: nothing above decided
    (0, 140_000, date(2028, 12, 1), U),         # no VA figure on file for 12/2028
])
def test_va_net_worth_boundaries_across_va_years(lower, upper, on, expected):
    person = with_fields(profile(monthly_income="1000-1299"),
                         assets=Bracket(key="a", lower=lower, upper=upper, sliver=100, unit="USD"))
    assert run_rule("va_pension", "net_worth_within_limit", person, on).status is expected
