"""Rendering of chat answers: the valuation table first, then prose, then provenance and sources."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

import streamlit as st

from carenav_core.chat.events import (ChatEvent, DoneEvent, SourcesEvent, TokenEvent, ValuationEvent,
                                      WarningEvent)
from carenav_core.pfs.rows import AMA_NOTICE, shows_cpt
from carenav_core.ui.tables import DISPLAY, column_config, csv_bytes, valuation_frame

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$])")


def plain(text: str) -> str:
    """Text shown literally through st.markdown: markdown and HTML characters escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


@dataclass(kw_only=True)
class Turn:
    """One question and everything its answer showed, kept in st.session_state for reruns."""
    question: str
    valuation: ValuationEvent | None = None
    text: str = ""
    warnings: list[WarningEvent] = field(default_factory=list)
    sources: SourcesEvent | None = None
    writer: str = ""


def render_valuation(event: ValuationEvent, key: str) -> None:
    st.markdown(f"**Valuation evidence** for {', '.join(event.codes)}"
                + (f" (families: {', '.join(event.families)})" if event.families else ""))
    if event.rows:
        frame = valuation_frame(list(event.rows))
        st.dataframe(frame[DISPLAY], column_config=column_config(st), hide_index=True, width="stretch")
        st.download_button("Download table (CSV with provenance)", csv_bytes(list(event.rows)),
                           file_name="carenav_valuation.csv", mime="text/csv", key=f"csv-{key}")
    if event.unpriced:
        st.info("Not priced: " + ", ".join(event.unpriced) + " appear in no loaded CMS release.")
    if shows_cpt(list(event.rows)):
        st.caption(AMA_NOTICE)


def render_after(turn: Turn) -> None:
    """Warnings, who wrote the prose, and the Provenance and Sources expanders."""
    for warning in turn.warnings:
        if warning.kind != "withheld":
            st.warning(warning.message)
    withheld = sum(w.kind == "withheld" for w in turn.warnings)
    st.caption(("Written by the deterministic writer: no language model wrote this answer."
                if turn.writer == "deterministic" else f"Written by {turn.writer}; every sentence was checked.")
               + (f" {withheld} sentence(s) withheld by the output guard." if withheld else ""))
    if turn.valuation and turn.valuation.provenance:
        with st.expander("Provenance"):
            for line in turn.valuation.provenance:
                st.markdown(f"{plain(line.label)} — [{line.fr_citation}]({line.fr_url}) ({line.rule_id}); "
                            f"conversion factor {plain(str(line.cf))} ({plain(line.cf_label)})")
    with st.expander("Sources"):
        if not turn.sources or not (turn.sources.cited or turn.sources.also_retrieved):
            st.write("No rule text was retrieved for this question.")
            return
        for heading, group in (("Cited", turn.sources.cited), ("Also retrieved", turn.sources.also_retrieved)):
            if group:
                st.markdown(f"**{heading}**")
            for source in group:
                st.markdown(f"{plain(source.label)} [{plain(source.title[:90])}]({source.url}) — {source.kind}, "
                            f"{source.published}  \n> {plain(source.text[:400])}")


def render_turn(turn: Turn, key: str) -> None:
    """A past turn, re-rendered on a rerun."""
    with st.chat_message("user"):
        st.markdown(plain(turn.question))
    with st.chat_message("assistant"):
        if turn.valuation:
            render_valuation(turn.valuation, key)
        st.markdown(turn.text)
        render_after(turn)


def render_live(question: str, events: Iterator[ChatEvent], key: str) -> Turn:
    """Stream one answer: valuation before any token, prose through st.write_stream, then the rest."""
    turn = Turn(question=question)
    with st.chat_message("user"):
        st.markdown(plain(question))
    with st.chat_message("assistant"):
        first_token = None
        for event in events:
            if isinstance(event, TokenEvent):
                first_token = event
                break
            _absorb(turn, event, key)
        turn.text = st.write_stream(_tokens(turn, first_token, events, key)) if first_token else ""
        render_after(turn)
    return turn


def _tokens(turn: Turn, first: TokenEvent, events: Iterator[ChatEvent], key: str) -> Iterator[str]:
    yield first.text
    for event in events:
        if isinstance(event, TokenEvent):
            yield event.text
        else:
            _absorb(turn, event, key)


def _absorb(turn: Turn, event: ChatEvent, key: str) -> None:
    if isinstance(event, ValuationEvent):
        turn.valuation = event
        render_valuation(event, key)
    elif isinstance(event, WarningEvent):
        turn.warnings.append(event)
    elif isinstance(event, SourcesEvent):
        turn.sources = event
    elif isinstance(event, DoneEvent):
        turn.writer = event.writer
