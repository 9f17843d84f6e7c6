"""Classes a twentieth probing round found (session 22, /tmp/probe_screen20), each a class of figures or intakes:

F3  A single / couple limit on the poverty guidelines (the Medicare Savings Programs, Extra Help) names its guideline
    rule, and the loader refuses a figure that does not equal it: Extra Help 2025 is SSA's yearly limit / 12 to the
    cent ($31,725 / 12 = $2,643.75, once stored as $2,644), so a bracket across $2,663.75 gross stays open (case 036).
C2  Already enrolled in categorically needy Apple Health or a Medicare Savings Program is said as that, "not checked
    here", and claims no income or resource limit met; answers wholly above the MSP's QI-1 limit are a check notice,
    as for Extra Help and categorically needy Apple Health (cases 102, 147, 150).
C3  A figure carries the tag of how it was obtained: Basic Food 2025 sizes 1-4 seen on a secondary page [S], sizes
    5 and up computed from the guideline [D] (cases 003, 004, 021, 027).
E2  A command-line date not in YYYY-MM-DD form is an error naming the option and the form (rc 2, no traceback).

Expected figures are computed here from the HHS guidelines and each program's rounding, not read from the data files.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
from datetime import date
from fractions import Fraction
from pathlib import Path

import pytest

from carenav_core.errors import ConfigError
from carenav_core.screener.assemble import run_screen
from carenav_core.screener.engine import Classification, own_results, screen
from carenav_core.screener.intake import Answers, Bracket
from carenav_core.screener.profile import answer_warnings, normalize
from carenav_core.screener.render import report_markdown
from carenav_core.screener.rules.base import Status
from carenav_core.screener.thresholds import load_thresholds, merge_parameter_files
from tests.screener.conftest import profile, run_rule, with_fields

L, P = Classification.LIKELY, Classification.POSSIBLY
T = load_thresholds()
ROOT = Path(__file__).resolve().parents[2]
# HHS poverty guidelines, 48 states and DC: (one person, each further person) a year
GUIDELINES = {2024: (15060, 5380), 2025: (15650, 5500), 2026: (15960, 5680)}
BASE = {"screening_for": "myself", "age": 70, "county": "King", "household_size": 1, "marital_status": "single",
        "monthly_income": "1300-1499", "assets": "0-2000", "medicare_parts": ["A", "B"], "apple_health": "none",
        "extra_help": "no", "disability": "no", "veteran_status": "no", "adl_help": "none",
        "nursing_facility_level_of_care": "not_assessed", "living_situation": "own_home",
        "has_unpaid_caregiver": "no", "caring_for_someone": "no", "pays_for_heating": "yes"}
COUPLE = {"marital_status": "married", "household_size": 2}


def exact_monthly(percent: int, year: int, size: int) -> Fraction:
    """percent x the HHS guideline for `size` people in `year`, a month, unrounded."""
    base, each = GUIDELINES[year]
    return Fraction(percent, 100) * (base + (size - 1) * each) / 12


def report(answers: dict, on: date):
    return run_screen(normalize(answers), on=on, search=None)


def card(answers: dict, on: date, program: str):
    return {c.program: c for c in report(answers, on).cards}[program]


def bracket(lower: int, upper: int) -> Bracket:
    return Bracket(key="t", lower=lower, upper=upper, sliver=10, unit="USD/month")


# ---- F3 ------------------------------------------------------------------------------------------------------------

# key: (percent of the guideline, how the program states its monthly figure). HCA's MSP figures are rounded up to the
# dollar (its 2025 QMB $1,435 is 110% of $15,650 / 12 = $1,434.58); SSA states the Extra Help limit only as a yearly
# figure ($23,475 / $31,725 in 2025: 42 CFR 423.773(b), POMS HI 03020.055), so its month is that / 12 to the cent.
SINGLE_COUPLE = {"msp_qmb_income": (110, "up"), "msp_slmb_income": (120, "up"), "msp_qi1_income": (138, "up"),
                 "extra_help_income": (150, "cents")}


def official(percent: int, year: int, size: int, rounding: str) -> float:
    exact = exact_monthly(percent, year, size)
    return float(math.ceil(exact)) if rounding == "up" else float(exact)


@pytest.mark.parametrize("key", sorted(SINGLE_COUPLE))
def test_every_single_and_couple_figure_on_the_guidelines_is_exact_under_the_programs_rounding(key):
    """The class: every value of every year (floors included) equals the program's rule applied to the guideline of
    one and of two people, and Extra Help's cents are exact (never a rounded dollar)."""
    percent, rounding = SINGLE_COUPLE[key]
    values = [v for v in T.parameters[key].values if not v.pending]
    assert values
    for value in values:
        year = next(y for y, g in GUIDELINES.items() if (value.guideline.base, value.guideline.each) == g)
        assert value.single == official(percent, year, 1, rounding), (key, value.effective)
        assert value.couple == official(percent, year, 2, rounding), (key, value.effective)


def test_every_single_couple_value_in_the_poverty_guideline_file_names_its_guideline():
    found = [k for k, p in T.parameters.items() if p.source.endswith("fpl_based.toml")
             for v in p.values if v.single is not None and v.guideline is None]
    assert found == []
    assert {k for k, p in T.parameters.items() if p.source.endswith("fpl_based.toml") and
            any(v.single is not None for v in p.values)} == set(SINGLE_COUPLE)


@pytest.mark.parametrize(("married", "year_figure"), [(False, 23475), (True, 31725)])
def test_extra_help_2025_is_the_yearly_figure_over_twelve_to_the_cent(married, year_figure):
    assert Fraction(year_figure) == 12 * exact_monthly(150, 2025, 2 if married else 1)
    for on in (date(2025, 1, 15), date(2025, 6, 1), date(2026, 1, 12)):
        found = T.for_unit("extra_help_income", on, married=married)
        assert found.amount == year_figure / 12           # $1,956.25 / $2,643.75
        assert found.shown() == f"${year_figure / 12:,.2f} a month"


TEXT = ('[parameter.p]\nlabel = "L"\nunit = "USD/month"\n[[parameter.p.values]]\neffective = 2025-01-15\n'
        'single = {single}\ncouple = {couple}\n'
        'guideline = {{percent = 150, base = 15650, each = 5500, rounding = "{rounding}"}}\n'
        'tag = "D"\nreference = [{{title = "t", href = "https://x"}}]\n')


def test_a_rounded_figure_where_the_program_keeps_cents_is_refused_naming_it():
    with pytest.raises(ConfigError, match=r"couple \(a household of two\) is 2644, but 150% of the guideline .* to "
                                          r"the cent is 2643.75"):
        merge_parameter_files({"x.toml": TEXT.format(single=1956.25, couple=2644, rounding="cents")})
    with pytest.raises(ConfigError, match=r"single \(a household of one\) is 1956, but .* is 1956.25"):
        merge_parameter_files({"x.toml": TEXT.format(single=1956, couple=2643.75, rounding="cents")})
    # and cents where the program rounds up
    with pytest.raises(ConfigError, match=r"single \(a household of one\) is 1956.25, but .* rounded up .* is 1957"):
        merge_parameter_files({"x.toml": TEXT.format(single=1956.25, couple=2644, rounding="up")})
    merge_parameter_files({"x.toml": TEXT.format(single=1956.25, couple=2643.75, rounding="cents")})


COUPLE_NOT_ASSESSED = {**COUPLE, "nursing_facility_level_of_care": "assessed_no"}
EH_COUPLE_2025_GROSS = exact_monthly(150, 2025, 2) + 20          # $2,663.75 with the $20 general income exclusion
EH_SINGLE_2025_GROSS = exact_monthly(150, 2025, 1) + 20          # $1,976.25


@pytest.mark.parametrize(("answers", "limit"), [(COUPLE_NOT_ASSESSED, EH_COUPLE_2025_GROSS),
                                                ({"nursing_facility_level_of_care": "assessed_no"},
                                                 EH_SINGLE_2025_GROSS)])
def test_extra_help_2025_brackets_around_the_cent_limit(answers, limit):
    top = math.floor(limit)                     # the highest whole dollar under the limit ($2,663 / $1,976)
    assert top < limit < top + 1
    person = profile(**answers)
    for lower, upper, expected in ((top - 40, top, Status.PASS), (top, top + 1, Status.UNKNOWN),
                                   (top - 2, top + 1, Status.UNKNOWN), (top + 1, top + 40, Status.FAIL)):
        outcome = run_rule("extra_help", "income_below_150_percent_fpl",
                           with_fields(person, monthly_income=bracket(lower, upper)), date(2025, 6, 1))
        assert outcome.status is expected, (lower, upper, outcome.verdict.reason)


def test_036_a_couple_across_the_2025_extra_help_limit_is_possibly_not_likely():
    answers = {**BASE, **COUPLE, "monthly_income": "2661-2664", "assets": "4501-10000"}
    found = own_results(screen(normalize(answers), on=date(2025, 6, 1)))["extra_help"]
    assert found.classification is P
    [income] = [o for o in found.outcomes if o.rule == "income_below_150_percent_fpl"]
    assert income.status is Status.UNKNOWN and "$2,663.75 a month" in income.verdict.reason
    shown = report_markdown(report(answers, date(2025, 6, 1)))
    assert "$2,664 a month (from January 15, 2025)" not in shown and "$2,644" not in shown
    # the same couple a dollar lower is wholly within it
    lower = own_results(screen(normalize({**answers, "monthly_income": "2645-2660"}), on=date(2025, 6, 1)))
    assert lower["extra_help"].classification is L


# ---- C2 ------------------------------------------------------------------------------------------------------------

FAR_ABOVE = {"monthly_income": "8000+", "assets": "250000+"}
# enrolment answer -> (program, its income and resource rule labels, the words said in their place)
ENROLMENTS = {
    "categorically_needy": ("apple_health", ("Income within the categorically needy (SSI-related) or MAGI adult limit",
                                             "Resources within the SSI-related resource limit"),
                            "Already enrolled in categorically needy Apple Health (income and resources not checked "
                            "here)"),
    "msp_only": ("msp", ("Countable income at or below the QI-1 limit",),
                 "Already enrolled in a Medicare Savings Program (income not checked here)"),
}


@pytest.mark.parametrize("enrolment", sorted(ENROLMENTS))
@pytest.mark.parametrize("income", [{"monthly_income": "1500-1732"}, FAR_ABOVE])   # 147 (within), 102 / 150 (far)
def test_an_enrolment_is_said_as_such_and_claims_no_income_or_resource_limit_met(enrolment, income):
    program, labels, words = ENROLMENTS[enrolment]
    shown = card({**BASE, "apple_health": enrolment, **income}, date(2026, 6, 1), program)
    assert shown.classification == "likely_relevant"
    assert words in shown.summary and shown.summary.count(words) == 1
    assert not [label for label in labels if label in shown.summary]
    assert any("not checked here" in why for why in shown.why)


def test_150_msp_enrolment_far_above_the_qi1_limit_is_a_check_notice():
    qi1_gross = math.ceil(exact_monthly(138, 2026, 1)) + 20        # $1,836 + $20 (HCA rounds up)
    answers = {**BASE, "apple_health": "msp_only", **FAR_ABOVE}
    [notice] = [w for w in report(answers, date(2026, 6, 1)).warnings if "Medicare Savings Program" in w]
    assert "already enrolled in a Medicare Savings Program" in notice and f"${qi1_gross:,} a month" in notice
    assert "Please check" in notice and "claim no limit met" in notice
    shown = report_markdown(report(answers, date(2026, 6, 1)))
    msp = shown.split("## Medicare Savings Programs")[1].split("\n## ")[0]
    assert "Countable income at or below the QI-1 limit" not in msp
    assert "**Please check:** The answers say already enrolled in a Medicare Savings Program" in shown


@pytest.mark.parametrize("income", ["1500-1732", "1837-1856", "1857-1882", "1883-1956"])
def test_msp_notice_only_when_the_income_is_wholly_above_qi1(income):
    person = normalize({**BASE, "apple_health": "msp_only", "monthly_income": income})
    notices = [w for w in answer_warnings(person, on=date(2026, 6, 1)) if "Medicare Savings Program, but" in w]
    qi1_gross = math.ceil(exact_monthly(138, 2026, 1)) + 20          # $1,856 from April 2026
    assert bool(notices) is (int(income.split("-")[0]) > qi1_gross)


def test_msp_notice_decides_nothing_without_a_figure_on_file_or_for_a_larger_household():
    far = {**BASE, "apple_health": "msp_only", **FAR_ABOVE}
    assert not [w for w in answer_warnings(normalize(far), on=date(2029, 6, 1)) if "Medicare Savings Program, but" in w]
    larger = {**far, "household_size": 3, "monthly_income": "2200-2351"}    # income of more people than the person
    assert not [w for w in answer_warnings(normalize(larger), on=date(2026, 6, 1))
                if "Medicare Savings Program, but" in w]
    # within one floor step (2027: at least $1,856) nothing is decided; far above it the notice still fires
    assert [w for w in answer_warnings(normalize(far), on=date(2027, 6, 1)) if "Medicare Savings Program, but" in w]


def test_102_categorically_needy_enrolment_keeps_its_notice_and_copes_claims_no_income_checked():
    answers = {**BASE, "apple_health": "categorically_needy", **FAR_ABOVE}
    warnings = report(answers, date(2026, 6, 1)).warnings
    assert [w for w in warnings if "already enrolled in categorically needy Apple Health, but" in w]
    at_level = {**answers, "monthly_income": "1300-1499", "assets": "0-2000", "adl_help": ["bathing"],
                "nursing_facility_level_of_care": "assessed_yes"}
    copes = card(at_level, date(2026, 6, 1), "copes")
    assert "Already on categorically needy Apple Health (route A; own income not checked here)" in copes.summary
    assert "Own income at or below the Special Income Level" not in copes.summary


# ---- C3 ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("size", "tag"), [(1, "S"), (4, "S"), (5, "D"), (6, "D"), (7, "D"), (10, "D"), (12, "D")])
def test_basic_food_2025_sizes_carry_the_tag_of_how_they_were_obtained(size, tag):
    def nearest(amount: Fraction) -> int:
        return math.floor(amount + Fraction(1, 2))
    # DSHS: 200% of the guideline for each size up to ten to the nearest dollar, then 200% of the per-person amount
    # ($5,500 / 12 x 2 = $916.67 -> $917) for each person over ten
    expected = nearest(exact_monthly(200, 2025, min(size, 10))) + \
        max(size - 10, 0) * nearest(Fraction(2 * GUIDELINES[2025][1], 12))
    found = T.for_size("basic_food_gross_income", date(2025, 6, 1), size)
    assert found.amount == expected and found.tag == tag


@pytest.mark.parametrize(("size", "shown"), [(5, "$6,275 a month (from April 1, 2025) [D]"),     # 027
                                             (7, "$8,108 a month (from April 1, 2025) [D]"),     # 003
                                             (6, "$7,192 a month (from April 1, 2025) [D]"),     # 004, 021
                                             (2, "$3,525 a month (from April 1, 2025) [S]")])
def test_the_report_shows_each_basic_food_2025_figure_with_its_own_tag(size, shown):
    answers = {**BASE, "marital_status": "married", "household_size": size, "monthly_income": "1300-1499"}
    text = report_markdown(report(answers, date(2025, 6, 1)))
    other = shown[:-3] + ("[S]" if shown.endswith("[D]") else "[D]")
    assert shown in text and other not in text


def test_an_official_table_keeps_its_tag_only_for_what_the_agency_publishes():
    # DSHS's April 2024 table and its own per-person amount over ten: official throughout
    assert T.for_size("basic_food_gross_income", date(2024, 6, 1), 12).tag == "O"
    text = ('[parameter.p]\nlabel = "L"\nunit = "USD/month"\n[[parameter.p.values]]\neffective = 2026-04-01\n'
            'by_size = [2660, 3607]\nguideline = {percent = 200, base = 15960, each = 5680, rounding = "nearest"}\n'
            'tag = "O"\nreference = [{title = "t", href = "https://x"}]\n')
    table = merge_parameter_files({"x.toml": text})
    assert [table.for_size("p", date(2026, 6, 1), n).tag for n in (1, 2, 3)] == ["O", "O", "D"]
    with pytest.raises(ConfigError, match="source_sizes needs by_size and its guideline"):
        merge_parameter_files({"x.toml": text.replace('tag = "O"', 'source_sizes = 3\ntag = "O"')})


# ---- E2 ------------------------------------------------------------------------------------------------------------

def _carenav(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "carenav_core", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ}, timeout=120)


@pytest.mark.parametrize("given", ["06/01/2026", "2026-6-1", "20260601", "June 1 2026", "2026-02-30"])
def test_a_date_not_in_iso_form_names_the_option_and_the_form(given, tmp_path):
    answers = tmp_path / "a.json"
    answers.write_text('{"age": 70}', encoding="utf-8")
    done = _carenav("screen", "--answers", str(answers), "--date", given)
    assert done.returncode == 2 and done.stdout == ""
    assert "argument --date:" in done.stderr and "YYYY-MM-DD" in done.stderr and "2026-06-01" in done.stderr
    assert "Traceback" not in done.stderr and "fromisoformat" not in done.stderr


def test_data_check_on_is_read_the_same_way():
    done = _carenav("data", "check", "--on", "1/1/2026")
    assert done.returncode == 2 and "argument --on:" in done.stderr and "YYYY-MM-DD" in done.stderr
    from carenav_core.screener.commands import iso_date
    assert iso_date("2026-06-01") == date(2026, 6, 1)


def test_the_answers_file_holds_no_date_to_misread():
    # every date the screener reads comes from --date / --on; the answers are ages, brackets and choices
    assert not [n for n, f in Answers.model_fields.items() if "date" in str(f.annotation).lower()]
