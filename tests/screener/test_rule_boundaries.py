"""Table-driven boundary tests: just below, at and just above every limit, across effective dates.

Expected limits are copied from shared/reference/carenav/programs.md, not from the data files.
Each case builds answer brackets around the limit: a bracket ending at or just below the limit
passes, one whose top edge lies within the sliver above it counts as aligned (pass), one reaching
further straddles it (unknown), and one starting at or just under it (within the sliver) is above it.
"""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.screener.intake import Bracket
from carenav_core.screener.rules.base import Status
from tests.screener.conftest import profile, run_rule, with_fields

P, F, U = Status.PASS, Status.FAIL, Status.UNKNOWN
INCOME_SLIVER, ASSET_SLIVER = 10, 100
MAGI_ADULT = {"age": 40, "medicare_parts": "none", "disability": "no"}
COUPLE = {"marital_status": "married", "household_size": 2}
NOT_ELDERLY = {"age": 50, "disability": "no"}
ELDERLY_OVER_CE = {"monthly_income": "8000+"}

# (program, rule, answers, field, limit in the limit's unit, date, scale, status when wholly above)
CASES = [
    ("apple_health", "income_within_cn_or_magi_limit", {}, "monthly_income", 987, date(2025, 12, 31), 1, U),
    ("apple_health", "income_within_cn_or_magi_limit", {}, "monthly_income", 1014, date(2026, 1, 1), 1, U),
    ("apple_health", "income_within_cn_or_magi_limit", COUPLE, "monthly_income", 1511, date(2026, 1, 1), 1, U),
    ("apple_health", "income_within_cn_or_magi_limit", MAGI_ADULT, "monthly_income", 1800, date(2026, 3, 31), 1, F),
    ("apple_health", "income_within_cn_or_magi_limit", MAGI_ADULT, "monthly_income", 1836, date(2026, 4, 1), 1, F),
    ("apple_health", "income_within_cn_or_magi_limit", {**MAGI_ADULT, "household_size": 2}, "monthly_income",
     2489, date(2026, 4, 1), 1, F),
    ("apple_health", "resources_within_limit", {}, "assets", 2000, date(2026, 1, 1), 1, F),
    ("apple_health", "resources_within_limit", COUPLE, "assets", 3000, date(2026, 1, 1), 1, F),
    ("tsoa", "income_within_400_percent_fbr", {}, "monthly_income", 3868, date(2025, 12, 31), 1, F),
    ("tsoa", "income_within_400_percent_fbr", {}, "monthly_income", 3976, date(2026, 1, 1), 1, F),
    ("tsoa", "resources_within_tsoa_standard", {}, "assets", 84354, date(2026, 1, 1), 1, F),
    ("tsoa", "resources_within_tsoa_standard", COUPLE, "assets", 156883, date(2026, 1, 1), 1, F),
    ("copes", "income_within_special_income_level", {}, "monthly_income", 2901, date(2025, 12, 31), 1, F),
    ("copes", "income_within_special_income_level", {}, "monthly_income", 2982, date(2026, 1, 1), 1, F),
    ("copes", "resources_within_ltc_standard", {}, "assets", 2000, date(2026, 1, 1), 1, F),
    ("copes", "resources_within_ltc_standard", COUPLE, "assets", 3000, date(2026, 1, 1), 1, U),
    ("msp", "income_within_qi1_limit", {}, "monthly_income", 1800 + 20, date(2026, 3, 31), 1, F),
    ("msp", "income_within_qi1_limit", {}, "monthly_income", 1836 + 20, date(2026, 4, 1), 1, F),
    ("msp", "income_within_qi1_limit", COUPLE, "monthly_income", 2489 + 20, date(2026, 4, 1), 1, F),
    ("extra_help", "income_below_150_percent_fpl", {}, "monthly_income", 1956, date(2025, 12, 31), 1, F),
    ("extra_help", "income_below_150_percent_fpl", {}, "monthly_income", 1995, date(2026, 1, 1), 1, F),
    ("extra_help", "income_below_150_percent_fpl", COUPLE, "monthly_income", 2705, date(2026, 1, 1), 1, F),
    ("extra_help", "resources_within_lis_limit", {}, "assets", 17600, date(2025, 6, 1), 1, F),
    ("extra_help", "resources_within_lis_limit", COUPLE, "assets", 35130, date(2025, 12, 31), 1, F),
    ("basic_food", "income_within_basic_food_limit", NOT_ELDERLY, "monthly_income", 2510, date(2025, 3, 31), 1, F),
    ("basic_food", "income_within_basic_food_limit", NOT_ELDERLY, "monthly_income", 2608, date(2025, 4, 1), 1, F),
    ("basic_food", "income_within_basic_food_limit", NOT_ELDERLY, "monthly_income", 2660, date(2026, 4, 1), 1, F),
    ("basic_food", "income_within_basic_food_limit", {**NOT_ELDERLY, "household_size": 4}, "monthly_income",
     5500, date(2026, 4, 1), 1, F),
    ("basic_food", "income_within_basic_food_limit", {}, "monthly_income", 2660, date(2026, 4, 1), 1, U),
    ("basic_food", "resources_within_basic_food_limit", ELDERLY_OVER_CE, "assets", 4500, date(2026, 4, 1), 1, F),
    ("liheap", "income_within_150_percent_fpl", {}, "monthly_income", 1956, date(2026, 9, 30), 1, F),
    ("liheap", "income_within_150_percent_fpl", {}, "monthly_income", 1995, date(2026, 10, 1), 1, F),
    ("liheap", "income_within_150_percent_fpl", {"household_size": 3}, "monthly_income", 3415, date(2026, 10, 1), 1, F),
    ("property_tax", "income_within_county_threshold", {}, "monthly_income", 84000, date(2026, 12, 31), 12, U),
    ("property_tax", "income_within_county_threshold", {}, "monthly_income", 101000, date(2027, 1, 1), 12, U),
    ("property_tax", "income_within_county_threshold", {"county": "Lewis"}, "monthly_income", 48000,
     date(2026, 1, 1), 12, U),
]


def _points(limit: float, scale: int, sliver: float, above: Status) -> list[tuple[float, float, Status]]:
    edge = limit / scale
    return [(0, edge - 1, P), (0, edge, P), (0, edge + sliver, P), (0, edge + sliver + 1, U),
            (edge, edge + 1000, above), (edge - sliver, edge + 1000, above), (edge - sliver - 1, edge + 1000, U)]


@pytest.mark.parametrize(("program", "rule", "answers", "field", "limit", "on", "scale", "above"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[4]}-{c[5]}" for c in CASES])
def test_limit_boundaries(program, rule, answers, field, limit, on, scale, above):
    sliver = INCOME_SLIVER if field == "monthly_income" else ASSET_SLIVER
    base = profile(**answers)
    for lower, upper, expected in _points(limit, scale, sliver, above):
        bracket = Bracket(key="t", lower=lower, upper=upper, sliver=sliver, unit="test")
        outcome = run_rule(program, rule, with_fields(base, **{field: bracket}), on)
        assert outcome.status is expected, (lower, upper, outcome.verdict.reason)
        assert outcome.verdict.thresholds[0].amount == pytest.approx(limit - (20 if program == "msp" else 0)) \
            or program == "msp"


# (program, rule, answers, age limit, date)
AGE_CASES = [
    ("apple_health", "in_coverage_category", {"disability": "no", "medicare_parts": ["A"]}, 65, date(2026, 1, 1)),
    ("mac", "care_receiver_55_or_older", {}, 55, date(2026, 1, 1)),
    ("tsoa", "aged_55_or_older", {}, 55, date(2026, 1, 1)),
    ("pace", "aged_55_or_older", {}, 55, date(2026, 1, 1)),
    ("copes", "aged_65_or_disabled_adult", {"disability": "no"}, 65, date(2026, 1, 1)),
    ("va_pension", "aged_65_or_disabled", {"disability": "no"}, 65, date(2026, 1, 1)),
    ("property_tax", "aged_61_or_disabled", {"disability": "no"}, 61, date(2026, 1, 1)),
]


@pytest.mark.parametrize(("program", "rule", "answers", "limit", "on"), AGE_CASES, ids=[c[1] for c in AGE_CASES])
def test_age_boundaries(program, rule, answers, limit, on):
    for age, expected in ((limit - 1, F), (limit, P), (limit + 1, P)):
        assert run_rule(program, rule, profile(**{**answers, "age": age}), on).status is expected, age


def test_care_receiver_age_boundary():
    for age, expected in ((17, F), (18, P), (19, P)):
        person = profile(caring_for_someone="yes", has_unpaid_caregiver="no", care_recipient_age=age)
        assert run_rule("fcsp", "care_receiver_is_adult", person).status is expected


@pytest.mark.parametrize(("age", "on", "expected"), [(18, date(2026, 4, 1), F), (19, date(2026, 4, 1), P),
                                                     (64, date(2026, 4, 1), P)])
def test_magi_age_band(age, on, expected):
    person = profile(age=age, disability="no", medicare_parts="none")
    assert run_rule("apple_health", "in_coverage_category", person, on).status is expected


@pytest.mark.parametrize(("upper", "lower", "on", "expected"), [
    (140_000, 0, date(2025, 11, 30), P),        # 140,000 + 12 x 1,300 = 155,600 <= 159,240
    (148_000, 0, date(2025, 11, 30), U),        # 163,600 straddles 159,240
    (148_000, 0, date(2025, 12, 1), P),         # 163,600 <= 163,699
    (148_199, 0, date(2025, 12, 1), P),         # 163,799: within the $100 sliver, aligned
    (148_200, 0, date(2025, 12, 1), U),         # 163,800: straddles
    (None, 160_000, date(2025, 11, 30), F),     # assets alone exceed the limit
    (None, 150_000, date(2025, 11, 30), U),     # only with income above it: care costs may lower income
    (140_000, 0, date(2026, 12, 1), U),         # no VA year 2027 figure on file
])
def test_va_net_worth_boundaries_across_va_years(upper, lower, on, expected):
    # limit $159,240 (12/2024-11/2025) then $163,699 (12/2025-11/2026); income (1,000-1,300/month) x 12.
    person = with_fields(profile(monthly_income="1000-1300"),
                         assets=Bracket(key="a", lower=lower, upper=upper, sliver=100, unit="USD"))
    assert run_rule("va_pension", "net_worth_within_limit", person, on).status is expected
