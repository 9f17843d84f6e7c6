"""Figures whose value in force is not on file yet (ScreenerValue.at_least): a pass under the floor holds; far above
it is decided only for a figure a yearly index bounds (FLOOR_HEADROOM); a figure set by rule with no index decides
nothing above its floor."""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.screener.intake import Bracket
from carenav_core.screener.rules.base import Status
from tests.screener.conftest import profile, run_rule, with_fields

P, F, U = Status.PASS, Status.FAIL, Status.UNKNOWN


def assets(lower: int, upper: int | None) -> Bracket:
    return Bracket(key="t", lower=lower, upper=upper, sliver=100, unit="USD")


@pytest.mark.parametrize(("held", "on", "expected"), [
    (assets(80_000, 84_354), date(2026, 6, 1), P),
    (assets(84_355, 90_000), date(2026, 6, 1), F),       # the 2026 chart's figure decides 2026
    (assets(80_000, 84_354), date(2027, 2, 1), P),       # at or under the 2026 figure: passes in 2027 too
    (assets(84_355, 90_000), date(2027, 2, 1), U),       # above it: the 2027 figure is not on file
    (assets(250_000, None), date(2027, 2, 1), U),        # no index bounds a figure set by rule: nothing decided
])
def test_tsoa_resources_after_the_2026_chart(held, on, expected):
    person = with_fields(profile(age=70, household_size=1, marital_status="single"), assets=held)
    result = run_rule("tsoa", "resources_within_tsoa_standard", person, on)
    assert result.status is expected
    if on.year == 2027 and expected is U:
        assert result.verdict.figure_missing and "at least $84,354" in result.verdict.figure_missing


def test_an_indexed_floor_still_decides_far_above_it():
    person = with_fields(profile(age=70, household_size=1, marital_status="single", monthly_income="1883-1956"),
                         assets=assets(250_000, None))       # above QI-1: no MSP confers Extra Help
    assert run_rule("extra_help", "resources_within_lis_limit", person, date(2027, 2, 1)).status is F
