"""Threshold lookups by date, household and county; the intake bracket file. (Schema checks of every
data file: tests/test_params.py.)"""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.errors import ConfigError
from carenav_core.screener.intake import load_intake_options, parse_intake_options
from carenav_core.screener.thresholds import ThresholdNotInForce, load_thresholds, merge_parameter_files

GOOD_VALUE = 'effective = 2025-01-01\namount = 1\ntag = "O"\nreference = [{title = "t", href = "https://x"}]\n'


def _file(value: str = GOOD_VALUE, head: str = 'label = "L"\nunit = "USD"\n') -> str:
    return f"[parameter.p]\n{head}[[parameter.p.values]]\n{value}"


def test_a_parameter_defined_in_two_files_is_rejected():
    with pytest.raises(ConfigError, match="duplicate parameter 'p' in a.toml and b.toml"):
        merge_parameter_files({"a.toml": _file(), "b.toml": _file()})


def test_lookup_before_first_value_or_after_until_is_not_in_force():
    table = load_thresholds()
    with pytest.raises(ThresholdNotInForce, match="Special Income Level .* for December 31, 2024 is not on file"):
        table.amount("special_income_level", date(2024, 12, 31))
    with pytest.raises(ThresholdNotInForce, match="January 1, 2029 is not on file"):
        table.for_unit("extra_help_resources", date(2029, 1, 1), married=False)
    with pytest.raises(ThresholdNotInForce, match="12/2024 survivors table was not in the stored pages"):
        table.amount("va_survivor_mapr_aid_attendance", date(2025, 6, 1))


def test_lookup_errors_name_the_problem():
    table = load_thresholds()
    with pytest.raises(ConfigError, match="unknown threshold parameter 'nope'"):
        table.amount("nope", date(2026, 1, 1))
    with pytest.raises(ConfigError, match="has no 'amount' figure"):
        table.amount("apple_health_cn_income", date(2026, 1, 1))
    with pytest.raises(ConfigError, match="no figure for county 'Atlantis'"):
        table.for_county("property_tax_income_threshold_3", date(2026, 1, 1), "Atlantis")
    with pytest.raises(ThresholdNotInForce, match="a household of 3 has no figure"):
        table.for_size("va_mapr_aid_attendance", date(2025, 1, 1), 3)


@pytest.mark.parametrize(("key", "on", "size", "amount"), [
    ("basic_food_gross_income", date(2025, 3, 31), 1, 2510),
    ("basic_food_gross_income", date(2025, 4, 1), 4, 5358),
    # 200% of the 2026 guideline for six, rounded to the nearest dollar as DSHS's table does (not size 4 + 2 x 947)
    ("basic_food_gross_income", date(2026, 4, 1), 6, 7393),
    ("apple_health_magi_income", date(2026, 3, 31), 2, 2433),
    ("apple_health_magi_income", date(2026, 4, 1), 2, 2489),
    ("liheap_income", date(2026, 10, 1), 3, 3415),
    ("liheap_income", date(2025, 1, 1), 1, 1882.5),
    ("basic_food_net_income", date(2026, 9, 30), 1, 1305),
    ("basic_food_net_income", date(2026, 10, 1), 2, 1804),
    ("basic_food_net_income", date(2026, 10, 1), 5, 2750 + 474),
])
def test_household_size_lookups_follow_dates_and_extend_past_the_table(key, on, size, amount):
    assert load_thresholds().for_size(key, on, size).amount == pytest.approx(amount)


def test_describe_shows_amount_unit_date_and_tag_in_words():
    text = load_thresholds().for_unit("apple_health_cn_income", date(2026, 1, 1), married=False).describe()
    assert text == "$1,014 a month (from January 1, 2026) [D]"
    assert load_thresholds().amount("pace_min_age", date(2026, 1, 1)).describe().startswith("55 years (from")


@pytest.mark.parametrize(("key", "on", "amount"), [
    ("va_net_worth_limit", date(2025, 11, 30), 159_240), ("va_net_worth_limit", date(2025, 12, 1), 163_699),
    ("va_net_worth_limit", date(2026, 11, 30), 163_699), ("va_net_worth_limit", date(2026, 12, 1), 163_699),
])
def test_va_years_run_december_to_november(key, on, amount):
    assert load_thresholds().amount(key, on).amount == amount


def test_a_figure_not_seen_is_carried_as_a_floor_that_decides_only_a_pass():
    limit = load_thresholds().amount("va_net_worth_limit", date(2026, 12, 1))
    assert limit.at_least and limit.describe().startswith("at least $163,699")
    assert not load_thresholds().amount("va_net_worth_limit", date(2026, 11, 30)).at_least


def test_intake_options_have_39_counties_and_ordered_brackets():
    options = load_intake_options()
    assert len(options.counties) == 39 and set(options.pace_counties) <= set(options.counties)
    assert options.income_brackets[0].lower == 0 and options.income_brackets[-1].upper is None
    assert options.income_brackets[-1].label() == "$8,000 or more a month"
    assert options.income_brackets[1].label() == "$1,000 – $1,299 a month"
    assert [b.upper + 1 for b in options.income_brackets[:-1]] == [b.lower for b in options.income_brackets[1:]]


@pytest.mark.parametrize(("text", "words"), [
    ("[income]\nunit='x'\nsliver=1\nstarts=[2,1]\n", "ascending"),
    ("[income]\nunit='x'\nsliver=1\nstarts=[0]\n", "positive"),
    ("[income]\nunit='x'\nsliver=1\nstarts=[1]\ncolor=2\n", "extra"),
    ("[income\n", "intake.toml"),
])
def test_broken_intake_files_are_rejected(text, words):
    with pytest.raises(ConfigError, match=words):
        parse_intake_options(text)
