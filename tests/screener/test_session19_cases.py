"""Classes a sixteenth probing round found (session 19, /tmp/probe_screen16), each a class of intakes: VA pension is
never judged for a child the person screened cares for (V1); a likely or possibly result judged for the person cared
for is labelled as theirs in the summary table, the "someone I care for" warning names VA pension when it was judged
for them, and the VA card says why it moved (J2).

Real rules and figures from data/programs (programs.md: section 10 rows 1-2 and the "veteran or surviving spouse"
category; sections 2-5 age rows: MAC, TSOA and PACE 55+, COPES 18+; section 9 row 2, FCSP 18+).
"""
from __future__ import annotations

from datetime import date
from html import escape

import pytest

from carenav_core.screener.assemble import run_screen
from carenav_core.screener.engine import Classification, own_results, screen
from carenav_core.screener.intake import load_intake_options
from carenav_core.screener.profile import answer_warnings, normalize
from carenav_core.screener.render import report_html, report_markdown
from carenav_core.screener.rules import va_pension
from carenav_core.screener.rules.base import Context, Status
from carenav_core.screener.thresholds import load_thresholds

L, P, X = Classification.LIKELY, Classification.POSSIBLY, Classification.EXCLUDED
ON = date(2026, 12, 3)
VA = "va_pension"
CARE = ("copes", "tsoa", "mac", "pace")
THEIRS, SCREENED = " — for the person they care for", " — for the person screened"
# x02: myself, 66, not a veteran, caring for a relative of 16 (Pierce)
X02 = {"apple_health": "none", "extra_help": "no", "disability": "no", "veteran_status": "no", "pays_for_heating": "yes",
       "adl_help": "none", "nursing_facility_level_of_care": "not_assessed", "caring_for_someone": "yes",
       "screening_for": "myself", "has_unpaid_caregiver": "no", "age": 66, "household_size": 2,
       "marital_status": "single", "medicare_parts": ["A", "B", "D"], "living_situation": "own_home", "county": "Pierce",
       "monthly_income": "1500-1732", "assets": "0-2000", "care_recipient_age": 16, "care_relationship": "other_relative"}
# n06 / n01: someone mode, a mother of 78 (not a veteran, at nursing-facility level of care) screened by her child of
# 50; she cares for a grandchild of 12 (n06) or her husband of 82 (n01)
N06 = {"apple_health": "none", "extra_help": "no", "disability": "no", "veteran_status": "no", "pays_for_heating": "yes",
       "adl_help": ["bathing", "dressing"], "nursing_facility_level_of_care": "assessed_yes",
       "caring_for_someone": "yes", "screening_for": "someone_i_care_for", "age": 78, "household_size": 2,
       "marital_status": "married", "medicare_parts": ["A", "B", "D"], "living_situation": "own_home",
       "county": "Yakima", "monthly_income": "2200-2351", "assets": "0-2000", "care_recipient_age": 12,
       "care_relationship": "other_relative", "caregiver_age": 50}
N01 = {**N06, "care_recipient_age": 82, "care_relationship": "spouse"}
N04 = {**N06, "care_recipient_age": 99, "care_relationship": "parent"}
# j01: myself, 64, not disabled, not a veteran, caring for a friend of 50 (King)
J01 = {**X02, "age": 64, "household_size": 1, "medicare_parts": "none", "living_situation": "rented_home",
       "county": "King", "care_recipient_age": 50, "care_relationship": "friend_or_neighbor"}
MODES = {"myself": X02, "someone_i_care_for": N06}


def answers_for(mode: str, cared_for_age: object) -> dict:
    return {**MODES[mode], "care_recipient_age": cared_for_age}


def own(answers: dict) -> dict:
    return own_results(screen(normalize(answers), on=ON))


def report(answers: dict):
    return run_screen(normalize(answers), on=ON, search=None)


def context() -> Context:
    return Context(thresholds=load_thresholds(), on=ON, options=load_intake_options())


# ---- V1. VA pension is never judged for a child the person screened cares for

@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("child", [0, 5, 9, 12, 15, 16, 17])
def test_va_pension_does_not_fall_back_to_a_child_the_non_veteran_cares_for(mode, child):
    """programs.md section 10: the pension is a veteran's or a veteran's surviving spouse's, and a child is neither.
    The person screened's own exclusion stands, with no card asking whether a child is a veteran."""
    answers = answers_for(mode, child)
    found = screen(normalize(answers), on=ON)
    assert not [r for r in found if r.program.key == VA and r.for_care_receiver], (mode, child)
    va = own_results(found)[VA]
    assert va.classification is X and not va.for_care_receiver and va.replaces is None
    assert any(o.verdict.reason == "not a veteran" for o in va.failed_rules)
    shown = report(answers)
    assert VA not in {c.program for c in shown.cards}
    listed = next(e for e in shown.excluded if e.program == VA)
    assert listed.name == va.program.name and "not a veteran" in listed.failed_rules[0]   # the person screened's own
    assert not any(va.program.name in w for w in shown.warnings)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("cared_for", [18, 19, 45, 82])
def test_va_pension_still_falls_back_to_an_adult_the_non_veteran_cares_for(mode, cared_for):
    """Control (x03 at 18): from 18 the person cared for may be a veteran or a surviving spouse; VA is judged for them
    and left open on their status, as before."""
    va = own(answers_for(mode, cared_for))[VA]
    assert va.for_care_receiver and va.classification is P, (mode, cared_for)
    assert "veteran_status" in va.unknown_fields


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("unknown_age", ["dont_know", "prefer_not_to_say", None])
def test_an_unknown_age_of_the_person_cared_for_keeps_va_open_and_asks_the_age(mode, unknown_age):
    """An age not given keeps today's result (possibly relevant, judged for the person cared for), with the age among
    what it asks: the age (and so whether they are an adult) decides whether the pension can be theirs."""
    answers = {k: v for k, v in answers_for(mode, unknown_age).items() if v is not None}
    va = own(answers)[VA]
    assert va.for_care_receiver and va.classification is P
    assert "age" in va.unknown_fields and "veteran_status" in va.unknown_fields


@pytest.mark.parametrize("child", [3, 17])
def test_a_veteran_without_wartime_service_caring_for_a_child_keeps_their_own_exclusion(child):
    answers = {**X02, "veteran_status": "veteran", "wartime_service": "no", "care_recipient_age": child}
    va = own(answers)[VA]
    assert va.classification is X and not va.for_care_receiver
    assert any(o.verdict.reason == "no wartime service" for o in va.failed_rules)


@pytest.mark.parametrize(("age", "status"), [(12, Status.FAIL), (17, Status.FAIL), (18, Status.UNKNOWN),
                                             (82, Status.UNKNOWN)])
def test_the_veteran_criterion_fails_for_a_person_cared_for_under_18(age, status):
    receiver = normalize(answers_for("myself", age)).care_receiver()
    outcome = va_pension.veteran_or_surviving_spouse.evaluate(receiver, context())
    assert outcome.status is status
    if status is Status.FAIL:
        assert f"age {age}" in outcome.verdict.reason and "neither a veteran nor a veteran's surviving spouse" in \
            outcome.verdict.reason


def test_an_answered_veteran_status_is_kept_whatever_the_age():
    """The rule reads a child's age only where the status is not known; an answer given stands (the age warning asks
    to check it)."""
    screened = normalize({**X02, "age": 17, "veteran_status": "veteran", "caring_for_someone": "no",
                          "care_recipient_age": None, "care_relationship": None})
    outcome = va_pension.veteran_or_surviving_spouse.evaluate(screened, context())
    assert outcome.status is Status.PASS
    assert any("age given is 17" in w for w in answer_warnings(screened, on=ON))


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("child", [5, 12, 17])
def test_every_care_program_judged_for_a_child_is_excluded_on_its_own_age_row(mode, child):
    """The other fallbacks to the person cared for (the care programs, engine.screen_program and
    also_for_care_receiver): programs.md sections 2, 3 and 5 (55+) and section 4 (18+, or 65+) exclude a child on
    the age row; none is left open for them."""
    found = screen(normalize(answers_for(mode, child)), on=ON)
    theirs = {r.program.key: r for r in found if r.for_care_receiver}
    assert set(theirs) == set(CARE), (mode, child)
    for key, result in theirs.items():
        assert result.classification is X, key
        assert result.failed_rules[0].rule in ("aged_55_or_older", "care_receiver_55_or_older",
                                               "aged_65_or_disabled_adult"), key
        assert f"age {child}" in result.failed_rules[0].verdict.reason


# ---- J2. A result judged for the person cared for is labelled as theirs in the summary

def _rows(shown) -> dict[str, str]:
    return {r.program: r.result for r in shown.summary}


@pytest.mark.parametrize("answers", [J01, N01, N04, {**X02, "care_recipient_age": 18}], ids=["j01", "n01", "n04", "x03"])
def test_every_summary_row_names_whom_it_was_judged_for_when_that_is_not_plainly_the_person_screened(answers):
    shown = report(answers)
    found = screen(normalize(answers), on=ON)
    by_name = {c.name: c for c in shown.cards}
    card_rows = shown.summary[:len(shown.cards)]
    assert len(card_rows) == len(shown.cards)
    for row, card in zip(card_rows, shown.cards):
        both = sum(1 for r in found if r.program.key == card.program) == 2
        if card.judged_for:
            assert row.program.endswith(THEIRS), row.program
        elif both:
            assert row.program.endswith(SCREENED), row.program
        else:
            assert not row.program.endswith((THEIRS, SCREENED)), row.program
        assert row.program.startswith(card.name) and card.name in by_name
    assert any(r.program.endswith(THEIRS) and r.result != "Not likely to apply" for r in shown.summary)


def test_j01_rows_for_the_friend_cared_for_are_labelled_and_own_rows_are_not():
    rows = _rows(report(J01))
    assert rows["COPES waiver (Community Options Program Entry System)" + THEIRS] == "Possibly relevant"
    assert rows["VA pension with Aid & Attendance / Housebound" + THEIRS] == "Possibly relevant"
    assert rows["Basic Food (SNAP)"] == "Likely relevant"
    assert "COPES waiver (Community Options Program Entry System)" not in rows


def test_n01_markdown_html_and_json_label_va_for_the_husband():
    shown = report(N01)
    va_name = "VA pension with Aid & Attendance / Housebound"
    text = report_markdown(shown)
    assert f"| {va_name}{THEIRS} | Possibly relevant |" in text
    assert f"| {va_name} | Possibly relevant |" not in text
    assert f"| Tailored Supports for Older Adults (TSOA){SCREENED} | Likely relevant |" in text
    assert f"<td>{escape(va_name + THEIRS)}</td><td>Possibly relevant</td>" in report_html(shown)
    data = shown.to_dict()
    va_card = next(c for c in data["cards"] if c["program"] == VA)
    assert va_card["name"] == va_name and va_card["judged_for"] == "the person they care for"
    assert f"{va_name}{THEIRS}" in {r["program"] for r in data["summary"]}


def test_n04_pace_for_the_parent_and_for_the_person_screened_are_told_apart():
    rows = _rows(report(N04))
    pace = "PACE (Program of All-inclusive Care for the Elderly)"
    assert rows[pace + THEIRS] == "Possibly relevant"
    assert rows[pace + SCREENED] == "Not likely to apply"
    assert pace not in rows


@pytest.mark.parametrize(("answers", "named"), [
    (N01, True),                                                     # not a veteran: VA judged for the husband
    (N04, True),                                                     # caring for a parent of 99
    ({**N01, "veteran_status": "surviving_spouse", "marital_status": "married"}, True),   # remarried survivor
    (N06, False),                                                    # a grandchild of 12: not judged for them
    ({**N01, "veteran_status": "veteran", "wartime_service": "yes"}, False),               # her own VA not excluded
])
def test_the_someone_i_care_for_warning_names_va_pension_when_it_was_judged_for_the_person_cared_for(answers, named):
    warning = next(w for w in answer_warnings(normalize(answers), on=ON) if "also say that person is a caregiver" in w)
    assert "COPES, TSOA, MAC, PACE" in warning
    assert ("VA pension with Aid & Attendance / Housebound is judged for the person they care for" in warning) is named
    if named:
        assert own(answers)[VA].for_care_receiver


def test_the_va_card_says_it_moved_because_the_person_screened_is_excluded():
    shown = report(N01)
    moved = own(N01)[VA]
    assert moved.replaces is not None and moved.replaces.classification is X and not moved.replaces.for_care_receiver
    va = next(c for c in shown.cards if c.program == VA)
    assert "not a veteran" in va.judged_for_because and "the person screened" in va.judged_for_because
    text = report_markdown(shown)
    assert "_Judged for the person they care for: the person screened is not likely to qualify themselves " \
           "(Veteran or surviving spouse — not a veteran)" in text
    assert "the program serves the person receiving care" not in text.split(f"## {va.name}")[1].split("\n## ")[0]
    assert "the person screened is not likely to qualify themselves" in report_html(shown)


def test_a_care_program_card_for_the_person_cared_for_keeps_its_own_reason():
    shown = report(J01)
    copes = next(c for c in shown.cards if c.program == "copes")
    assert copes.judged_for == "the person they care for"
    assert copes.judged_for_because == "the program serves the person receiving care"
    assert "_Judged for the person they care for: the program serves the person receiving care._" in \
        report_markdown(shown)


# a25 (round 17): myself, 70, not a veteran, caring "no" but the age (80) and relationship of a person cared for given
A25 = {**X02, "age": 70, "household_size": 1, "caring_for_someone": "no", "county": "Snohomish",
       "living_situation": "rented_home", "care_recipient_age": 80, "care_relationship": "friend_or_neighbor"}


@pytest.mark.parametrize("answers, moves", [(A25, True), ({**A25, "care_recipient_age": 12}, False),
                                            ({**A25, "veteran_status": "veteran", "wartime_service": "yes"}, False)])
def test_a_contradicted_caring_answer_says_what_it_would_move_when_it_leaves_programs_open(answers, moves):
    """W1: "cares for no one" contradicted by a person cared for's age and relationship: the warning that lists what
    the answer leaves open also says that, were they a caregiver, VA pension would be judged for that person in the
    person screened's place (never for a child; not when the person screened's own VA result stands)."""
    warning = next(w for w in answer_warnings(normalize(answers), on=ON) if "not caring for anyone" in w)
    assert "left open" in warning or "come out the same" in warning
    assert ("VA pension" in warning and "in place of the person screened" in warning) is moves
