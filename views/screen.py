"""Screen page: intake form -> screener core -> one card per candidate. Answers live in the URL."""
from __future__ import annotations

from datetime import date

import streamlit as st

from carenav_core.errors import CareNavError
from carenav_core.screener.assemble import Card, Report, run_screen
from carenav_core.screener.edges import program_search
from carenav_core.screener.intake import (DECLINED, DONT_KNOW, LIST_FIELDS, Answers, answers_to_params, choices,
                                          params_to_answers)
from carenav_core.screener.profile import normalize
from carenav_core.screener.render import report_markdown
from carenav_core.ui.resources import app_model, app_settings, app_store


SPECIAL = {"": "—", DONT_KNOW: "Don't know", DECLINED: "Prefer not to say"}


def _label(value: str) -> str:
    return SPECIAL.get(value, value.replace("_", " "))


def _widget(field: str, current: object) -> object:
    """One intake question; every question offers don't-know and prefer-not-to-say."""
    question = Answers.model_fields[field].description or field
    if field in LIST_FIELDS:
        options = [*choices(field), DONT_KNOW, DECLINED]
        default = current if isinstance(current, list) else ([current] if current in options else [])
        picked = st.multiselect(question, options, default=default, format_func=_label, key=f"q_{field}")
        specials = [p for p in picked if p in ("none", DONT_KNOW, DECLINED)]
        return specials[0] if specials else (picked or None)
    options = ["", *choices(field), DONT_KNOW, DECLINED]
    shown = str(current) if current is not None else ""
    picked = st.selectbox(question, options, index=options.index(shown) if shown in options else 0,
                          format_func=_label, key=f"q_{field}")
    return picked or None


def _intake(current: dict) -> dict | None:
    with st.form("intake"):
        columns = st.columns(3)
        answers = {}
        for position, field in enumerate(Answers.model_fields):
            with columns[position % 3]:
                answers[field] = _widget(field, current.get(field))
        submitted = st.form_submit_button("Screen", type="primary")
    return params_to_answers(answers_to_params(answers)) if submitted else None


def _card(card: Card) -> None:
    with st.container(border=True):
        st.subheader(card.name)
        st.markdown(f"**{card.classification.replace('_', ' ')}** · confidence {card.confidence} · "
                    f"[official page]({card.official_url})")
        if card.retrieval_failed:
            st.warning("The program details could not be verified in the program documents.")
        st.write(card.summary)
        for title, items in (("Why", card.why), ("What is missing", card.missing),
                             ("What would change it", card.what_would_change),
                             ("Information still needed", card.still_needed)):
            if items:
                st.markdown(f"**{title}**\n" + "\n".join(f"- {i}" for i in items))
        if card.citations:
            st.markdown("**Sources**\n" + "\n".join(f"- [{c.heading}]({c.source_url}) `{c.chunk_id}`"
                                                    for c in card.citations))


def _render(report: Report) -> None:
    st.info(report.disclaimer)
    for card in report.cards:
        _card(card)
    if report.excluded:
        st.subheader("Not likely to apply")
        st.markdown("\n".join(f"- **{e.name}**: {'; '.join(e.failed_rules)}" for e in report.excluded))
    if report.follow_up_questions:
        st.subheader("Questions to ask next")
        st.markdown("\n".join(f"- {q}" for q in report.follow_up_questions))
    st.download_button("Download report (Markdown)", report_markdown(report), file_name="carenav-screen.md",
                       mime="text/markdown")


st.title("Screen for Washington programs")
st.caption("For care navigators. Do not enter names or other identifying details.")
submitted = _intake(params_to_answers(st.query_params.to_dict()))
if submitted is not None:
    st.query_params.from_dict(answers_to_params(submitted))
answers = submitted if submitted is not None else params_to_answers(st.query_params.to_dict())
if answers:
    try:
        settings = app_settings()
        report = run_screen(normalize(answers), on=date.today(), search=program_search(app_store(settings)),
                            model=app_model(settings))

    except CareNavError as exc:
        st.error(f"The answers could not be screened: {exc}")
    else:
        _render(report)
