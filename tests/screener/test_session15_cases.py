"""Classes a seventh probing round found (session 15), each a class of intakes: spousal impoverishment has a ceiling
(the federal maximum CSRA plus the institutionalized spouse's standard), TSOA's married standard is the whole standard,
an assessment not yet made keeps the long-term-care route open, a married person whose household size is not known is
not read as living with the spouse, indexed figures are floors beyond their first year, VA income is judged against
the rate that applies, a married person judged alone is asked their own share of the couple's assets, and three small
asks (LIHEAP in a nursing facility, FCSP respite in a care home, a number where a bracket is expected)."""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.errors import ConfigError
from carenav_core.screener.engine import Classification, screen
from carenav_core.screener.intake import parse_answers
from tests.screener.conftest import profile

L, P, X = Classification.LIKELY, Classification.POSSIBLY, Classification.EXCLUDED
ON = date(2026, 12, 3)
COUPLE_AT_HOME = {"age": 78, "county": "Benton", "household_size": 2, "marital_status": "married",
                  "monthly_income": "2200-2351", "medicare_parts": ["A", "B", "D"], "apple_health": "none",
                  "extra_help": "no", "disability": "no", "veteran_status": "no", "living_situation": "own_home",
                  "adl_help": ["bathing", "dressing", "toileting"], "nursing_facility_level_of_care": "assessed_yes",
                  "has_unpaid_caregiver": "yes", "caring_for_someone": "no", "screening_for": "myself"}
OLDER = {"age": 72, "county": "Kitsap", "household_size": 1, "marital_status": "single", "monthly_income": "1300-1499",
         "assets": "0-2000", "medicare_parts": ["A", "B", "D"], "apple_health": "none", "extra_help": "no",
         "disability": "no", "veteran_status": "no", "living_situation": "rented_home", "adl_help": "none",
         "nursing_facility_level_of_care": "not_assessed", "has_unpaid_caregiver": "no", "caring_for_someone": "no"}


def results(on: date = ON, **answers) -> dict:
    return {r.program.key: r for r in screen(profile(**answers), on=on)}


def reasons(result) -> str:
    return " ".join(o.verdict.reason for o in result.outcomes)


# ---- 1. Spousal impoverishment has a ceiling: $162,660 (federal maximum CSRA, 2026) + $2,000 = $164,660

@pytest.mark.parametrize("setting", [
    {"living_situation": "own_home"},
    {"living_situation": "adult_family_home"},
    {"living_situation": "nursing_facility"},
    {"living_situation": "own_home", "monthly_income": "1000-1299", "county": "Adams"},
])
@pytest.mark.parametrize("assets", ["169593-249999", "250000+"])
def test_long_term_care_closes_above_the_federal_maximum_csra_plus_the_applicants_standard(setting, assets):
    found = results(**{**COUPLE_AT_HOME, **setting, "assets": assets})
    for key in ("apple_health", "copes"):
        assert found[key].classification is X, reasons(found[key])
        assert "$164,660" in reasons(found[key]) and "federal maximum community spouse resource allowance" in \
            reasons(found[key])
    if setting["living_situation"] == "own_home":
        assert found["mac"].classification is X


@pytest.mark.parametrize(("assets", "on", "expected"), [
    ("159241-163699", ON, P),              # under $164,660: the community spouse's amount decides
    ("163700-169592", ON, P),              # across the ceiling
    ("169593-249999", ON, X),
    ("169593-249999", date(2027, 6, 1), P),    # 2027: a floor; within a year's rise of it
    ("250000+", date(2027, 6, 1), X),          # far above even a year's rise
    ("250000+", date(2028, 2, 1), X),          # two yearly rises (32%) still below $250,000
])
def test_the_spousal_ceiling_across_its_floors(assets, on, expected):
    assert results(on=on, **{**COUPLE_AT_HOME, "assets": assets})["copes"].classification is expected


def test_no_medicaid_route_keeps_extra_help_open_above_the_spousal_ceiling():
    home = {**COUPLE_AT_HOME, "living_situation": "adult_family_home", "monthly_income": "2983-3407"}
    assert results(**{**home, "assets": "250000+"})["extra_help"].classification is X
    # above the couple's QI-1 ($2,509 gross), so no MSP confers it (session 15b): the long-term-care route keeps it open
    assert results(**{**home, "monthly_income": "2510-2555", "assets": "84355-156883"})["extra_help"].classification is P


# ---- 2. TSOA's married standard ($156,883) is the whole standard

@pytest.mark.parametrize(("assets", "expected"), [("84355-156883", L), ("156884-159240", X), ("250000+", X)])
def test_tsoa_married_resource_standard_decides_both_ways(assets, expected):
    found = results(**{**COUPLE_AT_HOME, "assets": assets})["tsoa"]
    assert found.classification is expected, reasons(found)


def test_tsoa_married_standard_before_2023_was_the_applicants_only_and_cannot_exclude():
    found = results(on=date(2018, 6, 1), **{**COUPLE_AT_HOME, "assets": "84355-156883"})["tsoa"]
    assert found.classification is P


# ---- 3. Not yet assessed with help needed: the long-term-care route stays open, asking for the assessment

@pytest.mark.parametrize("level", ["not_assessed", "dont_know"])
# incomes above the couple's QI-1 ($2,509 gross): no MSP confers Extra Help, the long-term-care route is what is open
@pytest.mark.parametrize(("income", "assets"), [("2510-2555", "36101-53100"), ("2706-2725", "53101-84354")])
def test_an_assessment_not_made_keeps_apple_health_and_extra_help_open_like_copes(level, income, assets):
    found = results(**{**COUPLE_AT_HOME, "nursing_facility_level_of_care": level, "monthly_income": income,
                       "assets": assets})
    for key in ("apple_health", "extra_help", "copes"):
        assert found[key].classification is P, (key, reasons(found[key]))
    for key in ("apple_health", "extra_help"):
        assert "nursing_facility_level_of_care" in found[key].unknown_fields
        assert any("CARE assessment" in n for n in found[key].needs)


def test_no_help_needed_and_not_assessed_still_closes_on_the_couple_limit():
    found = results(**{**COUPLE_AT_HOME, "adl_help": "none", "nursing_facility_level_of_care": "not_assessed",
                       "assets": "3001-4500", "has_unpaid_caregiver": "no"})
    assert found["apple_health"].classification is X


# ---- 4. Married, household size not known: not read as living together

@pytest.mark.parametrize("size", ["dont_know", "prefer_not_to_say", None])
@pytest.mark.parametrize(("income", "assets", "program"), [
    ("2200-2351", "0-2000", "msp"), ("2200-2351", "0-2000", "extra_help"),
    ("1857-1882", "18091-35130", "extra_help"), ("1000-1299", "2001-3000", "apple_health"),
])
def test_married_with_an_unknown_household_asks_the_household_size(size, income, assets, program):
    found = results(**{**OLDER, "marital_status": "married", "household_size": size, "monthly_income": income,
                       "assets": assets})[program]
    assert found.classification is P, reasons(found)
    assert "household_size" in found.unknown_fields and "married" not in found.unknown_fields


def test_married_with_an_unknown_household_still_passes_under_the_single_limits():
    found = results(**{**OLDER, "marital_status": "married", "household_size": "dont_know", "monthly_income": "0-999"})
    assert found["msp"].classification is L and found["extra_help"].classification is L


# ---- 5. Indexed figures are floors beyond their first year

@pytest.mark.parametrize("on", [date(2027, 10, 1), date(2028, 2, 1)])
@pytest.mark.parametrize(("answers", "program"), [
    ({"age": 66, "monthly_income": "5500-6999", "adl_help": ["bathing"], "nursing_facility_level_of_care": "assessed_yes",
      "has_unpaid_caregiver": "yes", "living_situation": "own_home"}, "copes"),
    ({"age": 66, "monthly_income": "5500-6999", "adl_help": ["bathing"], "nursing_facility_level_of_care": "assessed_yes",
      "has_unpaid_caregiver": "yes", "living_situation": "own_home"}, "tsoa"),
    ({"age": 70, "monthly_income": "2902-2982", "adl_help": ["bathing"], "nursing_facility_level_of_care": "assessed_yes",
      "has_unpaid_caregiver": "yes", "living_situation": "own_home"}, "mac"),
    ({"age": 75, "monthly_income": "2706-2725", "assets": "3001-4500"}, "extra_help"),
    ({"age": 75, "monthly_income": "3408-3525", "assets": "10001-17600"}, "basic_food"),
])
def test_far_above_a_floor_still_excludes_in_later_years(on, answers, program):
    found = results(on=on, **{**OLDER, **answers})[program]
    assert found.classification is X, reasons(found)


@pytest.mark.parametrize(("answers", "program"), [
    ({"monthly_income": "2902-2982", "adl_help": ["bathing"], "nursing_facility_level_of_care": "assessed_yes",
      "living_situation": "own_home"}, "copes"),
    ({"monthly_income": "0-999", "assets": "0-2000"}, "extra_help"),
])
def test_under_a_floor_passes_in_2028(answers, program):
    assert results(on=date(2028, 2, 1), **{**OLDER, **answers})[program].classification is L


def test_near_a_floor_in_2028_is_not_decided_and_says_the_figure_is_not_on_file():
    found = results(on=date(2028, 2, 1), **{**OLDER, "monthly_income": "2983-3407", "adl_help": ["bathing"],
                                            "nursing_facility_level_of_care": "assessed_yes"})["copes"]
    assert found.classification is P and any("not on file" in f for f in found.figures_missing)


def test_nothing_is_carried_past_the_second_year():
    # Extra Help's own figure is not on file in 2029; a likely Medicare Savings Program still confers it (session 17),
    # so the carried figure is checked where nothing else decides: Part B only, under 65
    found = results(on=date(2029, 2, 1), **{**OLDER, "age": 60, "disability": "yes", "medicare_parts": ["B"]})
    assert found["extra_help"].classification is P and found["extra_help"].figures_missing
    assert results(on=date(2029, 2, 1), **OLDER)["extra_help"].figures_missing


# ---- 6. VA income against the rate that applies

VETERAN = {**OLDER, "age": 66, "veteran_status": "veteran", "wartime_service": "yes", "assets": "0-2000"}


def test_va_income_without_an_aid_and_attendance_need_is_judged_against_the_basic_rate():
    found = results(**{**VETERAN, "monthly_income": "2454-2489"})["va_pension"]
    text = reasons(found)
    assert found.classification is P and "$17,441" in text and "basic" in text and "$29,093" not in text
    under = results(**{**VETERAN, "monthly_income": "1000-1299"})["va_pension"]
    assert "$17,441" in reasons(under)


def test_va_income_with_an_aid_and_attendance_need_is_judged_against_that_rate():
    found = results(**{**VETERAN, "adl_help": ["bathing"], "monthly_income": "2200-2351"})["va_pension"]
    assert found.classification is L and "$29,093" in reasons(found)


def test_a_surviving_spouse_without_an_aid_and_attendance_need_is_not_passed_on_the_aid_and_attendance_rate():
    found = results(**{**VETERAN, "age": 80, "veteran_status": "surviving_spouse", "monthly_income": "1000-1299"})
    va = found["va_pension"]
    income = next(o for o in va.outcomes if o.rule == "income_below_mapr")
    assert income.status.value == "unknown" and "does not apply" in income.verdict.reason
    assert any("survivors pension basic rate" in f for f in va.figures_missing)


# ---- 7. A married person judged alone: the assets answer covers the couple

@pytest.mark.parametrize(("answers", "program"), [
    # incomes above the single QI-1 ($1,856 gross): no MSP confers Extra Help (session 15b), so the assets decide
    ({"monthly_income": "1883-1956", "assets": "18091-35130"}, "extra_help"),
    ({"age": 80, "monthly_income": "1957-1976", "assets": "36101-53100"}, "extra_help"),
    ({"age": 80, "monthly_income": "0-999", "assets": "2001-3000"}, "apple_health"),
])
def test_a_married_person_living_apart_is_asked_their_own_share_of_the_assets(answers, program):
    found = results(**{**OLDER, "marital_status": "married", "household_size": 1, **answers})[program]
    assert found.classification is P, reasons(found)
    assert any("own share of the assets" in n for n in found.needs)


def test_a_married_person_living_apart_still_passes_under_the_single_limit():
    found = results(**{**OLDER, "marital_status": "married", "household_size": 1, "monthly_income": "0-999",
                       "assets": "10001-17600"})
    assert found["extra_help"].classification is L


# ---- 8. Small asks

def test_liheap_for_a_nursing_facility_resident_asks_who_pays_for_heat():
    found = results(**{**OLDER, "living_situation": "nursing_facility", "pays_for_heating": "yes"})["liheap"]
    assert found.classification is P and any("who pays for heat" in n for n in found.needs)
    assert results(**{**OLDER, "pays_for_heating": "yes"})["liheap"].classification is L


@pytest.mark.parametrize(("coverage", "words"), [("none", "depends on who pays"), ("medically_needy", "not for a person")])
def test_fcsp_for_a_care_home_resident_notes_the_respite_condition(coverage, words):
    found = results(**{**OLDER, "screening_for": "someone_i_care_for", "living_situation": "nursing_facility",
                       "has_unpaid_caregiver": "yes", "apple_health": coverage})["fcsp"]
    assert found.classification is L and words in reasons(found) and "WAC 388-106-1210" in reasons(found)


@pytest.mark.parametrize(("field", "value", "listed"), [("monthly_income", 1500, "'1500-1732'"),
                                                       ("assets", 5000, "'4501-10000'"), ("county", 7, "'King'")])
def test_a_number_where_a_listed_answer_is_expected_lists_the_answers(field, value, listed):
    with pytest.raises(ConfigError) as caught:
        parse_answers({field: value})
    assert listed in str(caught.value) and "dont_know" in str(caught.value)
