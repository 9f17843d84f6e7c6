"""The Evaluation page, started from app.py: saved results, a chat run with its progress, downloads."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from carenav_core.eval.report import saved_results_path
from carenav_core.screener.evaluation import run_evaluation
from carenav_core.settings import PROJECT_ROOT
from tests.app.conftest import app_env  # noqa: F401

PAGE = "views/evaluation.py"


@pytest.fixture
def saved_screener(app_env):  # noqa: F811
    """Screener results saved where `carenav eval screener --out` would put them for the page."""
    path = saved_results_path(app_env, "screener")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(run_evaluation(seed=7, families=6)))
    yield path
    path.unlink()


def opened() -> AppTest:
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def test_page_shows_saved_results_and_runs_the_chat_harness(saved_screener):
    at = opened()
    assert [s.value for s in at.subheader] == ["Chat harness", "Screener harness", "Answer usefulness"]
    assert any("No results yet" in i.value for i in at.info)                    # chat: nothing saved
    assert any("saved screener_results.json" in s.value for s in at.success)    # screener: the saved file
    at.number_input(key="chat_questions").set_value(8)
    at.button(key="run_chat").click().run()
    assert not at.exception, at.exception
    results = at.session_state["eval_chat"]
    assert results["questions"] == 8 and results["passed"]
    assert any("this session's run" in s.value for s in at.success)
    metrics = at.dataframe[0].value
    assert "valuation rows equal to the oracle" in set(metrics["metric"]) and metrics["ok"].dropna().all()
    assert len(at.get("download_button")) == 2


def test_screener_run_replaces_the_saved_results_in_the_session(app_env):  # noqa: F811
    at = opened()
    at.number_input(key="screener_families").set_value(6)
    at.button(key="run_screener").click().run()
    assert not at.exception, at.exception
    assert at.session_state["eval_screener"]["families"] == 6
    assert at.dataframe and "invented programs in reports" in set(at.dataframe[-1].value["metric"])


def test_answer_usefulness_shows_saved_results_per_intent(app_env):  # noqa: F811
    """Saved `carenav eval answers --writer scripted` results: one row per intent and overall, a download."""
    from carenav_core.eval.answers import AnswerScore, summarize
    scores = [AnswerScore(id="a", intent="lookup", text="q", mode="faithful", writer="w", facts=2, present=2,
                          from_table=2),
              AnswerScore(id="b", intent="compare", text="q", mode="wrong_number", writer="w", facts=3, present=1,
                          from_table=0, missing=["difference: d", "percent_change: p"], hostile_sent=1)]
    path = saved_results_path(app_env, "answers_scripted")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summarize(scores, writer="scripted", seed=7, elapsed=0.1)))
    try:
        at = opened()
        assert any("--writer deterministic" in i.value for i in at.info)      # nothing saved for that writer
        at.radio(key="answers_writer").set_value("scripted").run()
        assert not at.exception, at.exception
        table = at.dataframe[-1].value
        assert list(table["intent"]) == ["lookup", "compare", "overall"]
        assert list(table["facts present"]) == ["2/2", "1/3", "3/5"] and list(table["ok"]) == [True, False, False]
        assert any("Failed (saved answers_scripted_results.json" in e.value for e in at.error)
    finally:
        path.unlink()


def test_answer_usefulness_runs_from_the_page_with_the_scripted_model(app_env):  # noqa: F811
    at = opened()
    at.radio(key="answers_writer").set_value("scripted").run()
    at.number_input(key="answers_questions").set_value(3)
    at.button(key="run_answers").click().run()
    assert not at.exception, at.exception
    results = at.session_state["eval_answers_scripted"]
    assert results["questions"] == 3 and results["writer"] == "scripted" and results["overall"]["facts"] >= 3
    assert any("this session's run" in m.value for m in [*at.success, *at.error])
    assert list(at.dataframe[-1].value["intent"]) == ["lookup", "overall"]
