"""Classes a ninth probing round found (session 16, /tmp/probe_screen9), each a class of intakes: spousal
impoverishment has a floor (the state spousal resource standard plus the institutionalized spouse's $2,000), Extra Help
follows a likely Apple Health, an answer that would not change a result is not asked (marriage, county), Extra Help
asks the savings only when no likely Medicare Savings Program confers it, Apple Health asks the disability its
SSI-related route rests on, contradictory answers are flagged, and notices name the figure they print.

Figures are read from data/programs (programs.md: section 1c rows 12 and 15, section 6, section 7 row 2, section 11).
"""
from __future__ import annotations

import math
import re
from datetime import date
from itertools import product

import pytest

from carenav_core.screener.engine import Classification, screen
from carenav_core.screener.intake import Bracket, load_intake_options
from carenav_core.screener.profile import Profile, Unknown, answer_warnings
from carenav_core.screener.rules.base import Status, Verdict, settled_either_way, verdict
from carenav_core.screener.thresholds import load_thresholds
from tests.screener.conftest import context, profile, run_rule, with_fields

L, P, X = Classification.LIKELY, Classification.POSSIBLY, Classification.EXCLUDED
ON = date(2026, 12, 3)
T = load_thresholds()
OPTIONS = load_intake_options()
COUPLE_LTC = {"age": 80, "county": "Whatcom", "household_size": 2, "marital_status": "married",
              "monthly_income": "2200-2351", "medicare_parts": ["A", "B", "D"], "apple_health": "none",
              "extra_help": "no", "disability": "no", "veteran_status": "no", "living_situation": "own_home",
              "adl_help": ["bathing", "dressing"], "nursing_facility_level_of_care": "assessed_yes",
              "has_unpaid_caregiver": "yes", "caring_for_someone": "no", "screening_for": "myself"}
SINGLE = {"age": 70, "county": "Yakima", "household_size": 1, "marital_status": "single", "monthly_income": "1000-1299",
          "assets": "0-2000", "medicare_parts": ["A", "B", "D"], "apple_health": "none", "extra_help": "no",
          "disability": "no", "veteran_status": "no", "living_situation": "rented_home", "adl_help": "none",
          "nursing_facility_level_of_care": "not_assessed", "has_unpaid_caregiver": "no", "caring_for_someone": "no",
          "screening_for": "myself", "pays_for_heating": "yes"}


def results(on: date = ON, **answers) -> dict:
    return {r.program.key: r for r in screen(profile(**answers), on=on)}


def reasons(result) -> str:
    return " ".join(o.verdict.reason for o in result.outcomes)


def bracket(lower: int, upper: int | None) -> Bracket:
    return Bracket(key="t", lower=lower, upper=upper, sliver=10, unit="test")


def intake_brackets(kind: str, low: float, high: float) -> list[str]:
    """Intake bracket keys wholly within [low, high] (monthly dollars); `high` may be infinite."""
    found = OPTIONS.income_brackets if kind == "income" else OPTIONS.asset_brackets
    return [b.key for b in found if b.lower >= low and (b.upper if b.upper is not None else math.inf) <= high]


# ---- A. Spousal impoverishment: at or under the state standard plus $2,000 the resource test passes

def spousal_floor(on: date) -> float:
    return T.amount("spousal_csra_state_standard", on).amount + T.for_unit("ltc_resources", on, married=False).amount


def spousal_ceiling(on: date) -> float:
    return T.amount("spousal_csra_federal_max", on).amount + T.for_unit("ltc_resources", on, married=False).amount


def test_the_floor_is_the_state_standard_of_programs_md_plus_the_2000_standard():
    # programs.md section 1c row 15: state CSRA $72,529 from 2025-07-01; row 12: $2,000 for the spouse needing care
    state = T.amount("spousal_csra_state_standard", date(2025, 7, 1))
    assert state.amount == 72529 and not state.at_least
    assert T.amount("spousal_csra_state_standard", date(2026, 7, 1)).at_least      # next July 1 figure not seen
    assert spousal_floor(date(2025, 7, 1)) == 74529


@pytest.mark.parametrize("on", [date(2025, 7, 1), date(2026, 6, 30), date(2026, 7, 1), ON, date(2027, 8, 1)])
@pytest.mark.parametrize(("program", "rule"), [("copes", "resources_within_ltc_standard"),
                                               ("apple_health", "resources_within_limit")])
@pytest.mark.parametrize("setting", ["own_home", "nursing_facility", "adult_family_home"])
def test_the_spousal_floor_decides_a_pass_and_only_a_pass(on, program, rule, setting):
    floor, ceiling = int(spousal_floor(on)), int(spousal_ceiling(on))
    person = profile(**{**COUPLE_LTC, "living_situation": setting})
    for lower, upper, expected in [(3001, floor, Status.PASS), (floor - 1000, floor - 1, Status.PASS),
                                   (floor, floor + 1, Status.UNKNOWN), (floor + 1, floor + 1000, Status.UNKNOWN),
                                   (floor + 1, ceiling, Status.UNKNOWN)]:
        outcome = run_rule(program, rule, with_fields(person, assets=bracket(lower, upper)), on)
        assert outcome.status is expected, (lower, upper, outcome.verdict.reason)
        if expected is Status.PASS:
            assert "state spousal resource standard" in outcome.verdict.reason
            assert any(t.key == "spousal_csra_state_standard" for t in outcome.verdict.thresholds)
        else:
            assert "protected resource amount" in outcome.verdict.reason


@pytest.mark.parametrize("on", [date(2025, 6, 30), date(2028, 7, 1)])
def test_without_a_state_standard_on_file_the_protected_amount_is_still_asked(on):
    person = with_fields(profile(**COUPLE_LTC), assets=bracket(3001, 4500))
    outcome = run_rule("copes", "resources_within_ltc_standard", person, on)
    assert outcome.status is Status.UNKNOWN, outcome.verdict.reason


def floor_brackets(on: date = ON) -> list[str]:
    return intake_brackets("assets", 3001, spousal_floor(on))


def straddling_floor(on: date = ON) -> list[str]:
    floor = spousal_floor(on)
    return [b.key for b in OPTIONS.asset_brackets if b.upper is not None and b.lower <= floor < b.upper]


@pytest.mark.parametrize("assets", floor_brackets())
@pytest.mark.parametrize("who", ["myself", "spouse_screening"])
def test_copes_is_likely_for_a_married_couple_within_the_floor(assets, who):
    answers = {**COUPLE_LTC, "assets": assets}
    if who == "spouse_screening":      # c05: the wife screening her husband
        answers.update(screening_for="someone_i_care_for", caregiver_age=72, care_relationship="spouse", age=79)
    found = results(**answers)
    assert found["copes"].classification is L, reasons(found["copes"])


@pytest.mark.parametrize("assets", straddling_floor() + intake_brackets("assets", spousal_floor(ON) + 1,
                                                                         spousal_ceiling(ON)))
def test_copes_stays_possibly_above_the_floor_and_under_the_ceiling(assets):
    found = results(**{**COUPLE_LTC, "assets": assets})["copes"]
    assert found.classification is P, reasons(found)


@pytest.mark.parametrize(("assets", "expected"), [(a, L) for a in floor_brackets()] +
                         [(a, P) for a in straddling_floor()])
def test_a_married_nursing_facility_resident_within_the_floor_is_likely_for_apple_health(assets, expected):
    # n01: the wife in a nursing facility, income within the special income level (her own, a household of two)
    sil = T.amount("special_income_level", ON).amount
    income = intake_brackets("income", T.for_unit("apple_health_cn_income", ON, married=False).amount + 1, sil)[0]
    found = results(**{**COUPLE_LTC, "age": 84, "living_situation": "nursing_facility", "monthly_income": income,
                       "assets": assets})
    assert found["apple_health"].classification is expected, reasons(found["apple_health"])


@pytest.mark.parametrize("assets", floor_brackets()[:3])
def test_within_the_floor_an_assessment_not_yet_made_is_still_asked(assets):
    # spousal protections apply once long-term care is the route: with help needed and no assessment, Apple Health
    # (income within the couple's CN limit) stays possibly and asks for the assessment
    found = results(**{**COUPLE_LTC, "monthly_income": "1000-1299", "nursing_facility_level_of_care": "not_assessed",
                       "assets": assets})["apple_health"]
    assert found.classification is P and "nursing_facility_level_of_care" in found.unknown_fields


@pytest.mark.parametrize("program", ["apple_health", "copes"])
def test_without_a_long_term_care_need_the_couples_figure_still_excludes(program):
    found = results(**{**COUPLE_LTC, "adl_help": "none", "nursing_facility_level_of_care": "not_assessed",
                       "has_unpaid_caregiver": "no", "assets": floor_brackets()[0]})[program]
    assert found.classification is X, reasons(found)


# ---- B. Extra Help follows a likely Apple Health (full Medicaid confers it: programs.md section 7 row 2)

def nursing_facility_incomes() -> list[str]:
    """Incomes above Extra Help's single gross limit and within the special income level."""
    gross = T.for_unit("extra_help_income", ON, married=False).amount + \
        T.amount("ssi_general_income_disregard", ON).amount
    return intake_brackets("income", gross + 1, T.amount("special_income_level", ON).amount)


@pytest.mark.parametrize("income", nursing_facility_incomes())
@pytest.mark.parametrize("veteran", ["no", "veteran"])
def test_extra_help_is_likely_when_apple_health_is_likely_in_a_nursing_facility(income, veteran):
    found = results(**{**SINGLE, "age": 88, "county": "Pierce", "living_situation": "nursing_facility",
                       "monthly_income": income, "veteran_status": veteran, "wartime_service": "yes",
                       "adl_help": ["bathing"], "nursing_facility_level_of_care": "assessed_yes"})
    assert found["apple_health"].classification is L
    assert found["extra_help"].classification is L, reasons(found["extra_help"])
    assert "full Medicaid confers Extra Help" in reasons(found["extra_help"])


@pytest.mark.parametrize(("answers", "apple_health"), [
    ({"assets": "2001-3000"}, X),                                    # over the $2,000: no Apple Health
    ({"monthly_income": "2983-3407"}, P),                            # over the special income level: spend-down only
])
def test_extra_help_does_not_follow_an_apple_health_that_is_not_likely(answers, apple_health):
    found = results(**{**SINGLE, "age": 88, "living_situation": "nursing_facility", "monthly_income": "2200-2351",
                       "adl_help": ["bathing"], "nursing_facility_level_of_care": "assessed_yes", **answers})
    assert found["apple_health"].classification is apple_health
    assert found["extra_help"].classification is not L, reasons(found["extra_help"])


# ---- C. An answer that would not change the result is not asked (marriage unknown)

WIDOW = {**SINGLE, "age": 82, "marital_status": "dont_know"}


@pytest.mark.parametrize("marital", ["dont_know", "prefer_not_to_say"])
@pytest.mark.parametrize(("assets", "expected", "asked"), [
    ("10001-17600", X, False),          # over $2,000 single and $3,000 married (no long-term care need): excluded
    ("3001-4500", X, False),
    ("2001-3000", P, True),             # over $2,000, within $3,000: the marriage decides
])
def test_copes_decides_without_the_marriage_when_both_answers_agree(marital, assets, expected, asked):
    found = results(**{**WIDOW, "marital_status": marital, "assets": assets})["copes"]
    assert found.classification is expected, reasons(found)
    assert ("married" in found.unknown_fields) is asked


def test_with_a_long_term_care_need_the_marriage_is_still_asked_when_it_decides():
    found = results(**{**WIDOW, "assets": "10001-17600", "adl_help": ["bathing"],
                       "nursing_facility_level_of_care": "assessed_yes", "has_unpaid_caregiver": "yes"})["copes"]
    assert found.classification is P and "married" in found.unknown_fields    # married: within the spousal floor


def _anyone() -> Profile:
    return Profile(**{name: Unknown(reason="unanswered") for name in Profile.__dataclass_fields__})


@pytest.mark.parametrize(("check", "expected"), [
    (lambda p, c: verdict(False, "over"), Status.FAIL),
    (lambda p, c: verdict(True, "under"), Status.PASS),
    (lambda p, c: verdict(p.married is True or p.disability is True, "depends"), Status.UNKNOWN),
    (lambda p, c: Verdict(status=Status.UNKNOWN, reason="still open"), Status.UNKNOWN),
])
@pytest.mark.parametrize("fields", [("married",), ("disability",), ("married", "disability")])
def test_an_open_result_is_decided_only_when_every_value_of_the_answers_agrees(check, expected, fields):
    open_ = Verdict(status=Status.UNKNOWN, reason="not known yet", unknown_fields=fields)
    assert settled_either_way(check, _anyone(), context(), open_).status is expected


def test_answers_with_many_values_are_not_enumerated():
    open_ = Verdict(status=Status.UNKNOWN, reason="not known yet", unknown_fields=("married", "household_size"))
    assert settled_either_way(lambda p, c: verdict(False, "over"), _anyone(), context(), open_) is open_


# ---- D. Savings unknown: a likely Medicare Savings Program (no resource test) confers Extra Help first

def qi1_gross(married: bool, on: date = ON) -> float:
    return T.for_unit("msp_qi1_income", on, married=married).amount + T.amount("ssi_general_income_disregard", on).amount


def eh_gross(married: bool, on: date = ON) -> float:
    return T.for_unit("extra_help_income", on, married=married).amount + \
        T.amount("ssi_general_income_disregard", on).amount


COUPLE = {**SINGLE, "age": 75, "household_size": 2, "marital_status": "married", "county": "Grays Harbor",
          "living_situation": "own_home"}


@pytest.mark.parametrize("assets", ["dont_know", "prefer_not_to_say", None])
@pytest.mark.parametrize(("answers", "married"), [(SINGLE, False), (COUPLE, True)])
def test_savings_unknown_extra_help_follows_a_likely_msp_and_asks_above_qi1(assets, answers, married):
    under = intake_brackets("income", 0, qi1_gross(married))
    between = intake_brackets("income", qi1_gross(married) + 1, eh_gross(married))
    for income, expected in [(under[-1], L), (under[0], L), (between[0], P), (between[-1], P)]:
        found = results(**{**answers, "assets": assets, "monthly_income": income})
        assert found["msp"].classification is (L if expected is L else X), income
        assert found["extra_help"].classification is expected, (income, reasons(found["extra_help"]))
        assert ("assets" in found["extra_help"].unknown_fields) is (expected is P)


# ---- E. County unknown: decided when the income is under every county's limit

def county_limits(on: date) -> tuple[float, float]:
    lowest, highest = T.county_extremes("property_tax_income_threshold_3", on)
    return lowest.amount, highest.amount


@pytest.mark.parametrize("on", [ON, date(2027, 1, 15)])
@pytest.mark.parametrize("county", ["dont_know", "prefer_not_to_say"])
def test_property_tax_asks_the_county_only_when_counties_differ(on, county):
    lowest, highest = county_limits(on)
    owner = {**SINGLE, "living_situation": "own_home", "county": county}
    for income in intake_brackets("income", 0, lowest / 12)[-2:]:
        found = results(on, **{**owner, "monthly_income": income})["property_tax"]
        assert found.classification is L, (income, reasons(found))
    straddling = [b.key for b in OPTIONS.income_brackets if b.upper is not None and b.lower * 12 <= lowest < b.upper * 12]
    for income in straddling + intake_brackets("income", lowest / 12 + 1, highest / 12)[:2]:
        found = results(on, **{**owner, "monthly_income": income})["property_tax"]
        assert found.classification is P and "county" in found.unknown_fields, income
    above = intake_brackets("income", highest / 12 + 1, math.inf)
    for income in above:     # above every county's: the deductions decide, not the county
        found = results(on, **{**owner, "monthly_income": income})["property_tax"]
        assert found.classification is P and "county" not in found.unknown_fields, income


def test_county_extremes_come_from_the_county_table():
    values = T.parameters["property_tax_income_threshold_3"].in_force(ON).by_county
    lowest, highest = T.county_extremes("property_tax_income_threshold_3", ON)
    assert lowest.amount == min(values.values()) and highest.amount == max(values.values())
    assert all(c in lowest.label for c, v in values.items() if v == lowest.amount)


# ---- F. Apple Health over the MAGI limit asks the disability its SSI-related route rests on

def magi_over(on: date = ON) -> list[str]:
    limit = T.for_size("apple_health_magi_income", on, 1).amount
    return intake_brackets("income", limit + 1, limit + 400)[:2]


@pytest.mark.parametrize("income", magi_over())
@pytest.mark.parametrize("age", [50, 64])
@pytest.mark.parametrize(("disability", "expected", "asked"), [
    ("dont_know", P, True), ("prefer_not_to_say", P, True), ("yes", P, False), ("no", X, False)])
def test_over_magi_the_disability_is_asked(income, age, disability, expected, asked):
    found = results(**{**SINGLE, "age": age, "medicare_parts": "none", "monthly_income": income,
                       "disability": disability})["apple_health"]
    assert found.classification is expected, reasons(found)
    assert ("disability" in found.unknown_fields) is asked


@pytest.mark.parametrize("disability", ["dont_know", "no"])
def test_under_magi_the_disability_is_not_asked(disability):
    limit = T.for_size("apple_health_magi_income", ON, 1).amount
    income = intake_brackets("income", 0, limit)[-1]
    found = results(**{**SINGLE, "age": 60, "medicare_parts": "none", "monthly_income": income,
                       "disability": disability})["apple_health"]
    assert found.classification is L


# ---- G. Contradictory answers are flagged

@pytest.mark.parametrize(("answers", "flagged"), [
    ({"marital_status": "single", "household_size": 2, "caring_for_someone": "yes", "care_relationship": "spouse",
      "care_recipient_age": 80}, True),
    ({"marital_status": "married", "household_size": 2, "caring_for_someone": "yes", "care_relationship": "spouse",
      "care_recipient_age": 80}, False),
    ({"marital_status": "single", "household_size": 2, "caring_for_someone": "yes", "care_relationship": "parent",
      "care_recipient_age": 90}, False),
])
def test_single_but_caring_for_a_spouse_is_flagged(answers, flagged):
    found = [w for w in answer_warnings(profile(**{**SINGLE, **answers})) if "spouses" in w]
    assert bool(found) is flagged


@pytest.mark.parametrize(("level", "flagged"), [("assessed_no", True), ("assessed_yes", False), ("not_assessed", False)])
def test_in_a_nursing_facility_but_not_at_that_level_of_care_is_flagged(level, flagged):
    answers = {**SINGLE, "living_situation": "nursing_facility", "nursing_facility_level_of_care": level}
    found = [w for w in answer_warnings(profile(**answers)) if "nursing-facility level of care" in w]
    assert bool(found) is flagged


# ---- H. A notice names the figure it prints (a countable limit plus the $20 disregard is the gross limit)

@pytest.mark.parametrize(("on", "program", "income", "key"), [
    (date(2027, 1, 1), "extra_help", "2016-2199", "extra_help_income"),       # dt07b: above the floor
    (date(2027, 6, 1), "msp", "1857-1882", "msp_qi1_income"),
])
def test_a_carried_gross_figure_says_it_includes_the_disregard(on, program, income, key):
    found = results(on, **{**SINGLE, "monthly_income": income})[program]
    label = T.parameters[key].label
    shown = T.for_unit(key, on, married=False).amount + T.amount("ssi_general_income_disregard", on).amount
    notices = [n for n in found.figures_missing if label in n]
    assert notices, found.figures_missing
    assert all("general income disregard" in n and f"${shown:,.0f}" in n for n in notices)


# ---- I. Tenth probing round (/tmp/probe_screen10): "what would change" is computed by re-running the program with the
# open answer set each way (branches.what_would_change), and an exclusion whose reason held only under one value of an
# unanswered disability is worded both ways (apple_health._magi_or_ssi_related)

from carenav_core.screener.branches import what_would_change  # noqa: E402
from carenav_core.screener.rules import PROGRAMS_BY_KEY  # noqa: E402
from carenav_core.screener.words import YES_NO_WORDS  # noqa: E402

B04 = {**SINGLE, "medicare_parts": ["B", "D"], "assets": "dont_know"}           # Part B and D only, savings unknown
E01 = {**SINGLE, "age": 55, "medicare_parts": "none", "disability": "dont_know", "monthly_income": "2016-2199"}
E02 = {**SINGLE, "age": 63, "marital_status": "married", "household_size": 2, "medicare_parts": "none",
       "disability": "prefer_not_to_say", "monthly_income": "2510-2555", "assets": "4501-10000"}
SAID = {L: "likely relevant", P: "still possibly relevant", X: "not likely to apply"}
# profile field: (intake answer, its yes, its no) — how a branch's value is answered on the intake
ANSWERED = {"disability": ("disability", "yes", "no"), "married": ("marital_status", "married", "single"),
            "nursing_facility_level_of_care": ("nursing_facility_level_of_care", "assessed_yes", "assessed_no"),
            "pays_for_heating": ("pays_for_heating", "yes", "no"), "caring_for_someone": ("caring_for_someone", "yes", "no"),
            "has_unpaid_caregiver": ("has_unpaid_caregiver", "yes", "no")}
BRACKET_LABELS = {b.label(): ("monthly_income", b.key) for b in OPTIONS.income_brackets} | \
                 {b.label(): ("assets", b.key) for b in OPTIONS.asset_brackets}


def change_line(answers: dict, program: str, rule: str, on: date = ON) -> str:
    person = profile(**answers)
    result = results(on, **answers)[program]
    lines = what_would_change(result, person, context(on))
    return lines[[o.rule for o in result.unknown_rules].index(rule)]


def yes_no_branches(fields: tuple[str, ...]) -> list[tuple[str, dict]]:
    """Each combination of the fields' answers: the words the card starts the branch with, and the intake answers."""
    found = []
    for combo in product(*((True, False) for _ in fields)):
        words = " and ".join(YES_NO_WORDS[f][0 if v else 1] for f, v in zip(fields, combo))
        answers = {ANSWERED[f][0]: ANSWERED[f][1 if v else 2] for f, v in zip(fields, combo)}
        found.append((f"If {words}: ", answers))
    return found


def amount_branches(line: str) -> list[tuple[str, dict]]:
    """The brackets a card's line names ("At $17,991 – $35,130: ..."), with the intake answer each stands for."""
    labels = re.findall(r"At (\$[0-9,]+ (?:– \$[0-9,]+|or more)(?: a month)?): ", line)
    return [(f"At {label}: ", dict([BRACKET_LABELS[label]])) for label in labels]


CLASS_1 = [   # (case, answers, program, open rule, open answers)
    ("b04", B04, "extra_help", "resources_within_lis_limit", ("assets",)),
    ("b04", B04, "apple_health", "resources_within_limit", ("assets",)),
    ("e01", E01, "apple_health", "income_within_cn_or_magi_limit", ("disability",)),
    ("e01", E01, "copes", "aged_65_or_disabled_adult", ("disability",)),
    ("b04", B04, "tsoa", "assessed_nursing_facility_level_of_care", ("nursing_facility_level_of_care",)),
    ("b04", B04, "tsoa", "resources_within_tsoa_standard", ("assets",)),
    ("b04", B04, "copes", "resources_within_ltc_standard", ("assets",)),
    ("pace", {**SINGLE, "county": "King"}, "pace", "assessed_nursing_facility_level_of_care",
     ("nursing_facility_level_of_care",)),
    ("heat", {**SINGLE, "pays_for_heating": "dont_know"}, "liheap", "pays_for_heating", ("pays_for_heating",)),
    ("fcsp", {**SINGLE, "caring_for_someone": "dont_know", "has_unpaid_caregiver": "dont_know"}, "fcsp",
     "unpaid_caregiver_involved", ("caring_for_someone", "has_unpaid_caregiver")),
]


@pytest.mark.parametrize(("case", "answers", "program", "rule", "fields"), CLASS_1, ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in CLASS_1])
def test_each_branch_of_what_would_change_is_the_program_re_run_with_that_answer(case, answers, program, rule, fields):
    line = change_line(answers, program, rule)
    assert "if met" not in line and "decides it" not in line, line
    found = yes_no_branches(fields) if fields[0] in ANSWERED else amount_branches(line)
    assert len(found) >= 2, line
    for words, answered in found:
        rerun = results(**{**answers, **answered})[program].classification
        assert f"{words}{SAID[rerun]}" in line, (words, rerun, line)


@pytest.mark.parametrize(("case", "answers", "program", "rule", "fields"),
                         [c for c in CLASS_1 if c[4] in (("assets",), ("monthly_income",))],
                         ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in CLASS_1 if c[4] in (("assets",), ("monthly_income",))])
def test_an_amount_is_run_at_a_bracket_meeting_the_criterion_and_one_above_it(case, answers, program, rule, fields):
    (_, met), (_, above) = amount_branches(change_line(answers, program, rule))
    rule_of = next(r for r in PROGRAMS_BY_KEY[program].rules if r.name == rule)
    at = {k: rule_of.evaluate(profile(**{**answers, **a}), context(ON)).status for k, a in (("met", met), ("above", above))}
    assert at == {"met": Status.PASS, "above": at["above"]} and at["above"] is not Status.PASS
    keys = [b.key for b in getattr(OPTIONS, "asset_brackets" if fields == ("assets",) else "income_brackets")]
    assert keys.index(met[fields[0]]) < keys.index(above[fields[0]])


def test_b04_savings_over_the_extra_help_limit_keep_it_possibly_through_the_msp():
    # the reader's b04 / g01: over $18,090 a QMB Medicare Savings Program still confers Extra Help (programs.md section 6)
    line = change_line(B04, "extra_help", "resources_within_lis_limit")
    over = T.for_unit("extra_help_resources", ON, married=False).amount
    g01 = results(**{**B04, "assets": "18091-35130"})["extra_help"]
    assert g01.classification is P and "At $18,091 – $35,130: still possibly relevant" in line
    assert "Medicare Savings Program" in line and f"${over + 1:,.0f}" in line
    assert "not likely to apply" not in line


def test_e01_a_disability_leaves_apple_health_possibly_with_the_spend_down_to_ask():
    # the reader's e01 / g05: income $2,016+ is over the CN limit, so a disabled applicant is medically needy at best
    line = change_line(E01, "apple_health", "income_within_cn_or_magi_limit")
    g05 = results(**{**E01, "disability": "yes"})["apple_health"]
    assert g05.classification is P and "monthly medical expenses" in " ".join(g05.needs)
    assert "If disabled: still possibly relevant; it would still ask: monthly medical expenses" in line
    assert "If not disabled: not likely to apply." in line
    assert "if disabled," not in reasons(g05)          # answered: the card no longer says "if disabled"


@pytest.mark.parametrize(("answers", "program", "rule"), [
    (B04, "msp", "medicare_part_a_or_extra_help"),                         # a fact the intake does not ask
    ({**SINGLE, "county": "dont_know"}, "pace", "lives_in_pace_service_area"),   # an answer that is not run
])
def test_an_answer_that_cannot_be_run_only_decides_the_criterion(answers, program, rule):
    line = change_line(answers, program, rule)
    assert line.endswith("decides this criterion.")
    assert not any(said in line for said in SAID.values())


# ---- Class 2: a working-age adult without Medicare over the MAGI limit, the disability not known

def test_e02_the_exclusion_says_what_excludes_each_reading():
    found = results(**E02)
    for program in ("apple_health", "mac"):
        failed = " ".join(o.verdict.reason for o in found[program].failed_rules)
        assert found[program].classification is X
        assert "if not disabled: household income $2,510 – $2,555" in failed and "no asset test" in failed, failed
        assert "if disabled: countable assets $4,501 – $10,000" in failed, failed


@pytest.mark.parametrize(("disability", "failed", "open_"), [
    ("dont_know", {"resources_within_limit"}, {"income_within_cn_or_magi_limit"}),
    ("prefer_not_to_say", {"resources_within_limit"}, {"income_within_cn_or_magi_limit"}),
    ("no", {"income_within_cn_or_magi_limit"}, set()),                     # MAGI: the income, no asset test
    ("yes", {"resources_within_limit"}, {"income_within_cn_or_magi_limit"}),  # SSI-related: the assets
])
def test_e02_each_disability_answer_excludes_on_its_own_route(disability, failed, open_):
    found = results(**{**E02, "disability": disability})["apple_health"]
    assert found.classification is X
    assert {o.rule for o in found.failed_rules} == failed and {o.rule for o in found.unknown_rules} == open_
    resources = next(o for o in found.outcomes if o.rule == "resources_within_limit").verdict.reason
    assert ("if not disabled" in resources) is (disability in ("dont_know", "prefer_not_to_say"))


@pytest.mark.parametrize(("assets", "expected", "asked"), [
    ("0-2000", P, True),          # the SSI-related asset test passes: assets pass either way, the income asks
    ("4501-10000", X, True),      # both routes fail
])
def test_over_magi_with_the_disability_unknown(assets, expected, asked):
    found = results(**{**E02, "assets": assets})["apple_health"]
    assert found.classification is expected, reasons(found)
    assert ("disability" in {f for o in found.outcomes for f in o.verdict.unknown_fields}) is asked


def test_magi_income_against_a_floor_no_longer_excludes_on_assets_a_person_who_may_not_be_disabled():
    # After April 1, 2027 the MAGI figure is a floor: just above it, a non-disabled adult (no asset test) may be within
    # it, so savings over the SSI-related limit do not exclude; the disability is asked.
    on = date(2027, 6, 1)
    answers = {**E01, "monthly_income": "1837-1856", "assets": "4501-10000"}
    assert T.for_size("apple_health_magi_income", on, 1).at_least
    found = results(on, **answers)["apple_health"]
    assert found.classification is P and "disability" in found.unknown_fields
    assert results(on, **{**answers, "disability": "yes"})["apple_health"].classification is X
