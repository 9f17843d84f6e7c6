"""Rendering of chat answers: the valuation table first, then prose, then provenance and sources."""
from __future__ import annotations

import re
from typing import Iterator

import streamlit as st

from carenav_core.chat.answer import Answer
from carenav_core.chat.events import ChatEvent, TokenEvent, ValuationEvent
from carenav_core.pfs.rows import AMA_NOTICE, shows_cpt
from carenav_core.ui.tables import column_config, csv_bytes, valuation_frame

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$])")


def plain(text: str) -> str:
    """Text shown literally through st.markdown: markdown and HTML characters escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def render_valuation(event: ValuationEvent, key: str) -> None:
    st.markdown(f"**Valuation evidence** for {', '.join(event.codes)}"
                + (f" (families: {', '.join(event.families)})" if event.families else ""))
    if event.rows:
        frame = valuation_frame(list(event.rows))
        st.dataframe(frame, column_config=column_config(st), hide_index=True, width="stretch")
        st.download_button("Download table (CSV with provenance)", csv_bytes(list(event.rows)),
                           file_name="carenav_valuation.csv", mime="text/csv", key=f"csv-{key}")
    if event.unpriced:
        st.info("Not priced: " + ", ".join(event.unpriced) + " appear in no loaded CMS release.")
    if shows_cpt(list(event.rows)):
        st.caption(AMA_NOTICE)


def render_after(answer: Answer) -> None:
    """Warnings, who wrote the prose, and the Provenance and Sources expanders."""
    for warning in answer.warnings:
        st.warning(warning.message)
    withheld = len(answer.withheld)
    st.caption(("Written by the deterministic writer: no language model wrote this answer."
                if answer.writer == "deterministic" else f"Written by {answer.writer}; every sentence was checked.")
               + (f" {withheld} sentence(s) withheld by the output guard." if withheld else ""))
    if answer.provenance:
        with st.expander("Provenance"):
            for line in answer.provenance:
                st.markdown(f"{plain(line.label)} — [{line.fr_citation}]({line.fr_url}) ({line.rule_id}); "
                            f"conversion factor {plain(str(line.cf))} ({plain(line.cf_label)})")
    with st.expander("Sources"):
        if not answer.sources:
            st.write("No rule text was retrieved for this question.")
            return
        for heading, group in (("Cited", answer.cited), ("Also retrieved", answer.also_retrieved)):
            if group:
                st.markdown(f"**{heading}**")
            for source in group:
                st.markdown(f"{plain(source.label)} [{plain(source.title[:90])}]({source.url}) — {source.kind}, "
                            f"{source.published}  \n> {plain(source.text[:400])}")


def render_turn(answer: Answer, key: str) -> None:
    """A past answer, re-rendered on a rerun."""
    with st.chat_message("user"):
        st.markdown(plain(answer.question))
    with st.chat_message("assistant"):
        if answer.valuation:
            render_valuation(answer.valuation, key)
        st.markdown(answer.text)
        render_after(answer)


def render_live(question: str, events: Iterator[ChatEvent], key: str) -> Answer:
    """Stream one answer: valuation before any token, prose through st.write_stream, then the rest.
    Returns the folded Answer (kept in session state for reruns)."""
    seen: list[ChatEvent] = []
    with st.chat_message("user"):
        st.markdown(plain(question))
    with st.chat_message("assistant"):
        for event in events:
            seen.append(event)
            if isinstance(event, TokenEvent):
                break
            if isinstance(event, ValuationEvent):
                render_valuation(event, key)
        if seen and isinstance(seen[-1], TokenEvent):
            st.write_stream(_tokens(seen, events))
        answer = Answer.from_events(question, seen)
        render_after(answer)
    return answer


def _tokens(seen: list[ChatEvent], events: Iterator[ChatEvent]) -> Iterator[str]:
    yield seen[-1].text
    for event in events:
        seen.append(event)
        if isinstance(event, TokenEvent):
            yield event.text
