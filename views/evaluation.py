"""Evaluation: the chat harness and the screener harness side by side (run, progress, results, JSON)."""
import json

import pandas as pd
import streamlit as st

from carenav_core.errors import CareNavError
from carenav_core.eval.answers import intent_rows, run_answers_evaluation
from carenav_core.eval.chat import oracle_for, run_chat_evaluation
from carenav_core.eval.report import (chat_metrics, eval_command, saved_results, saved_results_path,
                                     screener_metrics)
from carenav_core.screener.commands import evaluation_search
from carenav_core.screener.evaluation import run_evaluation
from carenav_core.ui.resources import app_backends, app_settings, app_store, fee_db

settings = app_settings()
st.title("Evaluation")
st.caption("Both harnesses drive the real `ollama` client against a scripted model on 127.0.0.1: no real model "
           "and no network. The chat harness also uses the built fee-schedule database and rule-text index.")


def bar_progress(label: str):
    bar = st.progress(0.0, text=label)
    return lambda done, total, message: bar.progress(done / total if total else 1.0, text=f"{done}/{total} {message}")


def show(harness: str, metrics) -> None:
    """The latest results of `harness` (this session's run, else the saved file), with a download."""
    results = st.session_state.get(f"eval_{harness}")
    origin = "this session's run"
    if results is None:
        results, origin = saved_results(settings, harness), f"saved {saved_results_path(settings, harness).name}"
    if results is None:
        st.info("No results yet: run the harness (or save results with "
                f"`carenav eval {eval_command(harness)} --out {saved_results_path(settings, harness)}`).")
        return
    (st.success if results.get("passed") else st.error)(
        f"{'Passed' if results.get('passed') else 'Failed'} ({origin}, seed {results.get('seed')})")
    st.dataframe(pd.DataFrame(metrics(results)), hide_index=True, placeholder="—", width="stretch",
                 column_config={"ok": st.column_config.CheckboxColumn("ok")})
    st.download_button("Download JSON", json.dumps(results, indent=2, ensure_ascii=False), key=f"download_{harness}",
                       file_name=f"{harness}_results.json", mime="application/json")


def run_on_fee_db(key: str, what: str, run) -> None:
    """Run a harness that asks questions (`run(backends)`) and keep its results in session state under `key`;
    a missing fee-schedule database or a harness error is shown, not raised."""
    con = fee_db(settings)
    if con is None:
        st.warning("No fee-schedule database is built yet: build it on the Data page first.")
        return
    try:
        st.session_state[key] = run(app_backends(settings, con))
    except CareNavError as exc:
        st.error(f"The {what} could not run: {exc}")


chat, screener = st.columns(2)
with chat:
    st.subheader("Chat harness")
    seed = st.number_input("Seed", value=7, step=1, key="chat_seed")
    count = st.number_input("Questions", min_value=1, max_value=180, value=180, step=10, key="chat_questions")
    if st.button("Run the chat harness", type="primary", key="run_chat"):
        run_on_fee_db("eval_chat", "chat harness", lambda backends: run_chat_evaluation(
            backends, oracle_for(settings), seed=int(seed), questions=int(count),
            progress=bar_progress("Asking the golden questions")))
    show("chat", chat_metrics)

with screener:
    st.subheader("Screener harness")
    screener_seed = st.number_input("Seed", value=7, step=1, key="screener_seed")
    families = st.number_input("Families", min_value=1, max_value=1000, value=100, step=10, key="screener_families")
    if st.button("Run the screener harness", type="primary", key="run_screener"):
        st.session_state["eval_screener"] = run_evaluation(
            seed=int(screener_seed), families=int(families), search=evaluation_search(app_store(settings)),
            progress=bar_progress("Screening synthetic families"))
    show("screener", screener_metrics)


st.subheader("Answer usefulness")
st.caption("`carenav eval answers`: the questions of data/eval/answers.toml, each with the facts a useful answer must "
           "contain (figures, computed comparisons, code lists, definition phrases, a cited paragraph), scored on the "
           "released prose and the table. Targets: ≥ 90% of facts, 0 off-topic quotes, 0 hostile sentences shown.")
answers_writer = st.radio("Writer", ["deterministic", "scripted"], horizontal=True, key="answers_writer",
                          help="deterministic: no model; scripted: the scripted model double (faithful and hostile replies)")
answers_seed = st.number_input("Seed", value=7, step=1, key="answers_seed")
answers_count = st.number_input("Questions", min_value=1, max_value=200, value=200, step=10, key="answers_questions",
                                help="the first N questions of data/eval/answers.toml (all when N is larger)")
if st.button("Run the answer-usefulness harness", type="primary", key="run_answers"):
    run_on_fee_db(f"eval_answers_{answers_writer}", "answer-usefulness harness", lambda backends: run_answers_evaluation(
        backends, oracle_for(settings), writer=answers_writer, seed=int(answers_seed), questions=int(answers_count),
        progress=bar_progress("Asking the answer-usefulness questions")))
show(f"answers_{answers_writer}", intent_rows)
