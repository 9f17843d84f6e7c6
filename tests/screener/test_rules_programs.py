"""Every rule's non-threshold branches: unanswered fields, settled yes/no answers, special routes.

Table rows: (program, rule, answer overrides on the BASE_ANSWERS profile, date, expected status,
unknown fields the outcome must name). None as an answer removes it (unanswered).
"""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.screener.rules import PROGRAMS
from carenav_core.screener.rules.base import Status
from tests.screener.conftest import ON, profile, run_rule

P, F, U = Status.PASS, Status.FAIL, Status.UNKNOWN
MAGI = {"age": 40, "medicare_parts": "none", "disability": "no"}
AH, INC, RES = "apple_health", "income_within_cn_or_magi_limit", "resources_within_limit"
NFLOC = "assessed_nursing_facility_level_of_care"

UNDER_65 = {"age": 60, "disability": "yes"}
CASES = [
    (AH, "in_coverage_category", {"age": 50, "disability": "yes"}, ON, P, ()),
    (AH, "in_coverage_category", {"age": None}, ON, U, ("age",)),
    (AH, "in_coverage_category", {"age": 40, "disability": "no", "medicare_parts": ["A"]}, ON, F, ()),
    (AH, INC, {"apple_health": "categorically_needy", "monthly_income": "8000+"}, ON, P, ()),
    (AH, INC, {"monthly_income": None}, ON, U, ("monthly_income",)),
    (AH, INC, {"age": None, "disability": "no"}, ON, U, ("age",)),
    (AH, INC, {"marital_status": "dont_know", "household_size": 2}, ON, U, ("married",)),
    (AH, INC, {"marital_status": "dont_know", "monthly_income": "1300-1499"}, ON, U, ()),   # one alone: single limit
    (AH, INC, {"household_size": 3, "monthly_income": "8000+"}, ON, U, ()),
    (AH, INC, {"household_size": None, "monthly_income": "0-999"}, ON, P, ()),
    # under one person's MAGI limit: passes whatever the household size (session 13); above it, the size decides
    (AH, INC, {**MAGI, "household_size": None}, ON, P, ()),
    (AH, INC, {**MAGI, "household_size": None, "monthly_income": "2016-2199"}, ON, U, ("household_size",)),
    (AH, RES, {"apple_health": "categorically_needy", "assets": "250000+"}, ON, P, ()),
    (AH, RES, {**MAGI, "assets": "250000+"}, ON, P, ()),
    (AH, RES, {"assets": "prefer_not_to_say"}, ON, U, ("assets",)),
    (AH, RES, {"age": None, "disability": "no"}, ON, U, ("age",)),
    ("mac", "care_receiver_55_or_older", {"age": None}, ON, U, ("age",)),
    ("mac", NFLOC, {}, ON, P, ()),
    ("mac", NFLOC, {"nursing_facility_level_of_care": "assessed_no"}, ON, F, ()),
    ("mac", NFLOC, {"nursing_facility_level_of_care": "not_assessed"}, ON, U, ("nursing_facility_level_of_care",)),
    ("mac", "categorically_needy_apple_health", {"apple_health": None}, ON, U, ("apple_health",)),
    ("mac", "categorically_needy_apple_health", {"apple_health": "categorically_needy"}, ON, P, ()),
    ("mac", "categorically_needy_apple_health", {"apple_health": "medically_needy"}, ON, U, ()),
    ("mac", "lives_at_home", {}, ON, P, ()),
    ("mac", "lives_at_home", {"living_situation": "assisted_living"}, ON, F, ()),
    ("mac", "has_unpaid_caregiver", {}, ON, P, ()),
    ("mac", "has_unpaid_caregiver", {"has_unpaid_caregiver": "no"}, ON, F, ()),
    ("tsoa", NFLOC, {"nursing_facility_level_of_care": "dont_know"}, ON, U, ("nursing_facility_level_of_care",)),
    ("tsoa", "lives_at_home", {"living_situation": "with_family"}, ON, P, ()),
    ("tsoa", "not_on_categorically_needy_apple_health", {"apple_health": "categorically_needy"}, ON, F, ()),
    ("tsoa", "not_on_categorically_needy_apple_health", {"apple_health": "medically_needy"}, ON, P, ()),
    ("tsoa", "not_on_categorically_needy_apple_health", {"apple_health": None}, ON, U, ("apple_health",)),
    ("tsoa", "income_within_400_percent_fbr", {"monthly_income": None}, ON, U, ("monthly_income",)),
    ("tsoa", "income_within_400_percent_fbr", {"household_size": 2, "monthly_income": "8000+"}, ON, U, ()),
    ("tsoa", "income_within_400_percent_fbr", {"household_size": None, "monthly_income": "8000+"}, ON, U,
     ("household_size",)),
    ("tsoa", "resources_within_tsoa_standard", {}, date(2025, 12, 31), U, ()),        # 2023-2025 figure not found
    ("tsoa", "resources_within_tsoa_standard", {"assets": "53101-84354"}, date(2023, 6, 1), F, ()),
    ("tsoa", "resources_within_tsoa_standard", {"assets": "53101-84354"}, date(2026, 1, 1), P, ()),
    ("tsoa", "resources_within_tsoa_standard", {"marital_status": "married", "assets": "250000+"}, ON, F, ()),
    # under the single standard: passes whatever the marriage (session 13); above it, the marriage decides
    ("tsoa", "resources_within_tsoa_standard", {"married": None, "marital_status": None}, ON, P, ()),
    ("tsoa", "resources_within_tsoa_standard", {"married": None, "marital_status": None, "assets": "84355-156883"},
     ON, U, ("married",)),
    ("copes", "aged_65_or_disabled_adult", {"age": None}, ON, U, ("age",)),
    ("copes", "aged_65_or_disabled_adult", {"age": 17, "disability": "yes"}, ON, F, ()),
    ("copes", "aged_65_or_disabled_adult", {"age": 40, "disability": "yes"}, ON, P, ()),
    ("copes", "aged_65_or_disabled_adult", {"age": 40, "disability": "dont_know"}, ON, U, ("disability",)),
    ("copes", NFLOC, {}, ON, P, ()),
    ("copes", "community_setting", {"living_situation": "nursing_facility"}, ON, U, ()),
    ("copes", "community_setting", {"living_situation": "adult_family_home"}, ON, P, ()),
    ("copes", "community_setting", {"living_situation": None}, ON, U, ("living_situation",)),
    ("copes", "income_within_special_income_level", {"apple_health": "categorically_needy", "monthly_income": "8000+"},
     ON, P, ()),
    ("copes", "income_within_special_income_level", {"monthly_income": None}, ON, U, ("monthly_income",)),
    ("copes", "resources_within_ltc_standard", {"assets": None}, ON, U, ("assets",)),
    ("pace", NFLOC, {}, ON, P, ()),
    ("pace", "lives_in_pace_service_area", {"county": None}, ON, U, ("county",)),
    ("pace", "lives_in_pace_service_area", {"county": "Lewis"}, ON, F, ()),
    ("pace", "lives_in_pace_service_area", {"county": "King"}, ON, U, ()),
    ("msp", "medicare_part_a_or_extra_help", {}, ON, P, ()),
    ("msp", "medicare_part_a_or_extra_help", {**UNDER_65, "medicare_parts": ["B"], "extra_help": "yes"},
     date(2026, 1, 19), P, ()),
    ("msp", "medicare_part_a_or_extra_help", {**UNDER_65, "medicare_parts": ["B"], "extra_help": "yes"},
     date(2026, 1, 18), F, ()),
    # not enrolled in Extra Help yet: enrolling (open to a Part B enrollee) qualifies them from 2026-01-19
    ("msp", "medicare_part_a_or_extra_help", {**UNDER_65, "medicare_parts": ["B"], "extra_help": "no"}, ON, U, ()),
    ("msp", "medicare_part_a_or_extra_help", {**UNDER_65, "medicare_parts": ["B"], "extra_help": "no"},
     date(2025, 6, 1), F, ()),
    ("msp", "medicare_part_a_or_extra_help", {"medicare_parts": None, "extra_help": "no"}, ON, U, ("medicare_parts",)),
    ("msp", "medicare_part_a_or_extra_help", {**UNDER_65, "medicare_parts": ["B"], "extra_help": None}, ON, U,
     ("extra_help",)),
    ("msp", "medicare_part_a_or_extra_help", {**UNDER_65, "medicare_parts": ["B"], "extra_help": None},
     date(2025, 6, 1), F, ()),
    ("msp", "medicare_part_a_or_extra_help", {**UNDER_65, "medicare_parts": "none", "extra_help": None}, ON, F, ()),
    # 65 or older without Part A: premium Part A can be taken up conditionally on QMB (SSA POMS HI 00801.140)
    ("msp", "medicare_part_a_or_extra_help", {"medicare_parts": ["B"], "extra_help": "no"}, date(2025, 6, 1), U, ()),
    ("msp", "medicare_part_a_or_extra_help", {"medicare_parts": "none", "extra_help": None}, ON, U, ()),
    ("msp", "income_within_qi1_limit", {"monthly_income": None}, ON, U, ("monthly_income",)),
    ("msp", "income_within_qi1_limit", {"monthly_income": "1801-1820"}, date(2026, 3, 31), P, ()),
    ("msp", "income_within_qi1_limit", {"monthly_income": "1821-1836"}, date(2026, 3, 31), F, ()),
    ("msp", "income_within_qi1_limit", {"monthly_income": "1821-1836"}, date(2026, 4, 1), P, ()),
    ("extra_help", "has_medicare", {}, ON, P, ()),
    ("extra_help", "has_medicare", {"medicare_parts": "none", "age": 60}, ON, F, ()),
    ("extra_help", "has_medicare", {"medicare_parts": "none"}, ON, U, ()),     # 70: can still enroll in Medicare
    ("extra_help", "has_medicare", {"medicare_parts": None}, ON, U, ("medicare_parts",)),
    ("extra_help", "income_below_150_percent_fpl", {"apple_health": "msp_only", "monthly_income": "8000+"}, ON, P, ()),
    ("extra_help", "income_below_150_percent_fpl", {"monthly_income": None}, ON, U, ("monthly_income",)),
    ("extra_help", "resources_within_lis_limit", {"apple_health": "medically_needy", "assets": "250000+"}, ON, P, ()),
    # assets unknown: asked only when no Medicare Savings Program confers Extra Help (income over QI-1: session 16)
    ("extra_help", "resources_within_lis_limit", {"assets": None, "monthly_income": "1883-1956"}, ON, U, ("assets",)),
    ("extra_help", "resources_within_lis_limit", {"assets": None}, ON, P, ()),
    ("extra_help", "resources_within_lis_limit", {}, date(2026, 1, 1), P, ()),
    ("extra_help", "resources_within_lis_limit", {}, date(2027, 1, 1), P, ()),      # under the 2027 floor
    ("extra_help", "resources_within_lis_limit", {}, date(2028, 1, 1), P, ()),      # under the 2028 floor
    # no figure for 2029: a likely Medicare Savings Program still confers Extra Help (programs.md section 6 intro,
    # section 7 row 2); without one ahead (Part B only, under 65) the criterion stays open
    ("extra_help", "resources_within_lis_limit", {}, date(2029, 1, 1), P, ()),
    ("extra_help", "resources_within_lis_limit", {"age": 60, "disability": "yes", "medicare_parts": ["B"]},
     date(2029, 1, 1), U, ()),
    ("basic_food", "income_within_basic_food_limit", {"monthly_income": None}, ON, U, ("monthly_income",)),
    ("basic_food", "income_within_basic_food_limit", {"age": 50, "disability": "yes", "monthly_income": "8000+"},
     ON, U, ()),
    ("basic_food", "income_within_basic_food_limit", {"age": None, "disability": "no", "monthly_income": "8000+"},
     ON, U, ("age",)),
    ("basic_food", "income_within_basic_food_limit", {"monthly_income": "8000+"}, date(2025, 9, 30), U, ()),
    ("basic_food", "resources_within_basic_food_limit", {}, ON, P, ()),
    ("basic_food", "resources_within_basic_food_limit", {"age": 50, "disability": "no", "monthly_income": "8000+"},
     ON, P, ()),
    ("basic_food", "resources_within_basic_food_limit", {"monthly_income": "8000+", "assets": None}, ON, U, ("assets",)),
    ("fcsp", "unpaid_caregiver_involved", {"caring_for_someone": "yes", "has_unpaid_caregiver": "no"}, ON, P, ()),
    ("fcsp", "unpaid_caregiver_involved", {}, ON, P, ()),
    ("fcsp", "unpaid_caregiver_involved", {"has_unpaid_caregiver": "no"}, ON, F, ()),
    ("fcsp", "unpaid_caregiver_involved", {"caring_for_someone": None, "has_unpaid_caregiver": "no"}, ON, U,
     ("caring_for_someone",)),
    ("fcsp", "care_receiver_is_adult", {}, ON, P, ()),
    ("fcsp", "care_receiver_is_adult", {"has_unpaid_caregiver": "no"}, ON, F, ()),
    ("fcsp", "care_receiver_is_adult", {"caring_for_someone": "dont_know", "has_unpaid_caregiver": "no"}, ON, U,
     ("caring_for_someone",)),
    # the fixture's own unpaid caregiver is the other route (session 17): without it the cared-for age is asked
    ("fcsp", "care_receiver_is_adult", {"caring_for_someone": "yes", "has_unpaid_caregiver": "no"}, ON, U,
     ("care_recipient_age",)),
    ("fcsp", "care_receiver_is_adult", {"caring_for_someone": "yes"}, ON, P, ()),
    ("va_pension", "veteran_or_surviving_spouse", {}, ON, P, ()),
    ("va_pension", "veteran_or_surviving_spouse", {"veteran_status": "no"}, ON, F, ()),
    ("va_pension", "veteran_or_surviving_spouse", {"veteran_status": None}, ON, U, ("veteran_status",)),
    ("va_pension", "wartime_service", {"wartime_service": "no"}, ON, F, ()),
    ("va_pension", "aged_65_or_disabled", {"veteran_status": "surviving_spouse", "age": 40}, ON, P, ()),
    ("va_pension", "aged_65_or_disabled", {"age": 50, "disability": "yes"}, ON, P, ()),
    ("va_pension", "aged_65_or_disabled", {"age": None, "disability": "no"}, ON, U, ("age",)),
    ("va_pension", "needs_aid_and_attendance", {"living_situation": "nursing_facility", "adl_help": "none"}, ON, P, ()),
    # the basic pension needs no help with daily activities: the rate is income_below_mapr's question (session 15b)
    ("va_pension", "needs_aid_and_attendance", {"adl_help": None}, ON, P, ()),
    ("va_pension", "needs_aid_and_attendance", {"adl_help": "none"}, ON, P, ()),
    ("va_pension", "needs_aid_and_attendance", {}, ON, P, ()),
    ("va_pension", "net_worth_within_limit", {"assets": None}, ON, U, ("assets",)),
    ("va_pension", "net_worth_within_limit", {"monthly_income": "8000+"}, ON, U, ()),
    ("property_tax", "aged_61_or_disabled", {"age": 50, "disability": "yes"}, ON, P, ()),
    ("property_tax", "aged_61_or_disabled", {"age": None, "disability": "no"}, ON, U, ("age",)),
    ("property_tax", "aged_61_or_disabled", {"age": 50, "disability": "dont_know"}, ON, U, ("disability",)),
    ("property_tax", "owns_and_occupies_home", {}, ON, P, ()),
    ("property_tax", "owns_and_occupies_home", {"living_situation": "rented_home"}, ON, F, ()),
    ("property_tax", "owns_and_occupies_home", {"living_situation": "nursing_facility"}, ON, U, ()),
    ("property_tax", "owns_and_occupies_home", {"living_situation": None}, ON, U, ("living_situation",)),
    # county unknown: asked only when the income lies between the lowest and highest county limits (session 16)
    ("property_tax", "income_within_county_threshold", {"county": None, "monthly_income": "4500-5499"}, ON, U,
     ("county",)),
    ("property_tax", "income_within_county_threshold", {"county": None}, ON, P, ()),
    # income under the one-person limit passes whatever the household size (limits rise with it); above it, unknown
    ("liheap", "income_within_150_percent_fpl", {"household_size": None}, ON, P, ()),
    ("liheap", "income_within_150_percent_fpl", {"household_size": None, "monthly_income": "2016-2199"}, ON, U,
     ("household_size",)),
    ("liheap", "pays_for_heating", {"pays_for_heating": "no"}, ON, F, ()),
    ("liheap", "pays_for_heating", {}, ON, P, ()),
]


@pytest.mark.parametrize(("program", "rule", "answers", "on", "expected", "fields"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_rule_branches(program, rule, answers, on, expected, fields):
    outcome = run_rule(program, rule, profile(**{k: v for k, v in answers.items() if k != "married"}), on)
    assert outcome.status is expected, outcome.verdict.reason
    assert set(fields) <= set(outcome.verdict.unknown_fields)
    assert outcome.verdict.reason


def test_every_rule_names_a_corpus_section_and_a_legal_source():
    for program in PROGRAMS:
        assert program.official_url.startswith("http")
        for rule in program.rules:
            assert rule.document.startswith(f"{program.key}#")
            assert rule.legal.href.startswith("http") and rule.legal.title


def test_unknown_has_no_truth_value():
    from carenav_core.screener.profile import Unknown
    with pytest.raises(TypeError, match="is_unknown"):
        bool(Unknown(reason="dont_know"))
