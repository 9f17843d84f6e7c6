"""Wrong screening results a second reader found with 66 new intake cases (session 10), each checked against
programs.md (the program's own rule) through the real rules and dated figures."""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.screener.engine import Classification, screen
from tests.screener.conftest import profile

L, P, X = Classification.LIKELY, Classification.POSSIBLY, Classification.EXCLUDED
ON = date(2026, 5, 1)


def result(program: str, on: date = ON, **answers) -> Classification:
    return {r.program.key: r for r in screen(profile(**answers), on=on)}[program].classification


WORKING_AGE = {"age": 50, "medicare_parts": "none", "household_size": 1, "marital_status": "single",
               "apple_health": "none"}


@pytest.mark.parametrize("answers, expected", [
    # MAGI adult coverage (19-64, no Medicare) has no asset test, whether or not the person is disabled
    ({**WORKING_AGE, "disability": "yes", "monthly_income": "1000-1299", "assets": "4501-10000"}, L),
    ({**WORKING_AGE, "disability": "yes", "monthly_income": "1500-1732", "assets": "0-2000"}, L),
    ({**WORKING_AGE, "age": 64, "disability": "dont_know", "monthly_income": "1000-1299", "assets": "dont_know"}, L),
    # over the MAGI limit a disabled adult may still qualify SSI-related with a spend-down; a non-disabled one not
    ({**WORKING_AGE, "disability": "yes", "monthly_income": "3977-4499", "assets": "0-2000"}, P),
    ({**WORKING_AGE, "disability": "no", "monthly_income": "3977-4499", "assets": "0-2000"}, X),
])
def test_apple_health_magi_route_for_a_working_age_adult_without_medicare(answers, expected):
    assert result("apple_health", **answers) is expected


@pytest.mark.parametrize("answers, expected", [
    # a 55-year-old caring for a spouse of 70: spouses are one household, so the household has a member 60+
    ({"age": 55, "marital_status": "married", "household_size": 2, "monthly_income": "3608-3868",
      "caring_for_someone": "yes", "care_recipient_age": 70, "care_relationship": "spouse"}, P),
    # other household members' ages are not asked: over the gross limit, a household of two is not settled
    ({"age": 50, "marital_status": "married", "household_size": 2, "monthly_income": "3608-3868"}, P),
    # a household of one under 60, not disabled, over the gross limit: excluded
    ({"age": 50, "household_size": 1, "monthly_income": "3977-4499", "medicare_parts": "none"}, X),
])
def test_basic_food_counts_an_older_household_member(answers, expected):
    assert result("basic_food", **{"disability": "no", **answers}) is expected


VETERAN = {"veteran_status": "veteran", "wartime_service": "yes", "age": 70, "living_situation": "own_home",
           "disability": "no", "assets": "0-2000"}


@pytest.mark.parametrize("answers, expected", [
    # income far above the Aid & Attendance MAPR: only unreimbursed care costs could bring it under
    ({**VETERAN, "adl_help": ["bathing"], "monthly_income": "7000-7999"}, P),
    ({**VETERAN, "adl_help": ["bathing"], "monthly_income": "1000-1299"}, L),
    # no help with daily activities: no A&A, and $12,000-$15,588 a year is under the basic MAPR $17,441 (session 15b)
    ({**VETERAN, "adl_help": "none", "monthly_income": "1000-1299"}, L),
    # a surviving spouse above the survivors' A&A MAPR
    ({**VETERAN, "veteran_status": "surviving_spouse", "age": 58, "adl_help": ["bathing"],
      "monthly_income": "2200-2351"}, P),
])
def test_va_pension_income_against_the_mapr_and_the_rates_without_aid_and_attendance(answers, expected):
    assert result("va_pension", **answers) is expected


def test_property_tax_a_veteran_under_61_and_an_owner_living_with_family_are_open():
    # no Medicare at 55 (Medicare at 55 with "no disability" is a contradiction that leaves the disability open)
    assert result("property_tax", age=55, disability="no", veteran_status="veteran", monthly_income="2016-2199",
                  medicare_parts="none") is P
    assert result("property_tax", age=55, disability="no", veteran_status="no", monthly_income="2016-2199",
                  medicare_parts="none") is X
    assert result("property_tax", age=75, living_situation="with_family", monthly_income="1500-1732") is P


def test_extra_help_already_enrolled_is_likely_whatever_the_assets():
    assert result("extra_help", extra_help="yes", monthly_income="0-999", assets="dont_know") is L
    assert result("extra_help", extra_help="yes", monthly_income="0-999", assets="169593-249999") is L


def test_basic_food_resource_limit_ends_with_the_fiscal_year_it_was_seen_for():
    over = {"age": 70, "household_size": 1, "monthly_income": "2661-2664", "assets": "4501-10000"}
    assert result("basic_food", on=date(2026, 9, 30), **over) is X
    assert result("basic_food", on=date(2026, 12, 2), **over) is P        # FY2027 figure not seen: not decided


def test_a_decision_a_floor_cannot_settle_is_noticed_as_a_figure_not_on_file():
    person = profile(veteran_status="veteran", adl_help=["dressing"], assets="169593-249999")
    va = {r.program.key: r for r in screen(person, on=date(2026, 12, 2))}["va_pension"]
    assert va.classification is P
    assert any("not on file" in m and "at least $163,699" in m for m in va.figures_missing)


def test_apple_health_a_disabled_adult_over_the_magi_limit_meets_the_ssi_related_asset_test():
    rich = {**WORKING_AGE, "age": 40, "disability": "yes", "monthly_income": "8000+", "assets": "250000+"}
    assert result("apple_health", **rich) is X
    assert result("apple_health", **{**rich, "assets": "0-2000"}) is P          # spend-down possible


def test_property_tax_under_61_with_veteran_status_unanswered_is_open():
    assert result("property_tax", age=55, disability="no", veteran_status="dont_know",
                  monthly_income="2016-2199") is P


# Session 11: a prober's 63 intakes (612 verdicts) found these wrong; each follows programs.md.
BASE = {"age": 70, "household_size": 1, "marital_status": "single", "monthly_income": "1000-1299",
        "assets": "0-2000", "medicare_parts": ["A", "B"], "apple_health": "none", "extra_help": "no",
        "disability": "no", "nursing_facility_level_of_care": "assessed_no"}


@pytest.mark.parametrize("program, on, answers, expected", [
    # a figure past its scheduled change is a floor: above it is undecided, under it still passes
    ("extra_help", date(2027, 3, 1), {"monthly_income": "2016-2199"}, P),
    ("extra_help", date(2026, 12, 2), {"monthly_income": "2016-2199"}, X),
    # under the income floor it passes, and under the 2027 resource floor too (session 12: the 2026 limit carried)
    ("extra_help", date(2027, 3, 1), {"monthly_income": "1000-1299"}, L),
    ("msp", date(2027, 6, 1), {"monthly_income": "1000-1299"}, L),
    ("apple_health", date(2027, 6, 1), {"age": 64, "medicare_parts": "none", "monthly_income": "1837-1856"}, P),
    ("apple_health", date(2026, 6, 1), {"age": 64, "medicare_parts": "none", "monthly_income": "1837-1856"}, X),
    ("msp", date(2027, 6, 1), {"monthly_income": "1857-1882"}, P),
    # already on a Medicare Savings Program: MSP is theirs whatever the income
    ("msp", date(2026, 12, 2), {"apple_health": "msp_only", "monthly_income": "1857-1882"}, L),
    # medically needy resources: +$50 per family member beyond the couple ($3,050 for three)
    ("apple_health", date(2026, 12, 2), {"marital_status": "married", "household_size": 3,
                                         "monthly_income": "1500-1732", "assets": "3001-4500"}, P),
    ("apple_health", date(2026, 12, 2), {"marital_status": "married", "household_size": 2,
                                         "monthly_income": "1500-1732", "assets": "3001-4500"}, X),
    # an empty list is no answer, not 'none'
    ("msp", date(2026, 12, 2), {"medicare_parts": []}, P),
    ("msp", date(2026, 12, 2), {"medicare_parts": "none", "age": 60}, X),
    # at 65 or older, no Medicare yet: premium Part A can be taken up conditionally on QMB (session 13)
    ("msp", date(2026, 12, 2), {"medicare_parts": "none"}, P),
])
def test_session_11_cases(program, on, answers, expected):
    assert result(program, on, **{**BASE, **answers}) is expected
