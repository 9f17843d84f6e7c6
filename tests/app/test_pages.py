"""AppTest of every page, started from app.py, on the real databases."""

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from carenav_core.settings import PROJECT_ROOT

APP = str(PROJECT_ROOT / "app.py")
APCM = "What is APCM and how is it valued?"


def started(page: str | None = None, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def kinds(at: AppTest) -> list[str]:
    return [type(e).__name__ for e in at.main]


def test_chat_table_before_prose_and_both_expanders(app_env):
    at = started()
    at.chat_input[0].set_value(APCM).run()
    assert not at.exception
    order = kinds(at)
    table = order.index("Dataframe")
    prose = next(i for i, e in enumerate(at.main) if "No language model wrote this answer" in str(getattr(e, "value", "")))
    assert table < prose
    frame = at.dataframe[0].value                      # the asked rows: the family's codes, newest year
    assert set(frame["hcpcs"]) == {"G0556", "G0557", "G0558"}
    assert set(frame["vintage_label"]) == {"CY2026 final RVU26C"}
    shown = {v for f in at.dataframe if "vintage_label" in f.value for v in f.value["vintage_label"]}
    assert shown == {"CY2025 final RVU25D", "CY2026 final RVU26C"}   # other years one click away
    assert {"Provenance", "Sources"} <= {e.label for e in at.expander}
    assert at.query_params["q"] == [APCM] or at.query_params["q"] == APCM


def test_query_param_reproduces_the_answer(app_env):
    at = started(q=APCM)
    assert at.dataframe and "G0556" in set(at.dataframe[0].value["hcpcs"])
    assert {"Provenance", "Sources"} <= {e.label for e in at.expander}


def test_a_shared_link_records_its_build_and_says_when_the_data_changed(app_env):
    at = started(q=APCM)
    build = at.query_params["build"]
    build = build[0] if isinstance(build, list) else build
    assert len(build) == 12 and "changed" not in " ".join(str(i.value) for i in at.info)
    old = started(q=APCM, build="0123456789ab")
    notes = " ".join(str(i.value) for i in old.info)
    assert "changed since this link was made" in notes and "0123456789ab" in notes and build in notes


def test_question_without_codes_has_no_table(app_env):
    at = started(q="What does the CY2025 final rule say about telehealth?")
    assert not at.dataframe
    assert "Sources" in {e.label for e in at.expander} and "Provenance" not in {e.label for e in at.expander}


def test_a_conversion_factor_question_shows_the_factors_table_first(app_env):
    at = started(q="How has the conversion factor changed since 2020?")
    order = kinds(at)
    prose = next(i for i, e in enumerate(at.main) if "No language model wrote this answer" in str(getattr(e, "value", "")))
    assert order.index("Dataframe") < prose
    frame = at.dataframe[0].value
    asked = frame[frame["Asked"]]
    assert {"CY2020", "CY2025"} <= {label[4:-1] for label in asked["Cite as"]}
    assert float(frame.loc[frame["Cite as"] == "[CF CY2020]", "Conversion factor"].iloc[0]) == 36.0896
    assert "[CF CY2026 proposed non-QP]" in set(frame["Cite as"]) - set(asked["Cite as"])    # context, not asked
    rerun = started(q="How has the conversion factor changed since 2020?")
    assert rerun.dataframe[0].value.equals(frame)


def test_html_in_question_is_shown_as_text(app_env):
    at = started(q="<b>bold</b><script>alert(1)</script> G0556")
    shown = [e.value for e in at.markdown if "script" in str(e.value)]
    assert shown and all("<script>" not in v for v in shown)          # escaped, never raw HTML


@pytest.mark.parametrize("page", ["views/codes.py", "views/data.py", "views/screen.py"])
def test_every_page_renders(app_env, page):
    started(page)


def test_codes_page_shareable_codes(app_env):
    at = started("views/codes.py")
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["codes"] = "G0556,G0557"
    at.run()
    at.switch_page("views/codes.py").run()
    assert not at.exception
    frame = at.dataframe[0].value
    assert set(frame["hcpcs"]) == {"G0556", "G0557"}


def test_two_sessions_do_not_share_state(app_env):
    first, second = started(), started()
    first.chat_input[0].set_value(APCM).run()
    second.chat_input[0].set_value("What about 99490?").run()
    assert set(first.dataframe[0].value["hcpcs"]) == {"G0556", "G0557", "G0558"}
    assert "99490" in set(second.dataframe[0].value["hcpcs"]) and "G0556" not in set(second.dataframe[0].value["hcpcs"])
    assert len(first.session_state["turns"]) == 1 and len(second.session_state["turns"]) == 1


@pytest.mark.parametrize("page", [None, "views/codes.py", "views/data.py"])
def test_without_a_database_every_page_offers_the_build(tmp_path, monkeypatch, page):
    monkeypatch.setenv("CARENAV_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("CARENAV_DATABASE_URL", "postgresql+psycopg://x:y@127.0.0.1:9/none")
    monkeypatch.delenv("CARENAV_DUCKDB_PATH", raising=False)
    st.cache_resource.clear()
    at = started(page)
    assert any("No fee-schedule database is built yet" in w.value for w in at.warning)
    assert any(b.label == "Build the data now" for b in at.button)
    st.cache_resource.clear()


def test_example_question_button_asks_it(app_env):
    at = started()
    button = next(b for b in at.button if b.label == "What is APCM and how is it valued?")
    button.click().run()
    assert not at.exception
    assert at.dataframe and "G0556" in set(at.dataframe[0].value["hcpcs"])
    assert at.query_params["q"] in ([APCM], APCM)
