"""The six rule-logic errors of issue 11, each pinned below, at and above its limit.

Each test failed on the code before the fix (checked by running this file against the previous commit).
Limits: VA net worth $159,240 (12/2024-11/2025) and $163,699 (12/2025-11/2026) [va.gov rates]; MSP QI-1
$1,836 + $20 from 2026-04-01 [HCA]; LIHEAP 150% FPL $1,995 from 2026-10-01; Extra Help 2026 $1,995 + $20
and resources $17,990 [SSA POMS HI 03030.025 x 1.024]; Basic Food 200% FPL $2,660 (2026-04-01).
"""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.screener.engine import Classification, screen
from carenav_core.screener.intake import Bracket
from carenav_core.screener.rules.base import Status
from tests.screener.conftest import profile, run_rule, with_fields

P, F, U = Status.PASS, Status.FAIL, Status.UNKNOWN


def dollars(lower: int, upper: int | None, unit: str = "USD") -> Bracket:
    return Bracket(key="t", lower=lower, upper=upper, sliver=100 if unit == "USD" else 10, unit=unit)


# 1. VA pension: assets alone above the limit exclude, whatever the income (and the intake can say so).
@pytest.mark.parametrize(("assets", "on", "expected"), [
    (dollars(0, 159_240), date(2025, 6, 1), U),          # at the limit, income unknown: income still needed
    (dollars(159_241, None), date(2025, 6, 1), F),       # just above, income unknown
    (dollars(300_000, None), date(2026, 6, 1), F),       # far above
    (dollars(159_241, None), date(2026, 6, 1), U),       # the same assets under the 12/2025 limit
])
def test_1_va_assets_alone_exclude_without_income(assets, on, expected):
    person = with_fields(profile(monthly_income=None), assets=assets)
    assert run_rule("va_pension", "net_worth_within_limit", person, on).status is expected


def test_1_the_intake_has_an_asset_bracket_wholly_above_every_va_limit():
    person = profile(veteran_status="veteran", monthly_income=None, assets="250000+")
    for on in (date(2025, 6, 1), date(2026, 6, 1)):
        result = {r.program.key: r for r in screen(person, on=on)}["va_pension"]
        assert result.classification is Classification.EXCLUDED, on
    # from 12/2026 the limit in force is not seen (only that it is at least $163,699): a bracket wholly above the floor
    # plus the largest yearly rise such figures have had (FLOOR_HEADROOM) is still above it; one within it is not decided
    result = {r.program.key: r for r in screen(person, on=date(2026, 12, 1))}["va_pension"]
    assert result.classification is Classification.EXCLUDED
    within = profile(veteran_status="veteran", monthly_income=None, assets="169593-249999")
    result = {r.program.key: r for r in screen(within, on=date(2026, 12, 1))}["va_pension"]
    assert result.classification is Classification.POSSIBLY


# 2. VA pension age test: under 65 with disability, nursing home or surviving-spouse status unknown stays open.
@pytest.mark.parametrize(("answers", "expected"), [
    ({"age": 64, "disability": "dont_know"}, U),
    ({"age": 64, "disability": "no", "veteran_status": "dont_know"}, U),
    ({"age": 64, "disability": "no", "living_situation": None}, U),
    ({"age": 64, "disability": "no"}, F),
    ({"age": 65, "disability": "dont_know"}, P),
    ({"age": 40, "disability": "no", "veteran_status": "surviving_spouse"}, P),
])
def test_2_va_age_test_leaves_open_routes_open(answers, expected):
    assert run_rule("va_pension", "aged_65_or_disabled", profile(**answers)).status is expected


# 3. Basic Food: unknown income cannot lead to the asset test (categorical eligibility waives it).
@pytest.mark.parametrize(("income", "expected"), [
    (None, U), ("dont_know", U), ((2645, 2660), P), ((2661, 2664), F), ((2609, 2706), U)])
def test_3_basic_food_assets_wait_for_income(income, expected):
    # Over $4,500 in assets, 70 years old: the asset test applies only when income is above $2,660.
    person = with_fields(profile(age=70, household_size=1, monthly_income=income if isinstance(income, str) else None),
                         assets=dollars(10_001, 17_600))
    if isinstance(income, tuple):
        person = with_fields(person, monthly_income=dollars(*income, "USD/month"))
    outcome = run_rule("basic_food", "resources_within_basic_food_limit", person, date(2026, 5, 1))
    assert outcome.status is expected, outcome.verdict.reason


# 4. Brackets never round: an approximation makes a result unknown, never flips it.
@pytest.mark.parametrize(("income", "expected"), [
    (dollars(1851, 1856, "USD/month"), P),   # at or below $1,856: passes (was wrongly excluded)
    (dollars(1850, 2000, "USD/month"), U),
    (dollars(1857, 2000, "USD/month"), F),
])
def test_4_msp_sliver_never_excludes_people_under_the_limit(income, expected):
    person = with_fields(profile(monthly_income=None), monthly_income=income)
    assert run_rule("msp", "income_within_qi1_limit", person, date(2026, 4, 1)).status is expected


@pytest.mark.parametrize(("income", "expected"), [
    (dollars(1977, 1995, "USD/month"), P),
    (dollars(1850, 2000, "USD/month"), U),   # includes $1,996-2,000, above $1,995 (was wrongly passed)
    (dollars(1996, 2015, "USD/month"), F),
])
def test_4_liheap_sliver_never_passes_people_over_the_limit(income, expected):
    person = with_fields(profile(monthly_income=None), monthly_income=income)
    assert run_rule("liheap", "income_within_150_percent_fpl", person, date(2026, 10, 1)).status is expected


# 5. MAC, TSOA and PACE judge the person receiving care, also when the caregiver is the one screened.
CAREGIVER = {"age": 52, "caring_for_someone": "yes", "has_unpaid_caregiver": "no", "medicare_parts": "none"}


@pytest.mark.parametrize(("program", "rule"), [("mac", "care_receiver_55_or_older"), ("tsoa", "aged_55_or_older"),
                                               ("pace", "aged_55_or_older")])
@pytest.mark.parametrize(("care_age", "expected"), [(54, F), (55, P), (84, P), ("dont_know", U)])
def test_5_care_receiver_programs_use_the_care_receivers_age(program, rule, care_age, expected):
    person = profile(**CAREGIVER, care_recipient_age=care_age)
    result = {r.program.key: r for r in screen(person, on=date(2026, 5, 1))}[program]
    outcome = next(o for o in result.outcomes if o.rule == rule)
    assert result.for_care_receiver and outcome.status is expected


def test_5_screening_someone_i_care_for_uses_their_age_and_the_caregivers():
    person = profile(screening_for="someone_i_care_for", age=80, caregiver_age=16, has_unpaid_caregiver=None)
    results = {r.program.key: r for r in screen(person, on=date(2026, 5, 1))}
    assert not results["mac"].for_care_receiver
    assert next(o for o in results["mac"].outcomes if o.rule == "care_receiver_55_or_older").status is P
    assert next(o for o in results["mac"].outcomes if o.rule == "has_unpaid_caregiver").status is F


# 6. Extra Help: a 2026 resource limit is on file, and income gets the $20 general income exclusion.
@pytest.mark.parametrize(("assets", "on", "expected"), [
    (dollars(0, 18_090), date(2026, 6, 1), P), (dollars(18_091, 30_000), date(2026, 6, 1), F),
    (dollars(0, 17_600), date(2025, 6, 1), P), (dollars(17_601, 17_990), date(2025, 6, 1), F),
])
def test_6_extra_help_resources_in_2025_and_2026(assets, on, expected):
    # income above QI-1: no Medicare Savings Program confers Extra Help, so its own asset limit decides
    person = with_fields(profile(apple_health="none", monthly_income="1883-1956"), assets=assets)
    assert run_rule("extra_help", "resources_within_lis_limit", person, on).status is expected


@pytest.mark.parametrize(("income", "expected"), [
    (dollars(1996, 2015, "USD/month"), P), (dollars(2015, 2016, "USD/month"), U), (dollars(2016, 2199, "USD/month"), F)])
def test_6_extra_help_income_adds_the_general_exclusion(income, expected):
    # not assessed at nursing-facility level of care: no long-term care Medicaid ahead to confer Extra Help
    person = with_fields(profile(apple_health="none", nursing_facility_level_of_care="assessed_no"),
                         monthly_income=income)
    assert run_rule("extra_help", "income_below_150_percent_fpl", person, date(2026, 1, 13)).status is expected


def test_6_extra_help_can_be_likely_in_2026():
    person = profile(apple_health="none", monthly_income="0-999", assets="0-2000", medicare_parts=["A", "B"])
    result = {r.program.key: r for r in screen(person, on=date(2026, 6, 1))}["extra_help"]
    assert result.classification is Classification.LIKELY
