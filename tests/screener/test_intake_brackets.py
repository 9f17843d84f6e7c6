"""The bracket policy of data/programs/intake.toml: every limit that can exclude, on every date of
2025-2026 and for one- and two-person households, has a bracket start within the sliver of the first
dollar above it (so a bracket is wholly on one side of the limit except a sliver-wide band)."""
from __future__ import annotations

import math
from datetime import date, timedelta

import pytest

from carenav_core.screener.intake import load_intake_options
from carenav_core.screener.thresholds import load_thresholds

# (parameter, added general income disregard): the income limits a rule can exclude on.
INCOME_LIMITS = [("apple_health_magi_income", 0), ("msp_qi1_income", 20), ("extra_help_income", 20),
                 ("liheap_income", 0), ("basic_food_gross_income", 0), ("tsoa_income", 0), ("special_income_level", 0)]
ASSET_LIMITS = ["apple_health_cn_resources", "ltc_resources", "tsoa_resources", "extra_help_resources",
                "basic_food_resources_elderly", "va_net_worth_limit"]


def _limits(key: str, plus: float) -> set[float]:
    parameter, found, day = load_thresholds().parameters[key], set(), date(2025, 1, 1)
    while day <= date(2026, 12, 31):
        value = parameter.value_on(day)
        if value is not None and not value.pending:
            figures = ([value.single, value.couple] if value.single is not None else
                       value.by_size[:2] if value.by_size else [value.amount])
            found |= {f + plus for f in figures}
        day += timedelta(days=1)
    return found


@pytest.mark.parametrize(("key", "plus"), INCOME_LIMITS)
def test_income_limits_have_a_bracket_start_just_above_them(key, plus):
    options = load_intake_options()
    starts = [b.lower for b in options.income_brackets]
    for limit in _limits(key, plus):
        first_above = math.floor(limit) + 1
        assert any(abs(s - first_above) <= options.income_brackets[0].sliver for s in starts), (key, limit)


@pytest.mark.parametrize("key", ASSET_LIMITS)
def test_asset_limits_have_a_bracket_start_just_above_them(key):
    options = load_intake_options()
    starts = [b.lower for b in options.asset_brackets]
    for limit in _limits(key, 0):
        assert any(abs(s - (math.floor(limit) + 1)) <= options.asset_brackets[0].sliver for s in starts), (key, limit)


def test_the_top_asset_bracket_is_above_every_va_net_worth_limit():
    # Issue 11 item 1: the open top bracket must start above the VA limit, or assets can never exclude.
    top = load_intake_options().asset_brackets[-1]
    assert all(top.lower > limit for limit in _limits("va_net_worth_limit", 0))
