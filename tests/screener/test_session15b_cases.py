"""Classes an eighth probing round found (session 15b), each a class of intakes judged by the real engine: a Medicare
Savings Program the report rates likely confers Extra Help (WA's MSP has no resource test); Apple Health's
long-term-care route, COPES and MAC agree when the care assessment is not done (help with daily activities not known
keeps it open, none listed closes all three); the VA basic pension reaches "likely" without an Aid & Attendance need;
poverty-guideline limits are carried as floors through their second change, as the SSI-rate ones are; MAC follows the
Apple Health result of the same report; and the MSP card does not offer conditional Part A through QMB above QMB."""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.screener.engine import Classification, screen
from carenav_core.screener.thresholds import load_thresholds
from tests.screener.conftest import profile
from tests.screener.test_session15_cases import reasons, results      # the same screening helpers

L, P, X = Classification.LIKELY, Classification.POSSIBLY, Classification.EXCLUDED
ON = date(2026, 12, 3)
SINGLE = {"age": 70, "county": "Franklin", "household_size": 1, "marital_status": "single",
          "monthly_income": "1300-1499", "assets": "36101-53100", "medicare_parts": ["A", "B", "D"],
          "apple_health": "none", "extra_help": "no", "disability": "no", "veteran_status": "no",
          "living_situation": "rented_home", "adl_help": "none", "nursing_facility_level_of_care": "not_assessed",
          "has_unpaid_caregiver": "no", "caring_for_someone": "no", "screening_for": "myself", "pays_for_heating": "yes"}
COUPLE = {**SINGLE, "age": 80, "county": "Mason", "household_size": 2, "marital_status": "married",
          "living_situation": "own_home", "monthly_income": "2200-2351", "has_unpaid_caregiver": "yes"}



# ---- 1. An MSP the report rates likely (or possibly) confers Extra Help (programs.md section 6 row 8, section 7 row 2)

@pytest.mark.parametrize("answers", [
    SINGLE,                                                                      # c01: QMB/SLMB, $35,901+ saved
    {**SINGLE, "monthly_income": "1000-1299", "assets": "250000+"},              # c02: QMB, $250k+
    {**SINGLE, "screening_for": "someone_i_care_for", "age": 80},                # h04-like
    {**COUPLE, "nursing_facility_level_of_care": "assessed_no"},                 # a11: couple, QI-1
    {**COUPLE, "adl_help": ["bathing"], "nursing_facility_level_of_care": "assessed_yes",
     "assets": "84355-156883", "monthly_income": "1753-1800"},                   # a03/a05: was possibly via LTC only
    {**COUPLE, "assets": "169593-249999"},                                       # a01: above the spousal ceiling
])
def test_extra_help_is_likely_through_a_likely_msp_whatever_the_savings(answers):
    found = results(**answers)
    assert found["msp"].classification is L
    assert found["extra_help"].classification is L, reasons(found["extra_help"])
    assert "Medicare Savings Program" in reasons(found["extra_help"]) and "confers Extra Help" in \
        reasons(found["extra_help"])


def test_extra_help_is_possibly_through_a_possibly_msp():
    found = results(**{**COUPLE, "household_size": 3, "monthly_income": "3408-3525", "assets": "250000+",
                       "county": "King"})                                        # a04: the couple's share asked
    assert found["msp"].classification is P
    assert found["extra_help"].classification is P, reasons(found["extra_help"])
    assert "Medicare Savings Program" in reasons(found["extra_help"])


@pytest.mark.parametrize("answers", [
    {**SINGLE, "monthly_income": "1883-1956"},          # above QI-1 ($1,856 gross): the MSP is excluded
    {**SINGLE, "age": 60, "disability": "yes", "medicare_parts": ["B"]},   # MSP only through Extra Help: circular
])
def test_no_msp_route_leaves_extra_help_excluded_on_assets(answers):
    found = results(**answers)
    assert found["extra_help"].classification is X, reasons(found["extra_help"])


# ---- 2. Long-term-care route, COPES and MAC agree for a couple with the care assessment not done

@pytest.mark.parametrize("assessment", ["not_assessed", "dont_know"])
def test_daily_activity_help_not_known_keeps_the_long_term_care_route_open_and_asks_both(assessment):
    found = results(**{**COUPLE, "county": "Douglas", "adl_help": "dont_know",
                       "nursing_facility_level_of_care": assessment})
    assert found["apple_health"].classification is P, reasons(found["apple_health"])
    asked = found["apple_health"].unknown_fields
    assert "adl_help" in asked and "nursing_facility_level_of_care" in asked
    assert found["copes"].classification is P and found["mac"].classification is P


@pytest.mark.parametrize("assets", ["36101-53100", "84355-156883"])
def test_no_help_listed_and_no_assessment_closes_the_spousal_route_for_apple_health_copes_and_mac(assets):
    found = results(**{**COUPLE, "assets": assets})
    for key in ("apple_health", "copes", "mac"):
        assert found[key].classification is X, (key, reasons(found[key]))
    assert "long-term care need" in reasons(found["copes"])
    assert found["tsoa"].classification is not X        # TSOA has its own resource standard, not Apple Health's


def test_help_listed_keeps_all_three_open_on_the_spousal_route():
    found = results(**{**COUPLE, "adl_help": ["bathing", "dressing"]})
    assert {found[k].classification for k in ("apple_health", "copes", "mac")} == {P}


def test_under_the_couple_standard_copes_stays_open_without_help_listed():
    found = results(**{**COUPLE, "assets": "2001-3000"})
    assert found["copes"].classification is P


# ---- 3. VA basic pension is likely without an Aid & Attendance need (programs.md section 10 rows 4, 6, 8)

VETERAN = {**SINGLE, "age": 72, "county": "Clallam", "veteran_status": "veteran", "wartime_service": "yes",
           "monthly_income": "1000-1299", "assets": "10001-17600"}


@pytest.mark.parametrize(("answers", "on"), [
    (VETERAN, ON),                                                       # a18: $12,000-15,588 vs basic $17,441
    (VETERAN, date(2027, 1, 15)),                                        # a pass under the floor holds
    ({**VETERAN, "age": 81, "monthly_income": "0-999", "assets": "4501-10000"}, ON),          # h05
    ({**VETERAN, "age": 78, "household_size": 2, "marital_status": "married", "monthly_income": "1500-1732",
      "assets": "53101-84354"}, ON),                                     # b06: vs basic with a spouse $22,839
    ({**VETERAN, "adl_help": ["medication"]}, ON),                       # help that alone may not meet A&A
    ({**VETERAN, "adl_help": "dont_know"}, ON),                          # not known: under the basic rate it holds
])
def test_basic_pension_under_the_basic_rate_is_likely(answers, on):
    found = results(on=on, **answers)["va_pension"]
    assert found.classification is L, reasons(found)
    assert "basic" in reasons(found)


@pytest.mark.parametrize(("answers", "asked"), [
    ({**VETERAN, "monthly_income": "1500-1732"}, "housebound"),          # a19: above basic, A&A/Housebound raise it
    ({**VETERAN, "monthly_income": "1500-1732", "adl_help": "dont_know"}, "bathing"),
])
def test_above_the_basic_rate_stays_possibly_and_asks_what_would_raise_it(answers, asked):
    found = results(**answers)["va_pension"]
    assert found.classification is P and any(asked in n for n in found.needs)


def test_a_surviving_spouse_without_an_aid_and_attendance_need_stays_possibly():
    found = results(**{**VETERAN, "veteran_status": "surviving_spouse", "marital_status": "single"})["va_pension"]
    assert found.classification is P and found.figures_missing


# ---- 4. Poverty-guideline limits carried through their second change, like the SSI-rate ones

@pytest.mark.parametrize(("key", "on", "size"), [
    ("apple_health_magi_income", date(2028, 6, 1), 1), ("basic_food_gross_income", date(2028, 6, 1), 1),
    ("liheap_income", date(2028, 10, 1), 1), ("basic_food_net_income", date(2028, 10, 1), 2),
])
def test_fpl_floors_by_size_run_a_second_year_with_two_steps_of_headroom(key, on, size):
    limit = load_thresholds().for_size(key, on, size)
    assert limit.at_least and limit.indexed and limit.index_steps == 2


@pytest.mark.parametrize("key", ["msp_qmb_income", "msp_slmb_income", "msp_qi1_income"])
def test_msp_floors_run_a_second_year(key):
    limit = load_thresholds().for_unit(key, date(2028, 6, 1), married=False)
    assert limit.at_least and limit.index_steps == 2


OLDER = {**SINGLE, "county": "Whitman", "assets": "10001-17600"}


@pytest.mark.parametrize(("answers", "on", "program", "expected"), [
    ({**OLDER, "monthly_income": "3408-3525"}, date(2028, 6, 1), "msp", X),       # a17: 1.84x QI-1
    ({**SINGLE}, date(2028, 6, 1), "msp", L),                                      # c01
    ({**SINGLE}, date(2028, 6, 1), "extra_help", L),
    ({**SINGLE, "age": 64, "medicare_parts": "none", "monthly_income": "1500-1732", "assets": "4501-10000"},
     date(2028, 6, 1), "apple_health", L),                                         # b07: MAGI
    ({**SINGLE, "age": 64, "medicare_parts": "none", "monthly_income": "1500-1732", "assets": "4501-10000"},
     date(2028, 6, 1), "basic_food", L),
    ({**OLDER, "monthly_income": "1733-1752"}, date(2028, 10, 1), "msp", L),       # b01
    ({**OLDER, "monthly_income": "1733-1752"}, date(2028, 10, 1), "liheap", L),
    ({**OLDER, "monthly_income": "1733-1752"}, date(2028, 10, 1), "basic_food", L),
    ({**OLDER, "monthly_income": "5500-6999"}, date(2028, 10, 1), "liheap", X),
])
def test_fpl_based_programs_decide_far_from_their_floors_in_2028(answers, on, program, expected):
    found = results(on=on, **answers)[program]
    assert found.classification is expected, reasons(found)


@pytest.mark.parametrize("on", [date(2028, 10, 1), date(2028, 12, 1)])
def test_extra_help_and_liheap_carry_the_same_150_percent_line_alike(on):
    # both 150% of the 2028 poverty guidelines from October 2028 (programs.md section 7 row 3; section 12 row 1a)
    table = load_thresholds()
    extra_help = table.for_unit("extra_help_income", on, married=False)
    liheap = table.for_size("liheap_income", on, 1)
    assert (extra_help.amount, extra_help.index_steps) == (liheap.amount, liheap.index_steps)


# ---- 5. MAC follows the Apple Health result of the same report

CARED_FOR = {**SINGLE, "age": 83, "county": "Jefferson", "living_situation": "own_home", "monthly_income": "0-999",
             "assets": "0-2000", "nursing_facility_level_of_care": "assessed_yes", "adl_help": ["bathing"],
             "has_unpaid_caregiver": "yes"}


@pytest.mark.parametrize("answers", [
    CARED_FOR,                                                                     # h09
    {**CARED_FOR, "household_size": 2, "marital_status": "married", "monthly_income": "1000-1299"},   # h17
])
def test_mac_is_likely_when_apple_health_is_likely_in_the_same_report(answers):
    found = results(**answers)
    assert found["apple_health"].classification is L
    assert found["mac"].classification is L, reasons(found["mac"])


def test_mac_stays_possibly_when_apple_health_is_only_possibly():
    found = results(**{**CARED_FOR, "household_size": 2, "marital_status": "married", "monthly_income": "1000-1299",
                       "assets": "84355-156883"})          # above the state standard: the protected amount is asked
    assert found["apple_health"].classification is P and found["mac"].classification is P


# ---- 6. The MSP card does not offer conditional Part A through QMB when QMB is not open

def test_above_qmb_without_part_a_the_msp_card_does_not_promise_qmb_paid_part_a():
    found = results(**{**SINGLE, "age": 65, "medicare_parts": "none", "monthly_income": "1500-1732",
                       "assets": "4501-10000", "county": "Snohomish"})["msp"]
    assert found.classification is P
    assert "conditionally on QMB" not in reasons(found) and "QMB, which would pay it, is not open" in reasons(found)


def test_at_qmb_income_the_conditional_part_a_route_is_still_offered():
    found = results(**{**SINGLE, "age": 65, "medicare_parts": "none", "monthly_income": "1000-1299"})["msp"]
    assert "conditionally on QMB" in reasons(found)
