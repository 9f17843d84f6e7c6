"""Chat: valuation evidence first, then streamed prose checked sentence by sentence. ?q=... reproduces."""
import streamlit as st

from carenav_core.chat.pipeline import answer
from carenav_core.ui.chat_view import render_live, render_turn
from carenav_core.ui.resources import app_backends, app_settings, require_fee_db, warm_backends


settings = app_settings()
con = require_fee_db(settings)
warm_backends(settings)
st.title("Chat with valuation evidence")
st.caption("Ask about a HCPCS/CPT code (G0556, 99490), a family (APCM, chronic care management) or a rule. "
           "Tables come from the CMS fee-schedule files; prose cites them and Federal Register paragraphs.")
turns = st.session_state.setdefault("turns", [])
for index, turn in enumerate(turns):
    render_turn(turn, key=str(index))

EXAMPLES = ("What is APCM and how is it valued?", "How has 99490 been paid since 2023?",
            "What does the CY2025 final rule say about telehealth?")
question = st.chat_input("Ask about Medicare PFS valuation…")
if not turns and not st.query_params.get("q"):
    st.caption("Try one of these:")
    for column, example in zip(st.columns(len(EXAMPLES)), EXAMPLES):
        if column.button(example, key=f"example-{example}", width="stretch"):
            question = example
from_url = st.query_params.get("q")
linked_build = st.query_params.get("build") if question is None else None
if question is None and from_url and not st.session_state.get("url_answered"):
    question = from_url
st.session_state["url_answered"] = True
if question:
    st.query_params["q"] = question
    events = answer(question, app_backends(settings, con))
    done = render_live(question, events, key=str(len(turns)))
    turns.append(done)
    if linked_build and done.build_id and linked_build != done.build_id:
        st.info(f"The fee-schedule data changed since this link was made: the link was made on build "
                f"{linked_build}, this answer uses build {done.build_id}. Figures may differ from what the "
                "sender saw.")
    if done.build_id:
        st.query_params["build"] = done.build_id        # the shared link says which data it was made with
