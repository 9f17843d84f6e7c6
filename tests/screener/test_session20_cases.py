"""Classes an eighteenth probing round found (session 20, /tmp/probe_screen18), each a class of intakes or dates:

W1  Extra Help's 2026 resource limit is CMS's CY2026 $16,590 / $33,100 plus the $1,500 / $3,000 burial exclusion
    ($18,090 / $36,100, POMS HI 03030.025), carried as the 2027-2028 floors; the asset brackets' edges follow it.
F2  VA basic MAPR from 2024-12-01, no dependents: $16,965 (the 12/2023 $16,551 x 1.025; 90 FR 13666).
F3  Extra Help's income limits change on the poverty guidelines' effective date (2025-01-15, 2026-01-13), not Jan 1.
W4  Under 19, Apple Health for Kids (WAC 182-505-0210) is not judged: Apple Health is left open, never excluded.
C2  VA pension with the veteran status unknown asks it first; Aid & Attendance is never "met" with daily help unknown.
C4  FCSP with a caregiver under 18: Title III-E's family caregiver is an adult (42 U.S.C. 3030s); left open.
C3  MAC and TSOA cards say they are alternatives (WAC 182-513-1615).
C1  The summary table's "Why" for a likely result names the income test (else the financial or first criterion).

Figures from data/programs (resources.toml, va_pension.toml, fpl_based.toml, ages.toml) and programs.md.
"""
from __future__ import annotations

import math
from datetime import date, timedelta

import pytest

from carenav_core.errors import ConfigError
from carenav_core.screener.assemble import run_screen
from carenav_core.screener.engine import Classification, own_results, screen
from carenav_core.screener.intake import Bracket, choices, load_intake_options
from carenav_core.screener.profile import normalize
from carenav_core.screener.rules.base import Status, at_or_below
from carenav_core.screener.thresholds import ThresholdNotInForce, load_thresholds

L, P, X = Classification.LIKELY, Classification.POSSIBLY, Classification.EXCLUDED
ON = date(2026, 12, 3)
T = load_thresholds()
# 009 / 084: myself, 70, single, Medicare A and B, no help with daily activities (no long-term-care route)
SINGLE = {"screening_for": "myself", "age": 70, "county": "King", "household_size": 1, "marital_status": "single",
          "monthly_income": "1883-1956", "assets": "0-2000", "medicare_parts": ["A", "B"], "apple_health": "none",
          "extra_help": "no", "disability": "no", "veteran_status": "no", "adl_help": "none",
          "nursing_facility_level_of_care": "not_assessed", "living_situation": "own_home",
          "has_unpaid_caregiver": "no", "caring_for_someone": "no", "pays_for_heating": "yes"}
# 010: the same, married and living together; $2,556-$2,608 is over the couple's QI-1 ($2,489 + $20) and under Extra
# Help's couple limit ($2,705 + $20)
COUPLE = {**SINGLE, "household_size": 2, "marital_status": "married", "monthly_income": "2556-2608"}


def own(answers: dict, on: date = ON) -> dict:
    return own_results(screen(normalize(answers), on=on))


def report(answers: dict, on: date = ON):
    return run_screen(normalize(answers), on=on, search=None)


def bracket(lower: int, upper: int | None) -> Bracket:
    return Bracket(key=f"{lower}-{upper}", lower=lower, upper=upper, sliver=100, unit="USD")


def rows(answers: dict, on: date = ON) -> dict[str, str]:
    return {r.program: r.why for r in report(answers, on).summary}


# ---- W1. Extra Help resources: CY2026 $18,090 / $36,100, and the floors and brackets built on them

@pytest.mark.parametrize("on", [date(2026, 1, 1), date(2026, 6, 30), date(2026, 12, 31)])
def test_the_2026_extra_help_resource_limit_is_the_cms_figure_plus_burial(on):
    single = T.for_unit("extra_help_resources", on, married=False)
    couple = T.for_unit("extra_help_resources", on, married=True)
    assert (single.amount, couple.amount) == (16590 + 1500, 33100 + 3000)
    assert not single.at_least and single.effective == date(2026, 1, 1)


@pytest.mark.parametrize(("on", "steps"), [(date(2027, 1, 1), 1), (date(2027, 12, 31), 1), (date(2028, 6, 1), 2)])
def test_the_2027_and_2028_floors_carry_the_2026_figure(on, steps):
    for married, figure in ((False, 18090), (True, 36100)):
        floor = T.for_unit("extra_help_resources", on, married=married)
        assert floor.at_least and floor.amount == figure and floor.index_steps == steps


@pytest.mark.parametrize(("married", "lower", "upper", "status"), [
    (False, 17991, 35130, Status.UNKNOWN),   # 009's range: straddles $18,090 (it was "whole range above $17,990")
    (False, 17601, 18090, Status.PASS), (False, 18090, 18090, Status.PASS), (False, 18091, 35130, Status.FAIL),
    (True, 35901, 53100, Status.UNKNOWN),    # 010's range: straddles $36,100
    (True, 35131, 36100, Status.PASS), (True, 36100, 36100, Status.PASS), (True, 36101, 53100, Status.FAIL)])
def test_ranges_against_the_2026_limit_pass_fail_or_straddle(married, lower, upper, status):
    limit = T.for_unit("extra_help_resources", date(2026, 12, 3), married=married)
    assert at_or_below(bracket(lower, upper), limit, "countable assets").status is status


@pytest.mark.parametrize("on", [date(2026, 1, 2), date(2026, 6, 1), ON])
@pytest.mark.parametrize(("answers", "assets", "expected"), [
    (SINGLE, "17601-18090", L), (SINGLE, "18091-35130", X), (COUPLE, "35131-36100", L), (COUPLE, "36101-53100", X)])
def test_extra_help_over_qi1_is_decided_by_the_new_asset_edge(on, answers, assets, expected):
    """No MSP over QI-1 and no long-term-care route (no help with daily activities): the LIS resource limit decides."""
    found = own({**answers, "assets": assets}, on)
    assert found["msp"].classification is X
    assert found["extra_help"].classification is expected
    shown = "$36,100" if answers is COUPLE else "$18,090"
    assert any(shown in o.verdict.reason for o in found["extra_help"].outcomes if o.rule == "resources_within_lis_limit")


def test_in_2025_the_range_up_to_18090_is_over_the_2025_limit():
    assert own({**SINGLE, "assets": "17601-18090"}, date(2025, 6, 1))["extra_help"].classification is X


@pytest.mark.parametrize("on", [date(2027, 2, 1), date(2028, 2, 1)])
def test_under_the_floor_extra_help_still_passes_and_above_it_stays_open(on):
    assert own({**SINGLE, "monthly_income": "0-999", "medicare_parts": ["A", "B"], "assets": "17601-18090"},
               on)["extra_help"].classification is L
    outcome = next(o for o in own({**SINGLE, "assets": "18091-35130"}, on)["extra_help"].outcomes
                   if o.rule == "resources_within_lis_limit")
    assert outcome.status is not Status.FAIL


def test_the_asset_brackets_start_a_dollar_above_each_extra_help_limit_through_2028():
    starts = {b.lower for b in load_intake_options().asset_brackets}
    assert {18091, 36101} <= starts and not {17991, 35901} & starts
    day = date(2025, 1, 1)
    while day <= date(2028, 12, 31):
        for married in (False, True):
            limit = T.for_unit("extra_help_resources", day, married=married).amount
            assert math.floor(limit) + 1 in starts, (day, married, limit)
        day += timedelta(days=61)


@pytest.mark.parametrize("married, key", [(False, "17991-35130"), (True, "35901-53100")])
def test_an_earlier_bracket_from_a_saved_link_is_read_as_its_range_and_not_offered(married, key):
    """The brackets built on the first-filed limits are still read (a saved answer or shared link): judged as the
    range they are, which now straddles the limit, so the result stays open; the form never offers them."""
    answers = {**(COUPLE if married else SINGLE), "assets": key}
    assert own(answers)["extra_help"].classification is Classification.POSSIBLY
    assert key not in choices("assets")


def test_a_bracket_key_never_filed_is_refused_with_the_field_named():
    with pytest.raises(ConfigError, match="assets: '17991-35000' is not a known asset bracket.*'18091-35130'"):
        normalize({**SINGLE, "assets": "17991-35000"})


# ---- F2. VA basic MAPR from 2024-12-01: $16,965 for a veteran with no dependents

@pytest.mark.parametrize("on", [date(2024, 12, 1), date(2025, 3, 1), date(2025, 6, 1), date(2025, 11, 30)])
def test_the_12_2024_basic_mapr_is_16965_and_22216(on):
    assert T.for_size("va_mapr_basic", on, 1).amount == 16965
    assert T.for_size("va_mapr_basic", on, 2).amount == 22216


def test_the_12_2024_figures_are_the_12_2023_rates_with_the_cola_and_lead_to_the_12_2025_ones():
    """90 FR 13666: +2.5% from 2024-12-01 on the 12/2023 $16,551 / $21,674; VA's 12/2025 rates are these x 1.028,
    rounded up as VA rounds."""
    for size, before in ((1, 16551), (2, 21674)):
        figure = T.for_size("va_mapr_basic", date(2025, 6, 1), size).amount
        assert figure == math.ceil(before * 1.025)
        assert T.for_size("va_mapr_basic", date(2025, 12, 1), size).amount == math.ceil(figure * 1.028)


@pytest.mark.parametrize("on", [date(2025, 3, 1), date(2025, 6, 1)])
def test_a_veteran_card_shows_16965_in_2025(on):
    veteran = {**SINGLE, "veteran_status": "veteran", "wartime_service": "yes", "monthly_income": "1300-1499"}
    reasons = [o.verdict.reason for o in own(veteran, on)["va_pension"].outcomes if o.rule == "income_below_mapr"]
    assert "$16,965 a year (from December 1, 2024)" in reasons[0] and "16,956" not in reasons[0]


# ---- F3. Extra Help income: the poverty guidelines' effective date, not January 1

@pytest.mark.parametrize(("on", "single", "couple"), [
    # 150% of the 2025 guidelines ($23,475 / $31,725 a year) / 12 to the cent (session 22; was $1,956 / $2,644)
    (date(2025, 1, 15), 1956.25, 2643.75), (date(2025, 12, 31), 1956.25, 2643.75), (date(2026, 1, 1), 1956.25, 2643.75),
    (date(2026, 1, 12), 1956.25, 2643.75), (date(2026, 1, 13), 1995, 2705), (date(2026, 12, 31), 1995, 2705)])
def test_extra_help_income_changes_on_the_guidelines_effective_date(on, single, couple):
    assert T.for_unit("extra_help_income", on, married=False).amount == single
    assert T.for_unit("extra_help_income", on, married=True).amount == couple


def test_before_the_2025_guidelines_took_effect_the_figure_is_not_on_file():
    with pytest.raises(ThresholdNotInForce):
        T.for_unit("extra_help_income", date(2025, 1, 14), married=False)


@pytest.mark.parametrize(("answers", "income"), [(SINGLE, "1977-1995"), (COUPLE, "2706-2725")])
@pytest.mark.parametrize(("on", "expected"), [(date(2026, 1, 5), X), (date(2026, 1, 12), X), (date(2026, 1, 13), L),
                                              (date(2026, 2, 1), L)])
def test_084_income_between_the_2025_and_2026_limits_turns_on_january_13(answers, income, on, expected):
    found = own({**answers, "monthly_income": income}, on)["extra_help"]
    assert found.classification is expected, (on, [o.verdict.reason for o in found.outcomes])


def test_early_january_2025_is_open_not_decided_on_the_2025_figure():
    found = own({**SINGLE, "monthly_income": "1883-1956"}, date(2025, 1, 5))["extra_help"]
    assert found.classification is P and found.figures_missing


# ---- W4. Under 19: Apple Health for Kids is not judged, so Apple Health stays open

@pytest.mark.parametrize("age", [0, 5, 12, 17, 18])
@pytest.mark.parametrize(("income", "assets", "disability"), [("0-999", "0-2000", "no"), ("8000+", "250000+", "no"),
                                                               ("0-999", "2001-3000", "yes"),
                                                               ("3408-3525", "0-2000", "dont_know")])
def test_a_person_under_19_is_never_excluded_from_apple_health(age, income, assets, disability):
    answers = {**SINGLE, "age": age, "medicare_parts": "none", "monthly_income": income, "assets": assets,
               "disability": disability, "living_situation": "with_family"}
    found = own(answers)["apple_health"]
    assert found.classification is P
    assert all(o.status is Status.UNKNOWN and "Apple Health for Kids" in o.verdict.reason and
               "WAC 182-505-0210" in o.verdict.reason for o in found.outcomes)
    assert any("Apple Health for Kids" in n for n in found.needs)
    assert "none of the adult groups" not in " ".join(o.verdict.reason for o in found.outcomes)


def test_016_the_summary_row_says_the_childrens_group_is_not_judged():
    row = rows({**SINGLE, "age": 18, "medicare_parts": "none", "monthly_income": "0-999",
                "living_situation": "with_family"})["Apple Health (Washington Medicaid)"]
    assert "Apple Health for Kids" in row and "does not judge" in row


@pytest.mark.parametrize(("age", "expected"), [(19, L), (64, L)])
def test_from_19_the_adult_groups_are_judged_as_before(age, expected):
    answers = {**SINGLE, "age": age, "medicare_parts": "none", "monthly_income": "0-999"}
    assert own(answers)["apple_health"].classification is expected


@pytest.mark.parametrize("age", ["dont_know", "prefer_not_to_say", None])
def test_an_unknown_age_keeps_apple_health_open_and_asks_the_age(age):
    answers = {**SINGLE, "age": age, "medicare_parts": "none", "monthly_income": "0-999"}
    found = own(answers)["apple_health"]
    assert found.classification is P and "age" in found.unknown_fields


def test_an_enrolled_child_keeps_the_enrolment():
    answers = {**SINGLE, "age": 12, "medicare_parts": "none", "apple_health": "categorically_needy"}
    assert own(answers)["apple_health"].classification is L


# ---- C2. VA pension: whether the person is a veteran is asked first; A&A is not "met" on unknown help

ALL_UNKNOWN = {k: "dont_know" for k in ("age", "household_size", "marital_status", "monthly_income", "assets",
                                        "medicare_parts", "apple_health", "extra_help", "disability", "veteran_status",
                                        "wartime_service", "adl_help", "nursing_facility_level_of_care",
                                        "living_situation", "has_unpaid_caregiver", "caring_for_someone",
                                        "pays_for_heating")}
# 046 / 048: a caregiver of 50, not a veteran, caring for a parent (whose veteran status is never asked)
CARER = {**SINGLE, "age": 50, "medicare_parts": "none", "monthly_income": "3408-3525", "caring_for_someone": "yes",
         "care_relationship": "parent", "care_recipient_age": 80}
VA_ROW = "VA pension with Aid & Attendance / Housebound"


@pytest.mark.parametrize(("answers", "row"), [(ALL_UNKNOWN, VA_ROW), ({}, VA_ROW),
                                              (CARER, VA_ROW + " — for the person they care for"),
                                              ({**CARER, "care_recipient_age": "dont_know"},
                                               VA_ROW + " — for the person they care for")])
def test_the_first_open_va_question_is_whether_they_are_a_veteran(answers, row):
    why = rows(answers)[row]
    assert why.startswith("not known yet: whether they are a veteran or a veteran's surviving spouse"), why


@pytest.mark.parametrize("answers", [ALL_UNKNOWN, {}, CARER, {**SINGLE, "veteran_status": "veteran",
                                                              "wartime_service": "yes", "adl_help": "dont_know"}])
def test_aid_and_attendance_is_never_met_while_daily_help_is_unknown(answers):
    results = screen(normalize(answers), on=ON)
    for result in (r for r in results if r.program.key == "va_pension"):
        aa = next(o for o in result.outcomes if o.rule == "needs_aid_and_attendance")
        assert aa.status is Status.UNKNOWN and "adl_help" in aa.verdict.unknown_fields
    card = next(c for c in report(answers).cards if c.program == "va_pension")
    assert "Aid & Attendance need shown" not in card.summary.split("Still open")[0]


@pytest.mark.parametrize(("adl", "status"), [("none", Status.PASS), (["walking"], Status.PASS),
                                             (["bathing"], Status.PASS)])
def test_an_answered_daily_help_still_settles_the_aid_and_attendance_criterion(adl, status):
    veteran = {**SINGLE, "veteran_status": "veteran", "wartime_service": "yes", "adl_help": adl}
    aa = next(o for o in own(veteran)["va_pension"].outcomes if o.rule == "needs_aid_and_attendance")
    assert aa.status is status


def test_a_known_veteran_with_unknown_service_is_asked_the_service():
    found = own({**SINGLE, "veteran_status": "veteran", "wartime_service": "dont_know"})["va_pension"]
    wartime = next(o for o in found.outcomes if o.rule == "wartime_service")
    assert wartime.verdict.reason == "not known yet: whether the veteran served during a wartime period"


# ---- C4. FCSP: a caregiver under 18 is not passed (Title III-E's family caregiver is an adult)

# 049: someone mode, a woman of 85 at nursing-facility level of care, on CN Apple Health, her caregiver answering
N049 = {**SINGLE, "screening_for": "someone_i_care_for", "age": 85, "monthly_income": "0-999",
        "apple_health": "categorically_needy", "adl_help": ["bathing", "dressing"],
        "nursing_facility_level_of_care": "assessed_yes", "has_unpaid_caregiver": "yes"}


@pytest.mark.parametrize("caregiver", [12, 16, 17])
def test_a_minor_answering_caregiver_leaves_fcsp_open_and_mac_excluded(caregiver):
    found = own({**N049, "caregiver_age": caregiver})
    assert found["fcsp"].classification is P
    open_ = next(o for o in found["fcsp"].outcomes if o.rule == "unpaid_caregiver_involved")
    assert f"the caregiver is {caregiver}" in open_.verdict.reason and "42 U.S.C. 3030s" in open_.verdict.reason
    assert any("under 18" in n for n in found["fcsp"].needs)
    assert found["mac"].classification is X


@pytest.mark.parametrize("caregiver", [18, 30, 70, "dont_know", None])
def test_an_adult_or_unasked_caregiver_age_keeps_fcsp_likely(caregiver):
    assert own({**N049, "caregiver_age": caregiver})["fcsp"].classification is L


@pytest.mark.parametrize(("age", "expected"), [(16, P), (17, P), (18, L), (45, L)])
def test_a_person_screened_who_cares_for_an_adult_is_judged_on_their_own_age(age, expected):
    carer = {**SINGLE, "age": age, "medicare_parts": "none", "monthly_income": "0-999", "caring_for_someone": "yes",
             "care_relationship": "parent", "care_recipient_age": 80, "living_situation": "with_family"}
    assert own(carer)["fcsp"].classification is expected


# ---- C3. MAC and TSOA: both cards say they are alternatives

# 023: myself, 55, no Medicare, MAGI-eligible, assessed at nursing-facility level of care, an unpaid caregiver
A023 = {**SINGLE, "age": 55, "medicare_parts": "none", "monthly_income": "1300-1499",
        "adl_help": ["bathing", "dressing"], "nursing_facility_level_of_care": "assessed_yes",
        "has_unpaid_caregiver": "yes"}
A086 = {**A023, "screening_for": "someone_i_care_for", "age": 58, "monthly_income": "1000-1299", "caregiver_age": 30,
        "adl_help": ["bathing", "toileting"]}


@pytest.mark.parametrize("answers", [A023, A086, {**A023, "age": 62}], ids=["023", "086", "62"])
def test_mac_and_tsoa_both_likely_each_say_they_are_alternatives(answers):
    found = own(answers)
    assert found["mac"].classification is L and found["tsoa"].classification is L
    cards = {c.program: c for c in report(answers).cards}
    for key in ("mac", "tsoa"):
        said = " ".join(cards[key].why)
        assert "alternatives" in said and "WAC 182-513-1615" in said and "not receiving" in said, key


def test_on_categorically_needy_apple_health_tsoa_is_excluded_and_mac_still_says_so():
    found = own({**A023, "apple_health": "categorically_needy"})
    assert found["tsoa"].classification is X and found["mac"].classification is L
    assert any("alternatives" in o.verdict.reason for o in found["mac"].outcomes)


# ---- C1. The summary row of a likely result names what decided it

@pytest.mark.parametrize(("answers", "program", "says"), [
    ({**SINGLE, "age": 64, "medicare_parts": "none", "monthly_income": "1821-1836", "assets": "10001-17600"},
     "Apple Health (Washington Medicaid)", "$1,836 a month"),                      # 012
    ({**SINGLE, "age": 19, "medicare_parts": "none", "monthly_income": "0-999"},
     "Apple Health (Washington Medicaid)", "household income"),
    ({**SINGLE, "monthly_income": "1996-2015", "assets": "4501-10000"},
     "Extra Help (Medicare Part D Low-Income Subsidy)", "$2,015 a month"),          # 007
    (A023, "Tailored Supports for Older Adults (TSOA)", "gross income"),
    (A023, "Medicaid Alternative Care (MAC)", "Apple Health"),
    (A023, "Family Caregiver Support Program (FCSP), including respite", "unpaid caregiver"),
])
def test_a_likely_row_names_the_income_test_or_the_deciding_criterion(answers, program, says):
    row = rows(answers)
    assert program in row, sorted(row)
    assert says in row[program] and "no asset test" not in row[program], row[program]


def test_a_likely_row_is_never_the_asset_test_when_an_income_test_was_met():
    for answers in (A023, A086, {**SINGLE, "monthly_income": "1996-2015", "assets": "4501-10000"}):
        shown = report(answers)
        for row, card in zip(shown.summary, shown.cards):
            if card.classification == "likely_relevant" and card.deciding:
                assert row.why == card.deciding
                assert "asset" not in row.why.split(" vs ")[0] or "income" in row.why


def test_under_the_basic_rate_unknown_daily_help_leaves_the_basic_pension_likely():
    """(review) The basic pension needs no help with daily activities: with income under its rate the A&A criterion
    is met through it, as session 15b chose; only when the income test needs the higher rate is it left open."""
    veteran = {**SINGLE, "veteran_status": "veteran", "wartime_service": "yes", "adl_help": "dont_know",
               "monthly_income": "0-999"}
    found = own(veteran)["va_pension"]
    aa = next(o for o in found.outcomes if o.rule == "needs_aid_and_attendance")
    assert aa.status is Status.PASS and "not needed" in aa.verdict.reason
    assert found.classification is L
