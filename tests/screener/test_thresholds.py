"""The threshold data is honest: labelled, referenced, dated, and the loader rejects bad files."""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.errors import ConfigError
from carenav_core.screener.intake import load_intake_options, parse_intake_options
from carenav_core.screener.thresholds import (ThresholdNotInForce, load_thresholds, merge_parameter_files,
                                              parse_parameters)

GOOD_VALUE = 'effective = 2025-01-01\namount = 1\ntag = "O"\nreference = [{title = "t", href = "https://x"}]\n'


def _file(value: str = GOOD_VALUE, head: str = 'label = "L"\nunit = "USD"\n') -> str:
    return f"[parameter.p]\n{head}[[parameter.p.values]]\n{value}"


def test_every_shipped_parameter_has_label_unit_tag_and_reference():
    table = load_thresholds()
    assert len(table.parameters) >= 30
    for parameter in table.parameters.values():
        assert parameter.label and parameter.unit
        for value in parameter.values:
            assert value.tag in ("O", "D", "S") and value.reference


BROKEN = [
    (_file() + "color = 1\n", "extra"),                                    # unknown key in a value
    (_file(head='label = "L"\nunit = "USD"\nsize = 3\n'), "extra"),        # unknown key in a parameter
    ("[other]\nx = 1\n", "unknown top-level keys"),
    (_file(head='label = "L"\nlabel = "M"\nunit = "USD"\n'), "overwrite a value (at line 3"),  # duplicate key
    (_file(GOOD_VALUE.replace('tag = "O"', 'tag = "X"')), "tag"),
    (_file(GOOD_VALUE.replace('reference = [{title = "t", href = "https://x"}]', "reference = []")), "reference"),
    (_file(GOOD_VALUE.replace("https://x", "ftp://x")), "href"),
    (_file(head='label = ""\nunit = "USD"\n'), "label"),
    (_file(head='label = "L"\nunit = "furlongs"\n'), "unit"),
    (_file(GOOD_VALUE.replace("amount = 1", "single = 1")), "single and couple"),
    (_file(GOOD_VALUE.replace("amount = 1", "amount = 1\nby_size = [1]")), "exactly one of"),
    (_file(GOOD_VALUE.replace("amount = 1", "")), "exactly one of"),
    (_file(GOOD_VALUE + "until = 2024-01-01\n"), "is before effective"),
    (_file(GOOD_VALUE + "[[parameter.p.values]]\n" + GOOD_VALUE), "duplicate effective date"),
    ("[parameter.p\n", "toml"),
]


@pytest.mark.parametrize(("text", "words"), BROKEN)
def test_broken_parameter_files_are_rejected_with_a_helpful_message(text, words):
    with pytest.raises(ConfigError) as error:
        parse_parameters(text, "broken.toml")
    assert words.lower() in str(error.value).lower()
    assert "broken.toml" in str(error.value)


def test_a_parameter_defined_in_two_files_is_rejected():
    with pytest.raises(ConfigError, match="duplicate parameter 'p' in a.toml and b.toml"):
        merge_parameter_files({"a.toml": _file(), "b.toml": _file()})


def test_lookup_before_first_value_or_after_until_is_not_in_force():
    table = load_thresholds()
    with pytest.raises(ThresholdNotInForce, match="no value in force on 2024-12-31"):
        table.amount("special_income_level", date(2024, 12, 31))
    with pytest.raises(ThresholdNotInForce, match="2026-01-01"):
        table.for_unit("extra_help_resources", date(2026, 1, 1), married=False)


def test_lookup_errors_name_the_problem():
    table = load_thresholds()
    with pytest.raises(ConfigError, match="unknown threshold parameter 'nope'"):
        table.amount("nope", date(2026, 1, 1))
    with pytest.raises(ConfigError, match="has no 'amount' figure"):
        table.amount("apple_health_cn_income", date(2026, 1, 1))
    with pytest.raises(ConfigError, match="no figure for county 'Atlantis'"):
        table.for_county("property_tax_income_threshold_3", date(2026, 1, 1), "Atlantis")
    with pytest.raises(ThresholdNotInForce, match="size 3 has no figure"):
        table.for_size("va_mapr_aid_attendance", date(2025, 1, 1), 3)


@pytest.mark.parametrize(("key", "on", "size", "amount"), [
    ("basic_food_gross_income", date(2025, 3, 31), 1, 2510),
    ("basic_food_gross_income", date(2025, 4, 1), 4, 5358),
    ("basic_food_gross_income", date(2026, 4, 1), 6, 5500 + 2 * 947),
    ("apple_health_magi_income", date(2026, 3, 31), 2, 2433),
    ("apple_health_magi_income", date(2026, 4, 1), 2, 2489),
    ("liheap_income", date(2026, 10, 1), 3, 3415),
])
def test_household_size_lookups_follow_dates_and_extend_past_the_table(key, on, size, amount):
    assert load_thresholds().for_size(key, on, size).amount == pytest.approx(amount)


def test_describe_shows_amount_unit_date_and_tag():
    text = load_thresholds().for_unit("apple_health_cn_income", date(2026, 1, 1), married=False).describe()
    assert text == "$1,014 (USD/month, from 2026-01-01) [D]"
    assert load_thresholds().amount("pace_min_age", date(2026, 1, 1)).describe().startswith("55 (years")


def test_intake_options_have_39_counties_and_ordered_brackets():
    options = load_intake_options()
    assert len(options.counties) == 39 and set(options.pace_counties) <= set(options.counties)
    assert options.income_brackets[0].lower == 0 and options.income_brackets[-1].upper is None
    assert options.income_brackets[-1].label() == "$8,000 or more"


@pytest.mark.parametrize(("text", "words"), [
    ("[income]\nunit='x'\nsliver=1\nupper_edges=[2,1]\n", "ascending"),
    ("[income]\nunit='x'\nsliver=1\nupper_edges=[1]\ncolor=2\n", "extra"),
    ("[income\n", "intake.toml"),
])
def test_broken_intake_files_are_rejected(text, words):
    with pytest.raises(ConfigError, match=words):
        parse_intake_options(text)
