"""The Screen page runs headless through AppTest: plain-language sections, conditional questions, a
screen reproduced from URL answers, a notice when a figure is not on file, and errors not crashes."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "views" / "screen.py")
INTERNAL = ("nursing_facility_level_of_care", "monthly_income", "has no value in force", "_relevant", "care_recipient")


def _page(**params: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update(params)
    return at.run()


def _visible_text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [s.value for s in at.subheader] + [w.value for w in at.warning]
    parts += [c.value for c in at.caption] + [s.label for s in at.selectbox] + [n.label for n in at.number_input]
    return "\n".join(parts)


def test_page_renders_the_form_in_sections_without_answers():
    at = _page()
    assert not at.exception
    assert at.title[0].value.startswith("Screen")
    assert not at.subheader  # nothing screened yet
    sections = [m.value for m in at.markdown]
    assert "**Who is this screening for**" in sections and "**Military service**" in sections
    assert at.number_input(key="q_age").label == "How old is the person?"
    assert "$1,000 – $1,299 a month" in at.selectbox(key="q_monthly_income").options  # options as shown


def test_questions_that_do_not_apply_are_not_shown():
    at = _page()
    keys = {w.key for w in [*at.selectbox, *at.number_input]}
    assert "q_care_recipient_age" not in keys and "q_wartime_service" not in keys and "q_caregiver_age" not in keys
    at = _page(caring_for_someone="yes", veteran_status="veteran", screening_for="someone_i_care_for")
    keys = {w.key for w in [*at.selectbox, *at.number_input]}
    assert {"q_care_recipient_age", "q_wartime_service", "q_caregiver_age"} <= keys
    assert "q_has_unpaid_caregiver" not in keys


def test_answers_in_the_url_reproduce_the_screen_in_plain_words():
    at = _page(age="82", county="Lewis", veteran_status="no", adl_help="bathing,eating", on="2026-05-01")
    assert not at.exception
    headings = [s.value for s in at.subheader]
    assert "Summary" in headings and "Not likely to apply" in headings
    assert any("PACE" in m.value for m in at.markdown)  # excluded: Lewis County has no PACE area
    assert at.selectbox(key="q_county").value == "Lewis"
    text = _visible_text(at)
    assert not [word for word in INTERNAL if word in text]
    assert len(at.table) == 1


def test_a_figure_not_on_file_shows_a_notice_and_the_program_stays_possible():
    at = _page(age="70", medicare_parts="A,B", apple_health="none", marital_status="single", assets="0-2000",
               monthly_income="0-999", on="2029-02-01")
    assert not at.exception
    notices = [w.value for w in at.warning if w.value.startswith("Figure not on file")]
    assert any("Extra Help resource limit" in n and "February 1, 2029" in n for n in notices)


def test_bad_url_answers_show_an_error_not_a_crash():
    at = _page(age="400")
    assert not at.exception and at.error
    at = _page(age="70", on="yesterday")
    assert not at.exception and at.error


def test_unusual_answers_are_flagged():
    at = _page(age="30", medicare_parts="A", disability="no")
    assert any("Medicare before 65" in w.value for w in at.warning)
