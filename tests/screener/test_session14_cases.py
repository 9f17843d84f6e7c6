"""Classes a fifth probing round found (session 14), each a class of intakes: the smallest-limit pass in SSI-related
Apple Health, a household of one judged alone whatever the marriage, the long-term care route open while the person's
own income may be within the special income level, the medically needy route named as such, and an older spouse who
can claim the property tax exemption."""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.screener.engine import Classification, screen
from tests.screener.conftest import profile

L, P, X = Classification.LIKELY, Classification.POSSIBLY, Classification.EXCLUDED
ON = date(2026, 12, 3)
OLDER = {"age": 67, "county": "Cowlitz", "medicare_parts": ["A", "B"], "apple_health": "none", "extra_help": "no",
         "disability": "no", "veteran_status": "no", "assets": "0-2000", "living_situation": "rented_home",
         "monthly_income": "0-999", "household_size": 1, "marital_status": "single", "has_unpaid_caregiver": "no",
         "caring_for_someone": "no", "nursing_facility_level_of_care": "not_assessed", "adl_help": "none"}


def results(**answers) -> dict:
    return {r.program.key: r for r in screen(profile(**answers), on=ON)}


@pytest.mark.parametrize("unknown", [{"marital_status": "prefer_not_to_say", "household_size": "dont_know"},
                                     {"marital_status": "dont_know"}])
def test_apple_health_passes_under_the_single_limits_whatever_the_marriage(unknown):
    found = results(**{**OLDER, **unknown})["apple_health"]
    assert found.classification is L, [o.verdict.reason for o in found.outcomes]


def test_a_household_of_one_is_judged_on_the_single_limits_whatever_the_marriage():
    found = results(**{**OLDER, "marital_status": "dont_know", "monthly_income": "2902-2982"})
    assert found["msp"].classification is X          # over even the couple's QI-1 limit; and one alone is single
    assert "married" not in found["apple_health"].unknown_fields


def test_extra_help_stays_open_while_the_copes_route_may_make_apple_health_confer_it():
    couple = {**OLDER, "age": 74, "marital_status": "married", "household_size": 2, "living_situation": "own_home",
              "medicare_parts": ["A", "B", "D"], "nursing_facility_level_of_care": "assessed_yes",
              "has_unpaid_caregiver": "yes", "adl_help": ["bathing", "dressing"], "monthly_income": "3526-3607",
              "assets": "36101-53100", "county": "Kitsap"}
    found = results(**couple)
    assert found["extra_help"].classification is P
    reasons = " ".join(o.verdict.reason for o in found["apple_health"].outcomes)
    assert "special income level" in reasons


def test_extra_help_for_a_nursing_home_resident_above_the_special_income_level_names_the_medically_needy_route():
    resident = {**OLDER, "age": 93, "living_situation": "nursing_facility", "apple_health": "dont_know",
                "medicare_parts": ["A", "B", "D"], "monthly_income": "4500-5499"}
    found = results(**resident)["extra_help"]
    reasons = " ".join(o.verdict.reason for o in found.outcomes)
    assert found.classification is P and "medically needy" in reasons and "within the special income level" not in reasons


def test_a_married_homeowner_under_61_is_asked_the_spouses_age_for_the_property_tax_exemption():
    owner = {**OLDER, "age": 58, "marital_status": "married", "household_size": 2, "living_situation": "own_home",
             "county": "Benton", "monthly_income": "3408-3525", "medicare_parts": "none"}
    found = results(**owner)["property_tax"]
    assert found.classification is P
    assert any("whether their spouse is 61 or older" in n for o in found.outcomes for n in o.verdict.needs)
    single = results(**{**owner, "age": 55, "marital_status": "single", "household_size": 1})["property_tax"]
    assert single.classification is X


def test_mac_keeps_the_spousal_route_for_a_married_person_on_single_limits_and_closes_with_magi():
    apart = {**OLDER, "age": 78, "marital_status": "married", "household_size": 1, "living_situation": "own_home",
             "nursing_facility_level_of_care": "assessed_yes", "has_unpaid_caregiver": "yes", "adl_help": ["bathing"],
             "assets": "18091-35130"}
    # SIPI: CN with spousal impoverishment protections; within the state standard plus $2,000 they hold (session 16)
    assert results(**apart)["mac"].classification is L
    assert results(**{**apart, "assets": "84355-156883"})["mac"].classification is P
    worker = {**OLDER, "age": 60, "medicare_parts": "none", "monthly_income": "2200-2351",
              "nursing_facility_level_of_care": "assessed_yes", "has_unpaid_caregiver": "yes", "adl_help": ["bathing"]}
    found = results(**worker)
    assert found["apple_health"].classification is X and found["mac"].classification is X


def test_extra_help_follows_apple_healths_own_coverage_group_and_the_medically_needy_route_at_home():
    young = {**OLDER, "age": 57, "marital_status": "married", "household_size": 2, "monthly_income": "3408-3525",
             "assets": "10001-17600", "nursing_facility_level_of_care": "assessed_yes", "living_situation": "own_home"}
    found = results(**young)
    # Medicare at 57 with "no disability" contradicts itself (session 17): what the disability answer decides is open,
    # and says so; Extra Help follows Apple Health there
    assert found["apple_health"].classification is P and found["extra_help"].classification is P
    assert any("contradicts other answers" in n for o in found["apple_health"].outcomes for n in o.verdict.needs)
    at_home = {**OLDER, "age": 70, "medicare_parts": ["A", "B", "D"], "monthly_income": "3977-4499",
               "nursing_facility_level_of_care": "assessed_yes", "living_situation": "own_home"}
    extra = results(**at_home)["extra_help"]
    assert extra.classification is P and "medically needy" in " ".join(o.verdict.reason for o in extra.outcomes)


def test_an_answers_file_answering_a_question_twice_is_refused_naming_it(tmp_path):
    from carenav_core.errors import ConfigError
    from carenav_core.screener.commands import read_answers
    path = tmp_path / "answers.json"
    path.write_text('{"age": 70, "county": "King", "age": 45}', encoding="utf-8")
    with pytest.raises(ConfigError, match="answered more than once: age"):
        read_answers(path)
