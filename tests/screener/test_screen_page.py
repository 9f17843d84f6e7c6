"""The Screen page runs headless through AppTest and reproduces a screen from URL answers."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "screen.py")


def test_page_renders_the_form_without_answers():
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    assert at.title[0].value.startswith("Screen")
    assert not at.subheader  # nothing screened yet


def test_answers_in_the_url_reproduce_the_screen():
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.query_params.update({"age": "82", "county": "Lewis", "veteran_status": "no", "adl_help": "bathing,eating"})
    at.run()
    assert not at.exception
    headings = [s.value for s in at.subheader]
    assert "Not likely to apply" in headings
    assert any("PACE" in m.value for m in at.markdown)  # excluded: Lewis County has no PACE area
    assert at.selectbox(key="q_county").value == "Lewis"


def test_bad_url_answers_show_an_error_not_a_crash():
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.query_params.update({"age": "400"})
    at.run()
    assert not at.exception and at.error
