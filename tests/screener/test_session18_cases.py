"""Classes a fourteenth probing round found (session 18, /tmp/probe_screen14), each a class of intakes: the spouse's
age is the spouse's, never the answering caregiver's (M); an enrolment in categorically needy Apple Health settles the
coverage group as it settles income and resources (K); an exclusion judged for the person cared for is labelled as
theirs (J); the FCSP card names the caregiving route that holds (L); a married couple with no long-term-care need is
checked against the couple's categorically needy standards (H2).

Real rules and figures from data/programs (programs.md: section 1a rows 1, 3b-4; section 1c rows 11-15; sections 2-5
age rows; section 8 row 2; section 9 rows 1-3; section 11 row 1 and RCW 84.36.381's spouse claimant).
"""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.screener.assemble import run_screen
from carenav_core.screener.engine import Classification, own_results, screen
from carenav_core.screener.intake import load_intake_options
from carenav_core.screener.profile import answer_warnings, is_unknown, normalize
from carenav_core.screener.rules import basic_food
from carenav_core.screener.rules.base import Context, Status
from carenav_core.screener.thresholds import load_thresholds

L, P, X = Classification.LIKELY, Classification.POSSIBLY, Classification.EXCLUDED
ON = date(2026, 12, 3)
BASE = {"apple_health": "none", "extra_help": "no", "disability": "no", "veteran_status": "no",
        "pays_for_heating": "yes", "adl_help": "none", "nursing_facility_level_of_care": "not_assessed"}
# x06: a daughter, 30, screens her mother, 58 (married, King, owner), who cares for her husband, 80
MOTHER = {**BASE, "adl_help": ["bathing"], "caring_for_someone": "yes", "screening_for": "someone_i_care_for",
          "caregiver_age": 30, "age": 58, "household_size": 2, "marital_status": "married", "medicare_parts": "none",
          "living_situation": "own_home", "county": "King", "monthly_income": "2200-2351", "assets": "0-2000",
          "care_recipient_age": 80, "care_relationship": "spouse"}
ENROLLED = {**BASE, "apple_health": "categorically_needy", "has_unpaid_caregiver": "no", "caring_for_someone": "no",
            "screening_for": "myself", "age": 62, "household_size": 1, "marital_status": "single",
            "medicare_parts": ["A", "B"], "living_situation": "rented_home", "county": "Yakima",
            "monthly_income": "1000-1299", "assets": "0-2000", "disability": "prefer_not_to_say"}
COUPLE = {**BASE, "apple_health": "categorically_needy", "nursing_facility_level_of_care": "assessed_no",
          "has_unpaid_caregiver": "no", "caring_for_someone": "no", "screening_for": "myself", "age": 70,
          "household_size": 2, "marital_status": "married", "medicare_parts": ["A", "B", "D"],
          "living_situation": "own_home", "county": "Yakima", "monthly_income": "2016-2199", "assets": "0-2000"}
MISFIT = "already enrolled in categorically needy"


def own(**answers) -> dict:
    return own_results(screen(normalize(answers), on=ON))


def reasons(result) -> str:
    return " ".join(o.verdict.reason for o in result.outcomes)


def context() -> Context:
    return Context(thresholds=load_thresholds(), on=ON, options=load_intake_options())


# ---- M. The spouse's age is the spouse's: never the answering caregiver's

@pytest.mark.parametrize(("changes", "expected"), [
    ({}, L),                                                       # x06: husband 80 can be the claimant (King $84,000)
    ({"caregiver_age": 70, "care_recipient_age": 50}, X),          # x07: friend 70 answering, husband 50
    ({"caregiver_age": 20, "care_recipient_age": 61}, L),          # the husband exactly at 61
    ({"caregiver_age": 75, "care_recipient_age": 60}, X),          # one short, the answerer well over
    ({"screening_for": "myself", "caregiver_age": None}, L),       # x08: the mother screening herself
])
def test_property_tax_takes_the_age_of_the_spouse_the_person_screened_cares_for(changes, expected):
    answers = {k: v for k, v in {**MOTHER, **changes}.items() if v is not None}
    tax = own(**answers)["property_tax"]
    assert tax.classification is expected
    assert ("their spouse, of age, can be the claimant" in reasons(tax)) is (expected is L)


@pytest.mark.parametrize("spouse_age", ["dont_know", "prefer_not_to_say", None])
def test_an_unknown_spouse_age_stays_open_asking_it_whatever_the_answerer_age(spouse_age):
    answers = {k: v for k, v in {**MOTHER, "caregiver_age": 70, "care_recipient_age": spouse_age}.items()
               if v is not None}
    tax = own(**answers)["property_tax"]
    assert tax.classification is P
    assert any("whether their spouse is 61 or older" in n for n in tax.needs)
    assert "70" not in reasons(tax)                                # the answering friend's age is not used


def test_spouse_age_reads_the_answer_about_the_spouse_in_either_mode():
    screened = normalize(MOTHER)
    assert screened.spouse_age() == 80
    assert normalize({**MOTHER, "screening_for": "myself"}).spouse_age() == 80
    assert is_unknown(normalize({**MOTHER, "care_relationship": "parent"}).spouse_age())
    assert is_unknown(normalize({**MOTHER, "caring_for_someone": "prefer_not_to_say"}).spouse_age())
    # the answerer's own tie (not answered as a caregiver): the answering spouse's age
    assert normalize({**MOTHER, "caring_for_someone": "no", "care_recipient_age": None}).spouse_age() == 30


@pytest.mark.parametrize(("answerer", "spouse", "elderly"), [(30, 80, True), (70, 50, None), (65, 59, None)])
def test_basic_food_elderly_member_is_the_spouse_not_the_answerer(answerer, spouse, elderly):
    # programs.md section 8 row 2: a member 60+; spouses are one household; other members' ages are not asked
    profile = normalize({**MOTHER, "caregiver_age": answerer, "care_recipient_age": spouse, "age": 55})
    assert basic_food.elderly_or_disabled(profile, context()) is elderly


# ---- K. A categorically needy enrolment settles the coverage group

@pytest.mark.parametrize("changes", [{}, {"disability": "dont_know"}, {"disability": None}, {"age": 50},
                                     {"age": 62, "medicare_parts": "prefer_not_to_say"}])
def test_a_categorically_needy_enrolee_is_in_a_coverage_group(changes):
    answers = {k: v for k, v in {**ENROLLED, **changes}.items() if v is not None}
    health = own(**answers)["apple_health"]
    assert health.classification is L, health.needs
    coverage = health.outcomes[0]
    assert coverage.status is Status.PASS and "already enrolled" in coverage.verdict.reason


def test_without_the_enrolment_the_disability_is_still_asked():
    health = own(**{**ENROLLED, "apple_health": "none"})["apple_health"]
    assert health.classification is P and "disability" in health.unknown_fields


def test_an_enrolee_over_every_route_keeps_the_card_and_the_warning_carries_the_doubt():
    h08 = {**ENROLLED, "monthly_income": "2983-3407"}                        # above the SIL $2,982
    assert own(**h08)["apple_health"].classification is L
    assert any(MISFIT in w for w in answer_warnings(normalize(h08), on=ON))


# ---- J. An exclusion judged for the person cared for is labelled as theirs

@pytest.mark.parametrize(("age", "cared_for", "relation"), [(60, 45, "friend_or_neighbor"), (70, 16, "other_relative"),
                                                           (66, 30, "other_relative")])
def test_every_exclusion_judged_for_the_person_cared_for_is_labelled(age, cared_for, relation):
    answers = {**BASE, "has_unpaid_caregiver": "yes" if cared_for < 18 else "no", "caring_for_someone": "yes",
               "screening_for": "myself", "age": age, "household_size": 1, "marital_status": "single",
               "medicare_parts": "none", "living_situation": "rented_home", "county": "King",
               "monthly_income": "1500-1732", "assets": "0-2000", "care_recipient_age": cared_for,
               "care_relationship": relation}
    found = screen(normalize(answers), on=ON)
    theirs = {r.program.key for r in found if r.for_care_receiver and r.classification is X}
    assert {"tsoa", "pace"} <= theirs                                # under 55: the person cared for
    report = run_screen(normalize(answers), on=ON, search=None)
    for exclusion in report.excluded:
        labelled = exclusion.name.endswith("— for the person they care for")
        assert labelled is (exclusion.program in theirs), exclusion.name
    assert "property_tax" in {e.program for e in report.excluded}    # own exclusions keep the plain name


# ---- L. The FCSP card names the caregiving route that holds

A06 = {**BASE, "adl_help": ["bathing", "dressing"], "nursing_facility_level_of_care": "assessed_yes",
       "has_unpaid_caregiver": "yes", "caring_for_someone": "yes", "screening_for": "myself", "age": 72,
       "household_size": 2, "marital_status": "single", "medicare_parts": ["A", "B", "D"], "living_situation": "own_home",
       "county": "Pierce", "monthly_income": "1500-1732", "assets": "0-2000", "care_recipient_age": 10,
       "care_relationship": "other_relative"}


@pytest.mark.parametrize("child", [10, 17, 5])
def test_fcsp_through_the_persons_own_caregiver_says_so_when_they_care_for_a_child(child):
    fcsp = own(**{**A06, "care_recipient_age": child})["fcsp"]
    assert fcsp.classification is L
    assert "of another adult" not in reasons(fcsp)
    assert "an unpaid caregiver helps the person" in reasons(fcsp)


def test_fcsp_in_someone_i_care_for_mode_names_the_answering_caregiver():
    x15 = {**{k: v for k, v in A06.items() if k != "has_unpaid_caregiver"}, "screening_for": "someone_i_care_for",
           "caregiver_age": 50, "age": 80, "care_recipient_age": 14}
    fcsp = own(**x15)["fcsp"]
    assert fcsp.classification is L
    assert "of another adult" not in reasons(fcsp) and "you, answering, are their unpaid caregiver" in reasons(fcsp)
    warning = next(w for w in answer_warnings(normalize(x15), on=ON) if "also say that person is a caregiver" in w)
    assert "for you as their caregiver" in warning


@pytest.mark.parametrize(("changes", "expected", "words"), [
    ({"has_unpaid_caregiver": "prefer_not_to_say"}, P, "of someone aged 10"),          # a07
    ({"has_unpaid_caregiver": "no"}, X, "of someone aged 10"),                         # neither relation
    ({"has_unpaid_caregiver": "no", "care_recipient_age": "dont_know"}, P, "whose age is not known"),
    ({"has_unpaid_caregiver": "no", "care_recipient_age": 80}, L, "unpaid caregiver of another adult"),
    ({"care_recipient_age": 80}, L, "unpaid caregiver of another adult"),
])
def test_fcsp_says_of_another_adult_only_for_a_person_cared_for_of_18_or_more(changes, expected, words):
    fcsp = own(**{**A06, **changes})["fcsp"]
    assert fcsp.classification is expected
    assert words in reasons(fcsp)
    assert ("of another adult" in reasons(fcsp)) is (words == "unpaid caregiver of another adult")


# ---- H2. A married couple with no long-term-care need is checked against the couple's CN standards

@pytest.mark.parametrize("changes", [
    {},                                                            # x09: income $2,016-2,199 > couple CN $1,511
    {"monthly_income": "1000-1299", "assets": "4501-10000"},       # h05: assets > couple CN $3,000
    {"adl_help": "none", "nursing_facility_level_of_care": "not_assessed"},   # no help listed: no assessment pending
])
def test_an_enrolled_couple_over_the_couple_standards_without_a_care_need_is_warned(changes):
    answers = {**COUPLE, **changes}
    warnings = [w for w in answer_warnings(normalize(answers), on=ON) if MISFIT in w]
    assert len(warnings) == 1 and "couple's categorically needy" in warnings[0]
    assert own(**answers)["apple_health"].classification is L       # the enrolment is trusted; the warning doubts


@pytest.mark.parametrize("changes", [
    {"monthly_income": "1000-1299"},                                               # within both couple standards
    {"nursing_facility_level_of_care": "assessed_yes"},                            # x10: spousal protections
    {"adl_help": ["bathing"], "nursing_facility_level_of_care": "not_assessed"},   # assessment pending
    {"household_size": 3},                                                         # household income not the couple's
    {"living_situation": "nursing_facility", "nursing_facility_level_of_care": "assessed_yes"},
])
def test_no_couple_misfit_warning_where_a_couple_route_may_fit(changes):
    answers = {**COUPLE, **changes}
    assert not any(MISFIT in w for w in answer_warnings(normalize(answers), on=ON))


# ---- N. Screening someone cared for who cares for someone too: the person they care for is judged as well

CARE = ("copes", "tsoa", "mac", "pace")


@pytest.mark.parametrize("relation, age", [("spouse", 85), ("parent", 92), ("friend_or_neighbor", 70)])
def test_the_person_a_screened_caregiver_cares_for_is_judged_for_the_care_programs_too(relation, age):
    """In "someone I care for" mode the care programs are the person screened's own, and, when that person also
    cares for someone, each is judged for the one they care for as well (programs.md sections 2-5 serve the person
    needing care), with the person screened as their unpaid caregiver: as in "myself" mode."""
    answers = {**MOTHER, "age": 78, "medicare_parts": ["A", "B", "D"], "nursing_facility_level_of_care": "assessed_no",
               "has_unpaid_caregiver": "yes", "care_relationship": relation, "care_recipient_age": age}
    found = screen(normalize(answers), on=ON)
    mine = own_results(found)
    theirs = {r.program.key: r for r in found if r.for_care_receiver}
    assert set(CARE) <= set(theirs) <= {*CARE, "va_pension"}     # VA pension serves either (round 15, N2)
    assert all(not mine[k].for_care_receiver for k in CARE)
    assert mine["copes"].classification is X          # her own assessment: no nursing-facility level of care
    assert all(theirs[k].classification is not X for k in ("copes", "mac"))   # his need is not known: open
    report = run_screen(normalize(answers), on=ON, search=None)
    assert len({c.program for c in report.cards}) == len(report.cards)
    assert any("for the person they care for too" in w for w in report.warnings)


def test_screening_someone_cared_for_who_cares_for_no_one_judges_them_alone():
    answers = {**MOTHER, "caring_for_someone": "no", "care_recipient_age": "dont_know", "care_relationship": "parent",
               "has_unpaid_caregiver": "yes"}
    assert not [r for r in screen(normalize(answers), on=ON) if r.for_care_receiver]



# ---- round 15: N2, VA pension ("either") judged for the person cared for in "someone I care for" mode too; H3, a
# single enrolee with no long-term-care need is held to the CN income standard, not the special income level

N2 = {'apple_health': 'none', 'extra_help': 'no', 'disability': 'no', 'veteran_status': 'no', 'pays_for_heating': 'yes', 'adl_help': ['bathing', 'dressing'], 'nursing_facility_level_of_care': 'assessed_yes', 'caring_for_someone': 'yes', 'screening_for': 'someone_i_care_for', 'age': 78, 'household_size': 2, 'marital_status': 'married', 'medicare_parts': ['A', 'B', 'D'], 'living_situation': 'own_home', 'county': 'Yakima', 'monthly_income': '2200-2351', 'assets': '0-2000', 'care_recipient_age': 82, 'care_relationship': 'spouse', 'caregiver_age': 50}
H3 = {'apple_health': 'categorically_needy', 'extra_help': 'no', 'disability': 'no', 'veteran_status': 'no', 'pays_for_heating': 'yes', 'adl_help': 'none', 'nursing_facility_level_of_care': 'assessed_no', 'caring_for_someone': 'no', 'screening_for': 'myself', 'has_unpaid_caregiver': 'no', 'age': 70, 'household_size': 1, 'marital_status': 'single', 'medicare_parts': ['A', 'B', 'D'], 'living_situation': 'own_home', 'county': 'Yakima', 'monthly_income': '2200-2351', 'assets': '0-2000'}


def test_va_pension_excluded_for_the_person_screened_is_judged_for_the_one_they_care_for_in_either_mode():
    for mode in ("someone_i_care_for", "myself"):
        answers = {**N2, "screening_for": mode}
        if mode == "myself":
            answers.pop("caregiver_age", None)
        va = own_results(screen(normalize(answers), on=ON))["va_pension"]
        assert va.for_care_receiver and va.classification is not X, mode


def test_a_single_enrolee_with_no_long_term_care_need_is_held_to_the_cn_income_standard():
    warnings = [w for w in answer_warnings(normalize(H3), on=ON) if MISFIT in w]
    assert len(warnings) == 1 and "categorically needy income standard" in warnings[0]
    assessed = {**H3, "nursing_facility_level_of_care": "assessed_yes"}
    assert not any(MISFIT in w for w in answer_warnings(normalize(assessed), on=ON))
