"""The golden set: size, categories, determinism, and expectations a reader would agree with."""
from __future__ import annotations

import doctest
import re

import pytest

from carenav_core.eval import golden, oracle as oracle_module, scoring
from carenav_core.eval.golden import HOSTILE_MODES, families_named, golden_set


@pytest.fixture(scope="module")
def questions(oracle):
    return golden_set(oracle, seed=7)


def test_size_categories_and_controls(questions):
    assert len(questions) >= 150
    categories = {q.category for q in questions}
    assert categories == {"code", "codes", "family", "years", "unknown", "not_a_code", "control"}
    controls = [q for q in questions if q.category == "control"]
    assert len(controls) >= 30 and all(q.expected_codes == () and q.families == () for q in controls)


def test_same_seed_same_set_other_seed_other_set(oracle, questions):
    assert golden_set(oracle, seed=7) == questions
    assert [q.text for q in golden_set(oracle, seed=8)] != [q.text for q in questions]


def test_every_prefix_is_mixed_and_at_least_30_percent_hostile(questions):
    first = questions[:40]
    assert {q.category for q in first} == {q.category for q in questions}
    assert sum(q.hostile for q in first) / len(first) >= 0.3
    assert {q.reply_mode for q in first} == {"faithful", *HOSTILE_MODES}


@pytest.mark.parametrize(("text", "codes"), [
    ("What does G0556 pay?", {"G0556", "G0557", "G0558"}),       # a member names its family
    ("99490/99439", {"99490", "99439", "99487", "99489", "99491", "99437"}),
    ("How has 99439 been paid since 2020?", {"99439"}),
    ("Was G2012 still payable in 2025?", {"G2012"}),
    ("When did G0556 first appear in the fee schedule?", {"G0556"}),
    ("What does V9998 pay?", {"V9998"}), ("Is 12345 in the 2025 fee schedule?", {"12345"}),
])
def test_expected_codes_of_required_cases(questions, text, codes):
    question = next(q for q in questions if q.text == text)
    assert codes <= set(question.expected_codes)


def test_numbers_that_are_not_codes_are_asked_about(questions):
    text = " ".join(q.text for q in questions)
    for distractor in ("89 FR 97710", "$1,234.50", "19,090 rows", "2024-25382", "33.2875", "in 2025"):
        assert distractor in text, distractor
    for q in questions:
        if q.category == "not_a_code":
            assert len({c for c in q.expected_codes if c in q.text.upper()}) == 1


def test_lowercase_and_several_code_phrasings(questions):
    assert any(re.search(r"\b[a-v]\d{4}\b", q.text) for q in questions)
    assert sum(1 for q in questions if q.category == "codes") >= 20


def test_unknown_codes_are_unpriced_by_the_oracle(oracle, questions):
    unknown = [q for q in questions if q.category == "unknown"]
    assert unknown and all(oracle.unpriced(q.expected_codes) == list(q.expected_codes) for q in unknown)


def test_every_family_is_asked_about(oracle, questions):
    named = {k for q in questions if q.category == "family" for k in q.families}
    assert named == {f.key for f in oracle.families}


def test_a_template_naming_an_unintended_family_is_refused(oracle):
    builder = golden._Builder(oracle, 7)
    assert families_named("Is remote patient monitoring an office visit?", oracle.families) == {"RPM", "OFFICE_EM"}
    with pytest.raises(ValueError, match="names families"):
        builder.question("control", "How is the annual wellness visit paid?", [])


@pytest.mark.parametrize("module", [golden, oracle_module, scoring])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0
