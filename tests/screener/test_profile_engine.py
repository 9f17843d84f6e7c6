"""Layer 0 normalize and the Layer 1 engine's classification."""
from __future__ import annotations

import pytest

from carenav_core.errors import ConfigError
from carenav_core.screener.engine import Classification, classify, screen
from carenav_core.screener.profile import Unknown, is_unknown, normalize
from carenav_core.screener.rules.base import Outcome, Status, Verdict
from carenav_core.screener.thresholds import Reference
from tests.screener.conftest import ON, profile


def test_every_unanswered_or_declined_field_is_an_explicit_unknown():
    person = normalize({"age": "prefer_not_to_say", "county": "dont_know",
                        "nursing_facility_level_of_care": "not_assessed"})
    assert person.age == Unknown(reason="prefer_not_to_say")
    assert person.county == Unknown(reason="dont_know")
    assert person.nursing_facility_level_of_care == Unknown(reason="not_assessed")
    assert person.household_size == Unknown(reason="unanswered")
    assert len(person.unknown_fields()) == 22


def test_answers_are_normalized_to_typed_values():
    person = profile(medicare_parts="none", adl_help=["bathing", "eating"], marital_status="married")
    assert person.medicare_parts == frozenset() and person.adl_help == {"bathing", "eating"}
    assert person.married is True and person.monthly_income.upper == 1299
    assert not is_unknown(person.age)


@pytest.mark.parametrize(("answers", "words"), [
    ({"age": 130}, "outside 0-120"), ({"household_size": 0}, "outside 1-20"),
    ({"county": "Atlantis"}, "Washington county"), ({"monthly_income": "lots"}, "income bracket"),
    ({"assets": "1-2"}, "asset bracket"), ({"favourite_color": "red"}, "favourite_color: not a question of the intake"),
    ({"apple_health": "gold"}, "apple_health"), ({"age": True}, "age must be a whole number"),
    ({"household_size": False}, "household size must be a whole number"), ({"age": 70.5}, "whole number"),
    ({"screening_for": "my cat"}, "screening_for"), ({"caregiver_age": 121}, "outside 0-120"),
])
def test_invalid_answers_are_rejected_naming_the_field(answers, words):
    with pytest.raises(ConfigError, match=words):
        normalize(answers)


def _outcome(status: Status) -> Outcome:
    return Outcome(program="p", rule="r", label="l", document="p#x", legal=Reference(title="t", href="https://x"),
                   verdict=Verdict(status=status, reason="why"))


@pytest.mark.parametrize(("statuses", "expected"), [
    ((Status.PASS, Status.PASS), Classification.LIKELY),
    ((Status.PASS, Status.UNKNOWN), Classification.POSSIBLY),
    ((Status.UNKNOWN, Status.FAIL), Classification.EXCLUDED),
    ((Status.PASS, Status.FAIL), Classification.EXCLUDED),
])
def test_classify(statuses, expected):
    assert classify(tuple(_outcome(s) for s in statuses)) is expected


def test_screen_a_profile_lists_failed_rules_and_unknown_fields():
    results = {r.program.key: r for r in screen(profile(nursing_facility_level_of_care="not_assessed",
                                                        veteran_status="no", assets="2001-3000"), on=ON)}
    assert len(results) == 12
    assert results["va_pension"].classification is Classification.EXCLUDED
    assert [o.rule for o in results["va_pension"].failed_rules] == ["veteran_or_surviving_spouse"]
    assert results["tsoa"].classification is Classification.POSSIBLY
    assert results["tsoa"].unknown_fields == ("nursing_facility_level_of_care",)
    assert results["msp"].classification is Classification.LIKELY


def test_an_empty_intake_excludes_nothing_it_cannot_know():
    results = screen(normalize({}), on=ON)
    assert all(r.classification is Classification.POSSIBLY for r in results)
    assert all(r.unknown_fields for r in results)


@pytest.mark.parametrize(("answers", "words"), [
    ({"age": 30, "medicare_parts": ["A"], "disability": "no"}, "Medicare before 65"),
    ({"age": 12}, "adults"),
    ({"screening_for": "someone_i_care_for", "caring_for_someone": "yes"}, "also say that person is a caregiver"),
])
def test_unusual_answers_are_warned_about(answers, words):
    from carenav_core.screener.profile import answer_warnings
    assert any(words in w for w in answer_warnings(normalize(answers)))


def test_usual_answers_have_no_warnings():
    from carenav_core.screener.profile import answer_warnings
    assert answer_warnings(normalize({"age": 30, "medicare_parts": ["A"], "disability": "yes"})) == ()
    assert answer_warnings(profile()) == ()
