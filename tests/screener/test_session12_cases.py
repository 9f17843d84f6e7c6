"""Wrong or unsettled screening results a second prober found with 42 new intakes (session 12), each checked against
the program's own rule (programs.md or the cited rule) through the real rules and dated figures."""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.screener.assemble import run_screen
from carenav_core.screener.engine import Classification, screen
from carenav_core.screener.profile import answer_warnings, normalize
from carenav_core.screener.thresholds import load_thresholds
from tests.screener.conftest import profile

L, P, X = Classification.LIKELY, Classification.POSSIBLY, Classification.EXCLUDED
ON = date(2026, 12, 2)
OLDER = {"age": 80, "county": "Pierce", "medicare_parts": ["A", "B"], "apple_health": "none", "extra_help": "no",
         "disability": "no", "assets": "0-2000"}


def result(program: str, on: date = ON, **answers) -> Classification:
    return {r.program.key: r for r in screen(profile(**answers), on=on)}[program].classification


def test_married_in_a_household_of_one_is_judged_on_single_limits_and_asked_to_check():
    apart = {**OLDER, "household_size": 1, "marital_status": "married", "monthly_income": "1883-1956"}
    assert result("msp", **apart) is X                    # single QI-1 ($1,856 gross) is below the whole range
    assert result("msp", **{**apart, "household_size": 2}) is L      # living together: the couple limit
    assert any("living apart" in w for w in answer_warnings(profile(**apart)))


@pytest.mark.parametrize("living, expected", [("nursing_facility", X), ("adult_family_home", P),
                                              ("assisted_living", P), ("own_home", L)])
def test_basic_food_residents_of_a_place_that_provides_their_meals_are_not_eligible(living, expected):
    answers = {**OLDER, "household_size": 1, "marital_status": "single", "monthly_income": "1300-1499",
               "living_situation": living}
    assert result("basic_food", **answers) is expected
    assert result("basic_food", **{**answers, "living_situation": None}) is L     # an exclusion needs its fact


@pytest.mark.parametrize("living", ["nursing_facility", "adult_family_home", "assisted_living"])
def test_property_tax_stays_open_for_a_resident_of_a_care_setting(living):
    answers = {**OLDER, "county": "King", "household_size": 1, "marital_status": "single",
               "monthly_income": "1300-1499", "living_situation": living}
    assert result("property_tax", **answers) is P
    assert result("property_tax", **{**answers, "living_situation": "rented_home"}) is X


def test_extra_help_without_medicare_is_flagged_and_decides_nothing():
    answers = {**OLDER, "age": 70, "household_size": 1, "marital_status": "single", "monthly_income": "1300-1499",
               "medicare_parts": "none", "extra_help": "yes"}
    assert result("msp", **answers) is P
    assert any("Extra Help but no Medicare" in w for w in answer_warnings(profile(**answers)))


def test_an_answer_far_above_a_floor_is_a_no_and_one_within_a_yearly_rise_stays_open():
    veteran = {**OLDER, "veteran_status": "veteran", "wartime_service": "yes", "adl_help": ["bathing"],
               "monthly_income": "1000-1299", "household_size": 1, "marital_status": "single"}
    assert result("va_pension", **{**veteran, "assets": "250000+"}) is X
    assert result("va_pension", **{**veteran, "assets": "163700-169592"}) is P


@pytest.mark.parametrize("help_with, expected", [(["medication"], P), (["walking"], P), (["bathing"], L),
                                                 (["medication", "dressing"], L)])
def test_aid_and_attendance_needs_help_with_the_activities_the_rule_names(help_with, expected):
    # $18,000-$20,784 a year: above the basic MAPR ($17,441), under the one with Aid & Attendance ($29,093), so the
    # activities decide (under the basic rate the pension is likely whatever they are: session 15b)
    answers = {**OLDER, "county": "Okanogan", "household_size": 1, "marital_status": "single",
               "monthly_income": "1500-1732", "veteran_status": "veteran", "wartime_service": "yes",
               "adl_help": help_with, "living_situation": "rented_home"}
    assert result("va_pension", **answers) is expected


def test_mac_is_excluded_when_the_answers_rule_out_categorically_needy_apple_health_for_a_single_person():
    single = {**OLDER, "age": 76, "household_size": 1, "marital_status": "single", "monthly_income": "1300-1499",
              "assets": "4501-10000", "living_situation": "own_home", "nursing_facility_level_of_care": "assessed_yes",
              "has_unpaid_caregiver": "yes"}
    assert result("mac", **single) is X
    # married: spousal-impoverishment rules may still make them CN; low income and assets: CN is possible
    # (session 16: within the state spousal standard plus $2,000 they do; above it the protected amount decides)
    assert result("mac", **{**single, "marital_status": "married", "household_size": 2}) is L
    assert result("mac", **{**single, "marital_status": "married", "household_size": 2, "assets": "84355-156883"}) is P
    # low income and assets: categorically needy Apple Health is likely on the same report, so MAC is (session 15b)
    assert result("mac", **{**single, "monthly_income": "0-999", "assets": "0-2000"}) is L


def test_magi_limits_for_three_and_four_people_are_138_percent_of_the_guidelines_rounded():
    limits = load_thresholds()
    assert [limits.for_size("apple_health_magi_income", date(2026, 6, 1), n).amount for n in (3, 4)] == [3142, 3795]


def test_the_caregiver_program_step_names_the_door_not_the_statute():
    answers = {"screening_for": "myself", "age": 66, "county": "Franklin", "household_size": 2,
               "marital_status": "married", "monthly_income": "2454-2489", "caring_for_someone": "yes",
               "care_recipient_age": 70, "care_relationship": "spouse", "has_unpaid_caregiver": "no"}
    report = run_screen(normalize(answers), on=ON, search=None)
    row = next(r for r in report.summary if r.program.startswith("Family Caregiver"))
    assert "1-855-567-0252" in row.next_step


def test_a_caregiver_of_a_spouse_shares_the_home_and_copes_is_judged_for_the_person_cared_for():
    caregiver = {"screening_for": "myself", "age": 66, "county": "Franklin", "household_size": 2,
                 "marital_status": "married", "monthly_income": "2454-2489", "assets": "10001-17600",
                 "medicare_parts": ["A", "B"], "disability": "no", "caring_for_someone": "yes",
                 "care_recipient_age": 70, "care_relationship": "spouse", "has_unpaid_caregiver": "no",
                 "living_situation": "own_home"}
    results = {r.program.key: r for r in screen(profile(**caregiver), on=ON)}
    assert results["pace"].classification is X                # Franklin: no PACE service area, the home is shared
    assert results["copes"].for_care_receiver and results["copes"].classification is P
    parent = {**caregiver, "care_relationship": "parent", "care_recipient_age": 90}
    pace = {r.program.key: r for r in screen(profile(**parent), on=ON)}["pace"]
    assert pace.classification is P                            # a parent may live elsewhere: the county is theirs


def test_a_married_resident_of_a_care_facility_is_judged_with_the_spouses_protected_resources():
    resident = {**OLDER, "age": 82, "household_size": 2, "marital_status": "married", "monthly_income": "1300-1499",
                "assets": "53101-84354", "living_situation": "nursing_facility",
                "nursing_facility_level_of_care": "assessed_yes"}
    assert result("apple_health", **resident) is P
    # at home, assessed at nursing-facility level of care (a waiver client): spousal protections too (session 13)
    assert result("apple_health", **{**resident, "living_situation": "own_home"}) is P
    assert result("apple_health", **{**resident, "living_situation": "own_home",
                                     "nursing_facility_level_of_care": "assessed_no"}) is X   # the couple limit
    assert result("apple_health", **{**resident, "marital_status": "single", "household_size": 1}) is X


def test_a_spouse_cared_for_who_lives_apart_shares_none_of_the_caregivers_facts():
    apart = {"screening_for": "myself", "age": 72, "county": "King", "household_size": 1, "marital_status": "married",
             "monthly_income": "4500-5499", "assets": "10001-17600", "medicare_parts": ["A", "B"], "disability": "no",
             "living_situation": "own_home", "caring_for_someone": "yes", "care_recipient_age": 80,
             "care_relationship": "spouse", "has_unpaid_caregiver": "no"}
    results = {r.program.key: r for r in screen(profile(**apart), on=ON)}
    for key in ("copes", "tsoa", "pace"):         # the spouse's own income, home and county are not known
        assert results[key].classification is P, key
    assert results["property_tax"].classification is P        # combined disposable income counts the spouse too


@pytest.mark.parametrize("answers", [
    {"medicare_parts": "none", "extra_help": "yes"},
    {"medicare_parts": "none", "apple_health": "msp_only"},
    {"medicare_parts": ["D"]},
])
def test_medicare_answers_that_contradict_the_others_decide_nothing_and_are_flagged(answers):
    person = {**OLDER, "age": 70, "household_size": 1, "marital_status": "single", "monthly_income": "1000-1299",
              **answers}
    assert result("msp", **person) is P and result("extra_help", **person) is P
    assert any("Please check the Medicare answer" in w for w in answer_warnings(profile(**person)))


def test_mac_under_65_with_medicare_is_excluded_when_categorically_needy_is_ruled_out():
    disabled = {**OLDER, "age": 60, "disability": "yes", "household_size": 1, "marital_status": "single",
                "monthly_income": "2016-2199", "living_situation": "own_home",
                "nursing_facility_level_of_care": "assessed_yes", "has_unpaid_caregiver": "yes"}
    assert result("mac", **disabled) is X
    assert result("mac", **{**disabled, "medicare_parts": "none"}) is P      # 19-64 without Medicare: MAGI is open


def test_property_tax_one_year_short_and_single_asks_both_the_birthday_and_the_late_spouse():
    person = {**OLDER, "age": 60, "county": "Whatcom", "household_size": 1, "marital_status": "single", "veteran_status": "no",
              "monthly_income": "2200-2351", "living_situation": "own_home", "medicare_parts": "none"}   # none at 60
    card = {r.program.key: r for r in screen(profile(**person), on=ON)}["property_tax"]
    needs = [n for o in card.unknown_rules for n in o.verdict.needs]
    assert any("turn 61" in n and "December 31" in n for n in needs) and any("late spouse" in n for n in needs)


def test_a_single_person_in_a_larger_household_is_asked_their_own_income_and_gets_no_tier_guess():
    from carenav_core.screener.rules import msp
    from carenav_core.screener.rules.base import Context
    from carenav_core.screener.intake import load_intake_options
    person = {**OLDER, "age": 70, "household_size": 3, "marital_status": "single", "monthly_income": "3526-3607",
              "living_situation": "with_family"}
    card = {r.program.key: r for r in screen(profile(**person), on=ON)}["msp"]
    needs = [n for o in card.unknown_rules for n in o.verdict.needs]
    assert any("the person's own income" in n for n in needs) and not any("spouse" in n for n in needs)
    context = Context(thresholds=load_thresholds(), on=ON, options=load_intake_options())
    assert msp.tier(profile(**person), context) == ""


def test_medicaid_without_medicare_is_no_contradiction_and_extra_help_still_needs_medicare():
    person = {**OLDER, "age": 40, "medicare_parts": "none", "apple_health": "categorically_needy",
              "household_size": 1, "marital_status": "single", "monthly_income": "0-999"}
    assert profile(**person).medicare_contradictions() == ()
    assert result("extra_help", **person) is X
    assert not any("Please check the Medicare answer" in w for w in answer_warnings(profile(**person)))
