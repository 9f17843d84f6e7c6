"""Wrong or unsettled screening results a third prober found with 35 new intakes (session 13), each checked against
the program's own rule through the real rules and dated figures."""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.screener.engine import Classification, screen
from carenav_core.screener.profile import answer_warnings
from tests.screener.conftest import profile

L, P, X = Classification.LIKELY, Classification.POSSIBLY, Classification.EXCLUDED
ON = date(2026, 12, 2)
OLDER = {"age": 70, "county": "King", "medicare_parts": ["A", "B"], "apple_health": "none", "extra_help": "no",
         "disability": "no", "assets": "0-2000", "household_size": 1, "marital_status": "single",
         "monthly_income": "1300-1499", "living_situation": "rented_home"}


def results(on: date = ON, **answers) -> dict:
    return {r.program.key: r for r in screen(profile(**answers), on=on)}


@pytest.mark.parametrize("on", [date(2029, 4, 1), date(2024, 3, 15)])
def test_a_tier_figure_not_on_file_leaves_msp_open_instead_of_refusing_the_screen(on):
    from carenav_core.screener.assemble import run_screen
    report = run_screen(profile(**OLDER), on=on, search=None)         # was: ThresholdNotInForce out of the MSP tier lookup
    msp = next(card for card in report.cards if card.program == "msp")
    assert msp.classification == "possibly_relevant" and msp.tier == ""


def test_a_remarried_surviving_spouse_is_not_a_surviving_spouse_for_va_pension():
    widow = {**OLDER, "age": 74, "veteran_status": "surviving_spouse", "wartime_service": "yes",
             "adl_help": ["bathing"]}
    assert results(**widow)["va_pension"].classification is not X
    again = results(**{**widow, "marital_status": "married", "household_size": 2})["va_pension"]
    assert again.classification is X and any("3.50(b)(2)" in o.verdict.reason for o in again.outcomes)


def test_screening_someone_i_care_for_who_has_no_unpaid_caregiver_decides_nothing_and_says_so():
    answers = {**OLDER, "age": 82, "screening_for": "someone_i_care_for", "has_unpaid_caregiver": "no",
               "nursing_facility_level_of_care": "assessed_yes", "apple_health": "categorically_needy"}
    found = results(**answers)
    assert found["mac"].classification is P and found["fcsp"].classification is P
    assert any("no unpaid caregiver" in w for w in answer_warnings(profile(**answers)))
    agreed = results(**{**answers, "has_unpaid_caregiver": "yes"})
    assert agreed["mac"].classification is L


@pytest.mark.parametrize("unknown", [{"household_size": "prefer_not_to_say"}, {"marital_status": "dont_know"},
                                     {"household_size": "prefer_not_to_say", "marital_status": "dont_know"}])
def test_income_under_the_smallest_limit_passes_whatever_the_household(unknown):
    found = results(**{**OLDER, **unknown})
    for program in ("msp", "extra_help", "liheap", "basic_food"):
        assert found[program].classification is L, (program, found[program].unknown_fields)
    above = results(**{**OLDER, **unknown, "household_size": 2, "monthly_income": "1883-1956"})  # over a single's
    assert above["msp"].classification is P              # a couple's limit may be met
    if "marital_status" in unknown and "household_size" not in unknown:       # one alone: the single limit decides
        assert results(**{**OLDER, **unknown, "monthly_income": "1883-1956"})["msp"].classification is X


@pytest.mark.parametrize("bad, said", [
    ({"age": "seventy-two"}, "age: got 'seventy-two'; expected a whole number or 'dont_know' or 'prefer_not_to_say'"),
    ({"household_size": 0}, "household_size: household size 0 is outside 1-20"),
    ({"adl_help": ["cooking"]}, "adl_help item 1: got 'cooking'; expected 'bathing', 'dressing'"),
    ({"zip_code": "98101"}, "zip_code: not a question of the intake (remove it)"),
    ({"medicare_parts": "A"}, "medicare_parts: got 'A'; expected a list or 'none'"),
])
def test_bad_answers_are_named_in_plain_words(bad, said):
    from carenav_core.errors import ConfigError
    from carenav_core.screener.intake import parse_answers
    with pytest.raises(ConfigError) as caught:
        parse_answers({"age": 70, **bad})
    message = str(caught.value)
    assert said in message and "pydantic" not in message and "literal[" not in message


def test_a_spouse_of_age_can_claim_the_property_tax_exemption_for_the_home_they_share():
    caregiver = {**OLDER, "age": 58, "marital_status": "married", "household_size": 2, "living_situation": "own_home",
                 "caring_for_someone": "yes", "care_relationship": "spouse", "care_recipient_age": 66,
                 "monthly_income": "4500-5499", "has_unpaid_caregiver": "no", "veteran_status": "no",
                 "medicare_parts": "none"}      # no Medicare at 58 without a disability (session 17: a contradiction)
    assert results(**caregiver)["property_tax"].classification is L
    young = results(**{**caregiver, "care_recipient_age": 59})["property_tax"]
    assert young.classification is X                  # neither spouse is of age (no disability, not a veteran)
    apart = results(**{**caregiver, "household_size": 1})["property_tax"]
    # a spouse living elsewhere shares this home only from a nursing home or other care home (RCW 84.36.381(1)(a))
    assert apart.classification is P and any("care home" in n for o in apart.outcomes for n in o.verdict.needs)
    alone = {k: v for k, v in caregiver.items() if k not in ("care_relationship", "care_recipient_age")}
    unasked = results(**{**alone, "caring_for_someone": "no"})["property_tax"]
    assert unasked.classification is P and any("whether their spouse is 61 or older" in n for o in unasked.outcomes
                                               for n in o.verdict.needs)


def test_va_pension_is_judged_for_the_person_cared_for_when_the_caregiver_is_not_a_veteran():
    wife = {**OLDER, "age": 74, "veteran_status": "no", "marital_status": "married", "household_size": 2,
            "living_situation": "own_home", "caring_for_someone": "yes", "care_relationship": "spouse",
            "care_recipient_age": 78, "has_unpaid_caregiver": "no"}
    va = results(**wife)["va_pension"]
    assert va.classification is P and va.for_care_receiver and "veteran_status" in va.unknown_fields
    alone = results(**{**wife, "caring_for_someone": "no"})["va_pension"]
    assert alone.classification is X and not alone.for_care_receiver


@pytest.mark.parametrize("answers, on, expected", [
    ({"medicare_parts": ["B"], "extra_help": "no", "age": 60, "disability": "yes"}, ON, P),   # Extra Help route
    ({"medicare_parts": ["B"], "extra_help": "no", "age": 60, "disability": "yes"}, date(2026, 1, 18), X),
    ({"medicare_parts": ["B"], "extra_help": "no"}, date(2026, 1, 18), P),       # 70: conditional Part A
    ({"medicare_parts": "none", "apple_health": "categorically_needy", "age": 67}, ON, P),
    ({"medicare_parts": "none", "age": 60, "disability": "yes"}, ON, X),
])
def test_msp_stays_open_on_the_routes_to_part_a(answers, on, expected):
    assert results(on, **{**OLDER, **answers})["msp"].classification is expected


@pytest.mark.parametrize("answers, apple_health, extra_help", [
    # in a nursing facility, income over the CN level but within the special income level ($2,982 in 2026): CN
    # through long-term care, which confers Extra Help (session 16: Apple Health likely, so Extra Help likely)
    ({"age": 82, "living_situation": "nursing_facility", "monthly_income": "2200-2351"}, L, L),
    # assessed at nursing-facility level of care at home: CN once a COPES waiver client (COPES judges that)
    ({"nursing_facility_level_of_care": "assessed_yes", "living_situation": "own_home",
      "monthly_income": "2556-2608"}, P, P),
    # over the special income level: the spend-down route only; medically needy is full Medicaid, so Extra Help too
    ({"age": 82, "living_situation": "nursing_facility", "monthly_income": "3526-3607"}, P, P),
    # at home over it, no help with daily activities: nothing points to long-term care, so no route confers Extra Help
    ({"age": 82, "living_situation": "own_home", "monthly_income": "3526-3607", "adl_help": "none"}, P, X),
    # session 15: help bathing and no assessment yet: the assessment may open the medically needy long-term-care
    # route, as for a person assessed at that level (programs.md 1 and 7 row 2), so Extra Help is asked, not closed
    ({"age": 82, "living_situation": "own_home", "monthly_income": "3526-3607"}, P, P),
    # assets over the long-term care standard: no Medicaid ahead for Extra Help either
    ({"age": 82, "living_situation": "nursing_facility", "monthly_income": "2200-2351", "assets": "18091-35130"},
     X, X),
])
def test_long_term_care_opens_apple_health_up_to_the_special_income_level(answers, apple_health, extra_help):
    found = results(**{**OLDER, "nursing_facility_level_of_care": "not_assessed", **answers})
    assert found["apple_health"].classification is apple_health
    assert found["extra_help"].classification is extra_help


# Round 4 (the same session's second prober)
def test_a_married_nursing_facility_resident_is_judged_on_their_own_income_not_the_couples():
    resident = {**OLDER, "age": 84, "marital_status": "married", "household_size": 2,
                "living_situation": "nursing_facility", "monthly_income": "3526-3607"}
    found = results(**resident)
    assert found["msp"].classification is P          # household income cannot exclude on own income
    assert profile(**resident).couple is False


def test_a_surviving_spouse_whose_marriage_since_is_unknown_is_left_open():
    widow = {**OLDER, "age": 74, "veteran_status": "surviving_spouse", "wartime_service": "yes",
             "adl_help": ["bathing"], "marital_status": "dont_know"}
    va = results(**widow)["va_pension"]
    assert va.classification is P and "married" in va.unknown_fields


@pytest.mark.parametrize("answer", ["dont_know", "prefer_not_to_say"])
def test_a_declined_unpaid_caregiver_answer_stays_unknown_when_screening_someone_i_care_for(answer):
    found = results(**{**OLDER, "screening_for": "someone_i_care_for", "has_unpaid_caregiver": answer,
                       "nursing_facility_level_of_care": "assessed_yes", "apple_health": "categorically_needy"})
    assert found["mac"].classification is P and "has_unpaid_caregiver" in found["mac"].unknown_fields


def test_under_the_smallest_limit_also_for_magi_tsoa_and_copes():
    adult = {**OLDER, "age": 45, "medicare_parts": "none", "disability": "no", "household_size": "prefer_not_to_say",
             "monthly_income": "1500-1732"}
    assert "household_size" not in results(**adult)["apple_health"].unknown_fields
    care = {**OLDER, "marital_status": "dont_know", "nursing_facility_level_of_care": "assessed_yes",
            "has_unpaid_caregiver": "yes"}
    found = results(**care)
    assert "married" not in found["tsoa"].unknown_fields and "married" not in found["copes"].unknown_fields


def test_a_married_couple_at_home_at_nursing_facility_level_keeps_spousal_protections():
    home = {**OLDER, "marital_status": "married", "household_size": 2, "assets": "3001-4500",
            "nursing_facility_level_of_care": "assessed_yes", "monthly_income": "1500-1732"}
    assert results(**home)["apple_health"].classification is P
    assert results(**{**home, "nursing_facility_level_of_care": "assessed_no"})["apple_health"].classification is X
