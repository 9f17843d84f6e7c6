"""Classes a nineteenth probing round found (session 21, /tmp/probe_screen19), each a class of intakes or dates:

F1  Household-size limits on the poverty guidelines are computed the agencies' way for every size: the percentage of
    the guideline for that size (base + (size - 1) x per-person, HHS), / 12, rounded once as the program rounds
    (DSHS Basic Food 200%: nearest dollar, sizes 1-10 published, + its per-person amount over 10; SNAP net standard,
    7 CFR 273.9(a)(3)(ii): rounded up, FNS's per-person amount over 8; HCA MAGI 138%: rounded up; LIHEAP 150%: to
    the cent), never the size-4 figure plus a rounded per-person increment. A listed table must agree with its rule.
F2  Property tax thresholds end with their three-year cycle; the next cycle carries the last as a floor (thresholds
    are the greater of the prior one or 70% of the county median: never lowered), unindexed, and after it nothing is
    on file.
C1  Already enrolled in Extra Help is said in its own words and claims no income or resource limit met; answers far
    above Extra Help's own limits with no Medicaid/MSP are a check notice. Deeming names the program that confers it.
E1  A list answer holding "none" (or don't know / prefer not to say) alone is that plain answer; mixed with items it is
    an error that says it must be given alone and the forms accepted; the Screen form never drops ticked activities.
"""
from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from carenav_core.errors import ConfigError
from carenav_core.screener.assemble import run_screen
from carenav_core.screener.engine import Classification, own_results, screen
from carenav_core.screener.intake import parse_answers
from carenav_core.screener.profile import normalize
from carenav_core.screener.render import report_markdown
from carenav_core.screener.rules.base import Status
from carenav_core.screener.thresholds import (Guideline, ThresholdNotInForce, load_thresholds,
                                              merge_parameter_files)

L, P, X = Classification.LIKELY, Classification.POSSIBLY, Classification.EXCLUDED
T = load_thresholds()
BASE = {"screening_for": "myself", "age": 70, "county": "King", "household_size": 1, "marital_status": "single",
        "monthly_income": "1300-1499", "assets": "0-2000", "medicare_parts": ["A", "B"], "apple_health": "none",
        "extra_help": "no", "disability": "no", "veteran_status": "no", "adl_help": "none",
        "nursing_facility_level_of_care": "not_assessed", "living_situation": "own_home",
        "has_unpaid_caregiver": "no", "caring_for_someone": "no", "pays_for_heating": "yes"}
GUIDELINES = {2024: (15060, 5380), 2025: (15650, 5500), 2026: (15960, 5680)}   # HHS, 48 states and DC


def own(answers: dict, on: date) -> dict:
    return own_results(screen(normalize(answers), on=on))


def report(answers: dict, on: date):
    return run_screen(normalize(answers), on=on, search=None)


# ---- F1 ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("key", "on", "size", "amount"), [
    # DSHS EA-Z categorical eligibility table, revised April 1, 2024 (official): 6/7/8/9/10 people, then +$897
    ("basic_food_gross_income", date(2024, 6, 1), 5, 6097), ("basic_food_gross_income", date(2024, 6, 1), 6, 6993),
    ("basic_food_gross_income", date(2024, 6, 1), 7, 7890), ("basic_food_gross_income", date(2024, 6, 1), 8, 8787),
    ("basic_food_gross_income", date(2024, 6, 1), 9, 9683), ("basic_food_gross_income", date(2024, 6, 1), 10, 10580),
    ("basic_food_gross_income", date(2024, 6, 1), 12, 10580 + 2 * 897),
    # 200% of the 2026 guideline per size, nearest dollar (DSHS's convention): 8 people $55,720 x 2 / 12 = $9,286.67
    ("basic_food_gross_income", date(2026, 6, 1), 6, 7393), ("basic_food_gross_income", date(2026, 6, 1), 7, 8340),
    ("basic_food_gross_income", date(2026, 6, 1), 8, 9287), ("basic_food_gross_income", date(2025, 6, 1), 6, 7192),
    # the April 2027 floor is the 2026 table, not a rounded-increment rebuild of it
    ("basic_food_gross_income", date(2027, 6, 1), 8, 9287),
    # FNS FY2026 Table 1 (net, 100%): $3,138 / $3,596 / $4,055 / $4,513, each additional $459
    ("basic_food_net_income", date(2025, 11, 1), 5, 3138), ("basic_food_net_income", date(2026, 6, 1), 6, 3596),
    ("basic_food_net_income", date(2026, 6, 1), 7, 4055), ("basic_food_net_income", date(2026, 6, 1), 8, 4513),
    ("basic_food_net_income", date(2026, 6, 1), 9, 4513 + 459),
    # FY2027: ceil($55,720 / 12) = $4,644 for eight
    ("basic_food_net_income", date(2026, 10, 15), 8, 4644), ("basic_food_net_income", date(2025, 6, 1), 5, 3049),
    # LIHEAP 150% to the cent (2025 guidelines): $4,706.25 / $5,393.75 / $6,768.75; sizes 1-4 too
    ("liheap_income", date(2026, 6, 1), 5, 4706.25), ("liheap_income", date(2026, 6, 1), 6, 5393.75),
    ("liheap_income", date(2026, 6, 1), 8, 6768.75), ("liheap_income", date(2026, 6, 1), 1, 1956.25),
    ("liheap_income", date(2026, 6, 1), 2, 2643.75), ("liheap_income", date(2026, 10, 15), 5, 4835),
    # HCA MAGI 138%, rounded up like sizes 1-4 ($1,835.40 -> $1,836): five people $4,448.20 -> $4,449
    ("apple_health_magi_income", date(2026, 6, 1), 5, 4449), ("apple_health_magi_income", date(2026, 6, 1), 6, 5102),
    ("apple_health_magi_income", date(2025, 6, 1), 3, 3065), ("apple_health_magi_income", date(2024, 6, 1), 4, 3588),
])
def test_every_household_size_is_the_percentage_of_its_own_guideline_rounded_once(key, on, size, amount):
    assert T.for_size(key, on, size).amount == pytest.approx(amount)


RULES = {"basic_food_gross_income": (200, "nearest"), "basic_food_net_income": (100, "up"),
         "apple_health_magi_income": (138, "up"), "liheap_income": (150, "cents")}


@pytest.mark.parametrize("key", sorted(RULES))
def test_every_size_1_to_20_on_every_value_follows_the_program_rule_and_never_drifts(key):
    """The class: for every value on file and every household size the intake takes (1-20), the figure equals the
    program's rule applied to that size's guideline, except past a published table where the agency's own per-person
    amount is added (DSHS over 10, FNS over 8), which stays within a dollar of it for each added person."""
    percent, rounding = RULES[key]
    for value in T.parameters[key].values:
        if value.pending:
            continue
        base, each = value.guideline.base, value.guideline.each
        assert (base, each) in GUIDELINES.values()
        rule = Guideline(percent=percent, base=base, each=each, rounding=rounding)
        for size in range(1, 21):
            got = T.for_size(key, value.effective, size).amount
            if size <= len(value.by_size) or value.each_additional is None:
                assert got == pytest.approx(rule.monthly(size)), (key, value.effective, size)
            else:
                assert abs(got - rule.monthly(size)) <= size - len(value.by_size), (key, value.effective, size)


def test_the_shown_figures_of_the_probe_cases_are_the_agency_figures():
    six = {**BASE, "household_size": 6, "marital_status": "married", "monthly_income": "5500-6999"}
    shown = report_markdown(report(six, date(2024, 6, 1)))
    assert "$6,993 a month (from April 1, 2024) [O]" in shown and "$6,994" not in shown
    eight = {**BASE, "household_size": 8, "marital_status": "married", "monthly_income": "8000+"}
    shown = report_markdown(report(eight, date(2026, 6, 1)))
    assert "$9,287 a month" in shown and "$9,288" not in shown
    five = {**BASE, "age": 45, "household_size": 5, "marital_status": "married", "monthly_income": "4500-5499",
            "medicare_parts": "none"}
    shown = report_markdown(report(five, date(2026, 6, 1)))
    assert "$4,449 a month" in shown and "$4,448.20" not in shown
    assert "$4,706.25 a month" in shown and "$4,706.50" not in shown


def test_a_listed_table_that_disagrees_with_its_guideline_rule_is_rejected_naming_the_size():
    text = ('[parameter.p]\nlabel = "L"\nunit = "USD/month"\n[[parameter.p.values]]\neffective = 2026-04-01\n'
            'by_size = [2660, 3607, 4553, 5500, 6447, 7394]\n'
            'guideline = {percent = 200, base = 15960, each = 5680, rounding = "nearest"}\n'
            'tag = "D"\nreference = [{title = "t", href = "https://x"}]\n')
    with pytest.raises(ConfigError, match="by_size for 6 people is 7394, but 200% of the guideline .* is 7393"):
        merge_parameter_files({"x.toml": text})
    with pytest.raises(ConfigError, match="guideline needs by_size"):
        merge_parameter_files({"x.toml": text.replace("by_size = [2660, 3607, 4553, 5500, 6447, 7394]",
                                                      "amount = 1")})


def test_guideline_rounding_modes():
    assert Guideline(percent=200, base=15060, each=5380, rounding="nearest").monthly(6) == 6993      # 6,993.33
    assert Guideline(percent=200, base=15060, each=5380, rounding="nearest").monthly(5) == 6097      # 6,096.67
    assert Guideline(percent=100, base=15650, each=5500, rounding="up").monthly(5) == 3138           # 3,137.50
    assert Guideline(percent=150, base=15650, each=5500, rounding="cents").monthly(5) == 4706.25
    assert Guideline(percent=138, base=15960, each=5680, rounding="up").monthly(4) == 3795           # exact


# ---- F2 ------------------------------------------------------------------------------------------------------------

def test_property_tax_thresholds_end_with_their_cycle_and_the_next_cycle_is_only_a_floor():
    key = "property_tax_income_threshold_3"
    assert T.for_county(key, date(2026, 12, 31), "King").amount == 84000
    current = T.for_county(key, date(2029, 12, 31), "King")
    assert current.amount == 101000 and not current.at_least
    later = T.for_county(key, date(2030, 6, 1), "King")
    assert later.at_least and not later.indexed and later.describe().startswith("at least $101,000")
    with pytest.raises(ThresholdNotInForce, match="June 1, 2033 is not on file"):
        T.for_county(key, date(2033, 6, 1), "King")
    for value in T.parameters[key].values:
        assert value.until is not None, value.effective        # every cycle ends


@pytest.mark.parametrize(("income", "status", "missing"), [
    ("7000-7999", Status.PASS, False),       # $84,000-$95,988 a year: under the 2027-29 figure, so under 2030's too
    ("8000+", Status.UNKNOWN, True),         # above the floor: the 2030-32 figure decides, and it is not on file
])
def test_a_2030_application_is_judged_only_where_the_floor_settles_it(income, status, missing):
    answers = {**BASE, "monthly_income": income}
    [outcome] = [o for o in own(answers, date(2030, 6, 1))["property_tax"].outcomes
                 if o.rule == "income_within_county_threshold"]
    assert outcome.status is status
    assert "at least $101,000" in outcome.verdict.reason and "(from January 1, 2030)" in outcome.verdict.reason
    assert bool(outcome.verdict.figure_missing) is missing
    if missing:
        assert "not on file" in outcome.verdict.figure_missing


def test_after_the_floor_cycle_the_property_tax_figure_is_not_on_file_and_a_notice_says_so():
    result = report(BASE, date(2033, 6, 1))
    assert any("property tax exemption income limit" in n and "not on file" in n for n in result.notices)
    assert own(BASE, date(2033, 6, 1))["property_tax"].classification is P


# ---- C1 ------------------------------------------------------------------------------------------------------------

def _extra_help_card(answers: dict, on: date = date(2026, 6, 1)):
    return {c.program: c for c in report(answers, on).cards}["extra_help"]


@pytest.mark.parametrize("answers", [
    {**BASE, "extra_help": "yes"},                                                        # 093
    {**BASE, "extra_help": "yes", "monthly_income": "8000+", "assets": "250000+"},          # 087
    {**BASE, "extra_help": "yes", "age": 62, "disability": "yes", "medicare_parts": ["B", "D"]},   # 104
])
def test_already_enrolled_in_extra_help_says_so_and_claims_no_limit_met(answers):
    card = _extra_help_card(answers)
    said = card.summary + " " + " ".join(card.why)
    assert "already enrolled in Extra Help" in said.lower() or "Already enrolled in Extra Help" in said
    assert "Apple Health or a Medicare Savings Program" not in said
    assert "automatic through" not in said
    assert "Income within the Extra Help limit" not in card.summary
    assert "Resources within the Extra Help limit" not in card.summary
    assert card.summary.count("Already enrolled in Extra Help") == 1


def test_extra_help_enrolment_far_above_its_own_limits_is_a_check_notice():
    high = {**BASE, "extra_help": "yes", "monthly_income": "8000+", "assets": "250000+"}
    warnings = report(high, date(2026, 6, 1)).warnings
    [notice] = [w for w in warnings if "already getting Extra Help" in w]
    assert "$2,015" in notice and "$18,090" in notice and "Please check" in notice
    # within the limits, or through Apple Health / an MSP (which confer it whatever the income), no notice
    assert not [w for w in report({**BASE, "extra_help": "yes"}, date(2026, 6, 1)).warnings if "Extra Help" in w]
    deemed = {**high, "apple_health": "medically_needy"}
    assert not [w for w in report(deemed, date(2026, 6, 1)).warnings if "already getting Extra Help" in w]
    # household income that covers more people than the couple decides nothing about the enrolment
    larger = {**high, "household_size": 3, "assets": "0-2000"}
    assert not [w for w in report(larger, date(2026, 6, 1)).warnings if "already getting Extra Help" in w]


@pytest.mark.parametrize(("apple_health", "words"), [("categorically_needy", "categorically needy Apple Health"),
                                                     ("medically_needy", "medically needy Apple Health"),
                                                     ("msp_only", "a Medicare Savings Program")])
def test_deemed_extra_help_names_the_program_that_confers_it(apple_health, words):
    card = _extra_help_card({**BASE, "apple_health": apple_health, "extra_help": "no", "monthly_income": "2200-2351"})
    assert f"automatic through {words}" in " ".join(card.why)
    assert "Apple Health or a Medicare Savings Program" not in card.summary + " ".join(card.why)
    assert "Income within the Extra Help limit" not in card.summary


# ---- E1 ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("field", "given", "plain"), [("adl_help", ["none"], "none"),
                                                       ("medicare_parts", ["none"], "none"),
                                                       ("medicare_parts", ["dont_know"], "dont_know"),
                                                       ("adl_help", ["prefer_not_to_say"], "prefer_not_to_say")])
def test_a_list_holding_only_a_plain_answer_is_that_answer(field, given, plain):
    assert getattr(parse_answers({field: given}), field) == plain


@pytest.mark.parametrize(("field", "given", "example"), [
    ("adl_help", ["bathing", "none"], '["bathing", "dressing"]'),
    ("medicare_parts", ["A", "none"], '["A", "B"]'),
    ("medicare_parts", ["none", "dont_know"], '["A", "B"]'),
    ("adl_help", ["dont_know", "eating"], '["bathing", "dressing"]'),
])
def test_a_plain_answer_mixed_with_items_says_it_must_be_given_alone_and_the_forms_accepted(field, given, example):
    with pytest.raises(ConfigError) as info:
        parse_answers({field: given})
    said = str(info.value)
    assert f"{field}:" in said and "must be given alone" in said and example in said and "the plain answer" in said
    assert "item 1" not in said and "item 2" not in said


def test_the_screen_form_keeps_activities_ticked_beside_none_of_these_and_asks_to_choose():
    from streamlit.testing.v1 import AppTest
    page = str(Path(__file__).resolve().parents[2] / "views" / "screen.py")
    at = AppTest.from_file(page, default_timeout=60)
    at.query_params.update({"age": "80", "adl_help": "bathing,none"})
    at = at.run()
    assert not at.exception
    assert set(at.multiselect(key="q_adl_help").value) == {"bathing", "none"}     # nothing dropped
    errors = " ".join(e.value for e in at.error)
    assert "cannot be chosen together" in errors and "must be given alone" in errors
    assert not at.subheader                                                        # not screened as "needs no help"
