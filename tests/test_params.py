"""The one dated-parameter schema (carenav_core/params.py) over every data file that uses it.

Every shipped file loads and every value carries a label, a unit, a tag and a {title, href} reference;
deliberately broken fixtures of each file family are each rejected with the words their error must
contain (openfisca-core tests/core/parameter_validation/)."""
from __future__ import annotations

from datetime import date, timedelta

import pytest

from carenav_core.errors import ConfigError
from carenav_core.params import TAG_MEANINGS, freshness, parse_parameters
from carenav_core.pfs.rules import RULES_FILE, parse_rules
from carenav_core.screener.thresholds import PROGRAMS_DIR, ScreenerValue, load_thresholds, parameter_texts

SCREENER_FILES = sorted(parameter_texts())
GOOD_VALUE = 'effective = 2025-01-01\namount = 1\ntag = "O"\nreference = [{title = "t", href = "https://x"}]\n'


def _file(value: str = GOOD_VALUE, head: str = 'label = "L"\nunit = "USD"\n') -> str:
    return f"[parameter.p]\n{head}[[parameter.p.values]]\n{value}"


ENDING = _file(GOOD_VALUE + "until = 2026-12-31\n")     # a figure with no successor on file


@pytest.mark.parametrize("path", SCREENER_FILES)
def test_every_screener_parameter_file_loads_with_labels_units_tags_and_references(path):
    parameters = parse_parameters(parameter_texts()[path], path, ScreenerValue)
    assert parameters, path
    for parameter in parameters.values():
        assert parameter.label and parameter.unit
        for value in parameter.values:
            assert value.tag in TAG_MEANINGS and value.reference and all(r.href.startswith("http") for r in value.reference)
            assert value.pending or any(getattr(value, s) is not None for s in ("amount", "single", "by_size", "by_county"))


def test_the_pfs_rule_book_loads_with_the_same_tags_and_references():
    book = parse_rules(RULES_FILE.read_text(encoding="utf-8"), str(RULES_FILE))
    for rule in [*book.final.values(), *book.proposed.values()]:
        assert rule.tag in TAG_MEANINGS and rule.references[0].title
        assert all(cf.tag in TAG_MEANINGS and cf.reference[0].href.startswith("https://") for cf in rule.cfs)


BROKEN_SCREENER = [
    (_file() + "color = 1\n", ["parameter.p", "color", "Extra inputs are not permitted"]),
    (_file(head='label = "L"\nunit = "USD"\nsize = 3\n'), ["size", "Extra inputs"]),
    ("[other]\nx = 1\n", ["unknown top-level keys", "other"]),
    (_file(head='label = "L"\nlabel = "M"\nunit = "USD"\n'), ["Cannot overwrite a value (at line 3"]),
    (_file(GOOD_VALUE.replace('tag = "O"', 'tag = "X"')), ["tag", "'O', 'D', 'S' or 'U'"]),
    (_file(GOOD_VALUE.replace('reference = [{title = "t", href = "https://x"}]', "reference = []")), ["reference", "at least 1"]),
    (_file(GOOD_VALUE.replace('reference = [{title = "t", href = "https://x"}]', 'reference = "https://x"')), ["reference", "list"]),
    (_file(GOOD_VALUE.replace("https://x", "ftp://x")), ["href", "pattern"]),
    (_file(head='label = ""\nunit = "USD"\n'), ["label", "at least 1 character"]),
    (_file(head='label = "L"\nunit = "furlongs"\n'), ["unit", "USD/month"]),
    (_file(GOOD_VALUE.replace("amount = 1", "single = 1")), ["single and couple must be given together"]),
    (_file(GOOD_VALUE.replace("amount = 1", "amount = 1\nby_size = [1]")), ["exactly one of"]),
    (_file(GOOD_VALUE.replace("amount = 1", "")), ["exactly one of", "found none"]),
    (_file(GOOD_VALUE.replace("amount = 1", 'amount = 1\npending = "not out yet"')), ["a pending value has no figure"]),
    (_file(GOOD_VALUE + "until = 2024-01-01\n"), ["until 2024-01-01 is before effective 2025-01-01"]),
    (_file(GOOD_VALUE + "[[parameter.p.values]]\n" + GOOD_VALUE), ["duplicate effective date 2025-01-01"]),
    (_file(GOOD_VALUE + "until = 2026-06-30\n[[parameter.p.values]]\n" + GOOD_VALUE.replace("2025-01-01", "2026-01-01")),
     ["overlaps the value from 2026-01-01"]),
    (_file(GOOD_VALUE.replace("effective = 2025-01-01", "effective = 2025-13-01")), ["broken.toml"]),
    ("[parameter.p\n", ["broken.toml", "Expected ']'"]),
]


@pytest.mark.parametrize(("text", "words"), BROKEN_SCREENER, ids=[w[0][:30] for _, w in BROKEN_SCREENER])
def test_broken_screener_parameter_files_are_rejected_with_a_helpful_message(text, words):
    with pytest.raises(ConfigError) as info:
        parse_parameters(text, "broken.toml", ScreenerValue)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_a_parameter_defined_in_two_files_is_rejected_naming_both():
    from carenav_core.screener.thresholds import merge_parameter_files
    with pytest.raises(ConfigError, match="duplicate parameter 'p' in a.toml and b.toml"):
        merge_parameter_files({"a.toml": _file(), "b.toml": _file()})


# Periods the data declares `pending` (no confirmed figure); any other gap fails the coverage test.
DECLARED_GAPS = {"va_survivor_mapr_aid_attendance": (date(2024, 12, 1), date(2025, 11, 30)),
                 "tsoa_resources": (date(2023, 10, 9), date(2025, 12, 31)),
                 "spousal_csra_state_standard": (date(2024, 7, 1), date(2025, 6, 30)),
                 # the 2024 guidelines' limit until the 2025 guidelines took effect (January 15, 2025)
                 "extra_help_income": (date(2025, 1, 1), date(2025, 1, 14))}


def test_every_parameter_has_a_value_in_force_on_every_date_of_2025_and_2026():
    parameters = load_thresholds().parameters
    day, missing = date(2025, 1, 1), {}
    while day <= date(2026, 12, 31):
        for key, parameter in parameters.items():
            value = parameter.value_on(day)
            gap = DECLARED_GAPS.get(key)
            declared = gap is not None and gap[0] <= day <= gap[1] and value is not None and value.pending
            if (value is None or value.pending) and not declared:
                missing.setdefault(key, day)
        day += timedelta(days=1)
    assert missing == {}, f"first day without a value, per parameter: {missing}"


def test_freshness_lists_values_that_end_soon_or_have_no_figure():
    parameters = load_thresholds().parameters
    found = {(f.key, f.problem) for f in freshness(parameters, date(2026, 12, 1))}
    assert ("va_net_worth_limit", "floor") in found        # 12/2026 value not seen: the 12/2025 one is a floor
    assert ("basic_food_resources_elderly", "floor") in found
    later = {(f.key, f.problem) for f in freshness(parameters, date(2027, 1, 2))}
    assert ("extra_help_resources", "floor") in later          # 2027 value not seen: the 2026 one is a floor
    # a value that ends with nothing after it: "ends soon" within the horizon, then "ended"
    from carenav_core.screener.thresholds import merge_parameter_files
    [ending] = merge_parameter_files({"x.toml": ENDING}).parameters.values()
    assert [f.problem for f in freshness({ending.key: ending}, date(2026, 12, 1))] == ["ends soon"]
    assert [f.problem for f in freshness({ending.key: ending}, date(2027, 1, 2))] == ["ended"]
    assert ("va_survivor_mapr_aid_attendance", "pending") in {(f.key, f.problem) for f in freshness(parameters, date(2025, 6, 1))}
    assert PROGRAMS_DIR.is_dir()
