"""Session 22: failure classes found asking the chat, fixed as classes. Asked through the real pipeline (real DuckDB,
real embedded PostgreSQL, the deterministic writer); counts and amounts are read from the loaded CMS files in the
test, never written here."""
from __future__ import annotations

from collections import Counter
from datetime import date

import pytest

from carenav_core.chat.evidence import build_evidence
from carenav_core.chat.factors import GAF_NOTE, STATE_NAMES, asks_gaf, asks_locality_count
from carenav_core.chat.guard import check_sentence
from carenav_core.chat.pipeline import prepare
from carenav_core.pfs.factors import gpci_rows
from tests.chat.test_question_classes import said

TODAY = date(2026, 12, 1)


def _per_state(fee_db, cy):
    return Counter(r.state for r in gpci_rows(fee_db, cy))


@pytest.mark.parametrize("question, state, cy", [
    ("How many payment localities does California have?", "CA", 2026),
    ("Number of Medicare localities in Texas in 2025", "TX", 2025),
    ("how many localities are in Washington state", "WA", 2026),
    ("How many PFS localities does New York have in 2024?", "NY", 2024),
])
def test_a_state_s_localities_are_counted(backends, fee_db, question, state, cy):
    """"How many payment localities does California have?" listed 29 "California is in payment locality ..." clauses
    cut off mid-sentence, with no count."""
    per_state = _per_state(fee_db, cy)
    prepared = prepare(question, backends, today=TODAY)
    text = said(prepared)
    assert (f"{STATE_NAMES[state]} ({state}) has {per_state[state]} of the {sum(per_state.values())} payment "
            f"localities of the CY {cy} GPCI file") in text
    assert text.index(f"has {per_state[state]} of the") < text.index("Across the")      # the count first
    assert "is in payment locality" not in text
    assert text.count("has a work GPCI of") == (per_state[state] if per_state[state] <= 3 else 0)


@pytest.mark.parametrize("question, fewest", [
    ("Which state has the most payment localities?", False),
    ("How many Medicare payment localities are there in 2026?", False),
    ("Which states have the fewest localities?", True),
])
def test_localities_counted_by_state(backends, fee_db, question, fewest):
    per_state = _per_state(fee_db, 2026)
    (top, n), (second, m) = per_state.most_common(2)
    ones = sorted(st for st, k in per_state.items() if k == 1)
    text = said(prepare(question, backends, today=TODAY))
    assert (f"The CY 2026 GPCI file has {sum(per_state.values())} payment localities in {len(per_state)} states and "
            f"territories; the most are in {STATE_NAMES[top]} ({top}) {n}, {STATE_NAMES[second]} ({second}) {m}") in text
    assert f"{len(ones)} have one locality each" in text
    assert (("(one statewide locality: " + ", ".join(ones) + ")") in text) is fewest


def test_the_count_passes_the_output_guard(backends):
    """Every number of the count sentences is a checked fact (a model repeating them is not withheld)."""
    for question in ("How many payment localities does California have?", "Which states have the fewest localities?"):
        prepared = prepare(question, backends, today=TODAY)
        evidence = build_evidence(prepared.rows, prepared.sources, prepared.checked)
        line = next(s for s in said(prepared).splitlines() if "payment localities" in s and "GPCI file" in s)
        assert check_sentence(line.removeprefix("- "), evidence) == ()
        assert check_sentence(line.removeprefix("- ").replace(" 29 ", " 31 "), evidence) != () or " 29 " not in line


@pytest.mark.parametrize("question", ["What is the GAF for Miami in 2026?",
                                      "geographic adjustment factor for Seattle"])
def test_a_gaf_asked_shows_the_gpcis_and_says_the_gaf_is_not_loaded(backends, question):
    """"What is the GAF for Miami?" answered with unrelated ACO paragraphs: the GAF is not in the loaded files, and
    the GPCIs it is made of are."""
    prepared = prepare(question, backends, today=TODAY)
    assert any(w.message == GAF_NOTE for w in prepared.warnings)
    assert [r.key for r in prepared.gpci if r.asked] and "has a work GPCI of" in said(prepared)


@pytest.mark.parametrize("text, counted, gaf", [
    ("How many payment localities does Florida have?", True, False),
    ("What locality is King County in?", False, False),
    ("What are the GPCIs for Seattle?", False, False),
    ("the GAF of Manhattan", False, True),
    ("Does the gaffe in the rule matter?", False, False),
])
def test_which_questions_count_or_ask_a_gaf(text, counted, gaf):
    assert (asks_locality_count(text), asks_gaf(text)) == (counted, gaf)


def test_a_city_read_with_its_state_is_priced_there(backends):
    """"Bend OR vs Portland OR": Bend (a word, left out of the city table) was not read, so only Portland was shown."""
    prepared = prepare("Compare 99213 in Bend OR vs Portland OR 2026", backends, today=TODAY)
    places = {" ".join(r.locality.split()[:2]) for r in prepared.rows if r.in_focus and r.locality}
    assert places == {"OR 99", "OR 01"}, places
    assert "OR 99 REST OF OREGON pays" in said(prepared)
