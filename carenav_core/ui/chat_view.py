"""Rendering of chat answers: the valuation table first, then prose, then provenance and sources."""
from __future__ import annotations

import re
from typing import Iterator

import altair as alt
import pandas as pd
import streamlit as st

from carenav_core.chat.answer import Answer
from carenav_core.chat.events import ChatEvent, FactorEvent, ProgressEvent, TokenEvent, ValuationEvent, WarningEvent
from carenav_core.chat.deterministic import DATA_NOTE_KINDS
from carenav_core.chat.figures import CF_SETTING, Figure, FigureKind
from carenav_core.chat.plan import Intent
from carenav_core.pfs.rows import AMA_NOTICE, ValuationRow, shows_cpt
from carenav_core.ui.tables import column_config, csv_bytes, valuation_frame

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$])")
_URL = re.compile(r"https?://[A-Za-z0-9./:_~%?#=&+-]+[A-Za-z0-9/_~%#=&+-]")


def plain(text: str) -> str:
    """Text shown literally through st.markdown: markdown and HTML characters escaped; web addresses are
    kept whole as links (escaping their dots would show "www\\.cms\\.gov" and break the link)."""
    parts, at = [], 0
    for m in _URL.finditer(text):
        parts += [_MARKDOWN_SPECIAL.sub(r"\\\1", text[at:m.start()]), f"<{m.group(0)}>"]
        at = m.end()
    return "".join(parts) + _MARKDOWN_SPECIAL.sub(r"\\\1", text[at:])


def linked(text: str, links: dict[str, str]) -> str:
    """Prose with each citation that has an address turned into a link ("[89 FR 97899 ¶7](https://…)")."""
    return re.sub(r"\[([^\[\]\n]+)\](?!\()", lambda m: f"[{m.group(0)}]({links[m.group(0)]})"
                  if m.group(0) in links else m.group(0), text)


def citation_links(answer: Answer) -> dict[str, str]:
    """label -> address: a row's Federal Register citation, a paragraph's address."""
    links = {r.label: r.fr_url for r in answer.rows if r.fr_url}
    links.update({s.label: s.url for s in answer.sources if s.url})
    return links


def _figures_table(event: ValuationEvent, key: str) -> None:
    if not event.figures:
        return
    st.markdown("**Computed from the rows** (code computes; cite the label)")
    st.dataframe([{"Figure": f.describe(), "What": f.setting + (" (what moved the change)"
                                                                if f.kind is FigureKind.DRIVER else ""),
                   "Where": f.place or "national",
                   "Amount": float(f.inputs[0] if f.kind is FigureKind.EXTREME else f.value), "Unit": _unit(f),
                   "Percent": float(f.percent) if f.percent is not None else None, "Cite as": f.label}
                  for f in event.figures], hide_index=True, placeholder="—", width="stretch", key=f"figures-{key}",
                 column_config={"Percent": st.column_config.NumberColumn("Percent", format="%.1f%%"),
                                # cents (and RVUs to two places); a conversion factor's four places when one is shown
                                "Amount": st.column_config.NumberColumn("Amount", format="%.4f" if any(
                                    f.setting == CF_SETTING for f in event.figures) else "%.2f")})


def _unit(figure: Figure) -> str:
    """'$' for payments and conversion factors, 'RVUs' for relative value units, '×' for a ratio, '%' for a share,
    '$/hour' for a rate (one Amount column, sortable)."""
    if figure.kind is FigureKind.RATIO:
        return "×"
    if figure.kind is FigureKind.SHARE:
        return "%"
    if figure.kind is FigureKind.RATE:
        per = "hour" if "per hour" in figure.label else "minute"
        return f"$/{per}" if figure.dollars else f"RVUs/{per}"
    return "$" if figure.dollars else "RVUs"


# What the trend chart draws for the measure a question asks about (QuestionPlan.measure): (series, row field) pairs
# and the axis title.
_CHARTED = {"payment": ((("non-facility", "payment_nonfac"), ("facility", "payment_fac")), "Payment ($)"),
            "work_rvu": ((("work RVU", "work_rvu"),), "Work RVU"),
            "pe_rvu": ((("non-facility PE", "pe_nonfac_rvu"), ("facility PE", "pe_fac_rvu")), "PE RVU"),
            "mp_rvu": ((("malpractice", "mp_rvu"),), "Malpractice RVU"),
            "total_rvu": ((("non-facility total", "total_nonfac"), ("facility total", "total_fac")), "Total RVUs")}


def _trend_chart(rows: list[ValuationRow], measure: str = "payment") -> None:
    """The asked measure per year of the asked codes (final national rows), one line per code and setting: the
    national payment, or the RVU the question names ("What is the MP RVU of 99214 in 2022 and 2026?")."""
    series, axis = _CHARTED.get(measure, _CHARTED["payment"])
    points = [{"CY": str(r.cy), "series": " ".join(filter(None, (r.hcpcs, r.locality, name))), "value": float(amount)}
              for r in rows if not (r.proposed or r.mod)
              for name, field in series for amount in (getattr(r, field),) if amount is not None]
    if points:       # one value per year and series (two places asked: a line each)
        frame = pd.DataFrame(points).pivot_table(index="CY", columns="series", values="value", aggfunc="first")
        st.line_chart(frame, x_label="Calendar year", y_label=axis, height=280)


def render_valuation(event: ValuationEvent, key: str) -> None:
    """Rows the question asks about first, then the figures computed from them; family members and
    other years one click away."""
    st.markdown(f"**Valuation evidence** for {', '.join(event.codes)}"
                + (f" (families: {', '.join(event.families)})" if event.families else ""))
    if event.plan is not None:
        st.caption(f"Understood as: {plain(event.plan.summary())}")
    focus = [r for r in event.rows if r.in_focus] or list(event.rows)
    others = [r for r in event.rows if r not in focus]
    order = {c: i for i, c in enumerate(event.plan.focus_codes)} if event.plan else {}
    focus.sort(key=lambda r: (order.get(r.hcpcs, len(order)), r.hcpcs, r.mod, r.proposed, r.cy))
    if focus:
        st.dataframe(valuation_frame(focus), column_config=column_config(st), hide_index=True, placeholder="—",
                     width="stretch", key=f"focus-{key}")
    if event.plan is not None and Intent.TREND in event.plan.intents and len({r.cy for r in focus}) > 1:
        _trend_chart(focus, event.plan.measure)
    _figures_table(event, key)
    if others:
        with st.expander(f"Family members and other years ({len(others)} rows)"):
            st.dataframe(valuation_frame(others), column_config=column_config(st), hide_index=True, placeholder="—",
                         width="stretch", key=f"others-{key}")
    if event.rows:
        st.download_button("Download table (CSV with provenance)", csv_bytes(list(event.rows)),
                           file_name="carenav_valuation.csv", mime="text/csv", key=f"csv-{key}")
    if event.unpriced:
        st.info("Not priced: " + ", ".join(event.unpriced) + " appear in no loaded CMS release.")
    if shows_cpt(list(event.rows)):
        st.caption(AMA_NOTICE)


def factor_frame(event: FactorEvent) -> pd.DataFrame:
    """One row per national conversion factor: the asked ones marked, each with its change and how it was confirmed."""
    return pd.DataFrame([{
        "Asked": row.in_focus, "CY": row.cy, "Rule": f"{'proposed' if row.proposed else 'final'} ({row.rule_id})",
        "Applies to": row.variant or "all", "Conversion factor": float(row.amount),
        "Change": float(row.change) if row.change is not None else None,
        "Percent": float(row.percent) if row.percent is not None else None,
        "Compared with": row.prior_label, "In effect": f"{row.effective:%Y-%m-%d} to {row.until:%Y-%m-%d}",
        "Confirmed": row.confirmed, "Cite as": row.label,
        "Federal Register": row.fr_url, "Read from": row.reference} for row in event.rows])


def factor_chart(event: FactorEvent) -> alt.Chart:
    """The final conversion factors over the periods they were in force (each a flat segment from its first to its
    last day; the QP one from CY2026 its own line), the axis fitted to the amounts so a 1% change shows."""
    points = [{"day": day.isoformat(), "series": "QP" if row.variant == "QP" else "conversion factor",
               "amount": float(row.amount), "label": row.label}
              for row in event.rows if not row.proposed for day in (row.effective, row.until)]
    frame = pd.DataFrame(points)
    base = alt.Chart(frame).encode(
        x=alt.X("day:T", title="In force"),
        y=alt.Y("amount:Q", title="National conversion factor ($)", scale=alt.Scale(zero=False)),
        color=alt.Color("series:N", title=None, scale=alt.Scale(domain=["conversion factor", "QP"],
                                                                range=["#1f4e99", "#e07b00"])),
        tooltip=["label", alt.Tooltip("amount:Q", format="$.4f")])
    return (base.mark_line() + base.mark_point(filled=True, size=30)).properties(height=260)


def render_factors(event: FactorEvent, key: str) -> None:
    """The national PFS conversion factors (the asked ones ticked), a chart when the question spans years, and the
    table as CSV."""
    if event.anesthesia:
        _anesthesia_table(event, key)
    if event.gpci:
        _gpci_table(event, key)
    if not event.rows:
        return
    asked = sum(r.in_focus for r in event.rows)
    st.markdown(f"**National PFS conversion factors** — {asked} asked (ticked), the others for context; "
                "from data/pfs_rules.toml")
    frame = factor_frame(event)
    st.dataframe(frame, hide_index=True, placeholder="—", width="stretch", key=f"factors-{key}", column_config={
        "Conversion factor": st.column_config.NumberColumn("Conversion factor", format="$%.4f"),
        "Change": st.column_config.NumberColumn("Change", format="%+.4f"),
        "Percent": st.column_config.NumberColumn("Percent", format="%+.2f%%"),
        "Federal Register": st.column_config.LinkColumn("Federal Register", display_text="rule"),
        "Read from": st.column_config.LinkColumn("Read from", display_text="source")})
    if event.trend:
        st.altair_chart(factor_chart(event), width="stretch")
    st.download_button("Download conversion factors (CSV)", frame.to_csv(index=False).encode("utf-8"),
                       file_name="carenav_conversion_factors.csv", mime="text/csv", key=f"factors-csv-{key}")


def _locality_table(title: str, rows, columns, formats: dict[str, str], key: str, file_name: str,
                    download: str) -> None:
    """One row per payment locality, the places asked ticked and first; sortable, with a CSV download.
    `columns(row)` gives the row's own columns after Asked, State, Locality, MAC:locality."""
    st.markdown(title)
    frame = pd.DataFrame([{"Asked": r.asked, "State": r.state, "Locality": r.name, "MAC:locality": r.key, **columns(r)}
                          for r in sorted(rows, key=lambda r: (not r.asked, r.state, r.key))])
    st.dataframe(frame, hide_index=True, placeholder="—", width="stretch", key=f"{file_name}-{key}", column_config={
        name: st.column_config.NumberColumn(name, format=shown) for name, shown in formats.items()})
    st.download_button(download, frame.to_csv(index=False).encode("utf-8"), file_name=f"{file_name}.csv",
                       mime="text/csv", key=f"{file_name}-csv-{key}")


def _anesthesia_table(event: FactorEvent, key: str) -> None:
    """Anesthesia conversion factors, one per payment locality (CMS ANES file)."""
    first = event.anesthesia[0]
    note = "" if first.file_cy == first.cy else f" (no CY{first.cy} ANES file loaded: the CY{first.file_cy} file)"
    if first.national is not None:      # the ANES file's header states the national figure
        note += f"; the file's national anesthesia CF is ${first.national}"
    _locality_table(f"**Anesthesia conversion factors by payment locality, CY{first.cy}**{note} — cite "
                    f"{plain(first.label)}", event.anesthesia,
                    lambda r: {"Anesthesia CF": float(r.amount), "ANES file": f"CY{r.file_cy}"},
                    {"Anesthesia CF": "$%.2f"}, key, f"carenav_anesthesia_cf_cy{first.cy}",
                    "Download anesthesia conversion factors (CSV)")


def _gpci_table(event: FactorEvent, key: str) -> None:
    """Geographic practice cost indices, one row per payment locality (CMS GPCI file)."""
    cy = event.gpci[0].cy
    since = next((r.earlier.cy for r in event.gpci if r.earlier is not None), None)
    changes = tuple(f"{part} change since CY{since}" for part in ("Work", "PE", "MP")) if since else ()

    def columns(r) -> dict:
        # a change between years asked: the places asked carry it (the other localities a dash)
        moved = dict(zip(changes, (float(c) for c in r.changes()))) if r.earlier is not None else \
            dict.fromkeys(changes)
        return {"Work GPCI": float(r.work), "PE GPCI": float(r.pe), "MP GPCI": float(r.mp), **moved,
                "Cite as": r.label, "File": r.place.source_file}
    _locality_table(f"**Geographic practice cost indices (GPCIs) by payment locality, CY{cy}** — cite "
                    f"{plain(f'[GPCI{cy}]')} or the locality's label", event.gpci, columns,
                    {name: ("%+.3f" if "change" in name else "%.3f")
                     for name in ("Work GPCI", "PE GPCI", "MP GPCI", *changes)}, key, f"carenav_gpci_cy{cy}",
                    "Download GPCIs (CSV)")


def _in_prose(message: str, text: str) -> bool:
    """The answer's prose already says the warning (a data note the writer leads with): not shown twice."""
    flat = " ".join(text.split())
    return bool(message.strip()) and " ".join(message.split()) in flat


def render_after(answer: Answer, warnings: bool = True) -> None:
    """Warnings (unless already shown live, or said by the prose), who wrote the prose, and the Provenance and
    Sources expanders."""
    for warning in answer.warnings if warnings else ():
        if not _in_prose(warning.message, answer.text):
            st.warning(warning.message)
    withheld = len(answer.withheld)
    st.caption(("Written by the deterministic writer: no language model wrote this answer."
                if answer.writer == "deterministic" else f"Written by {answer.writer}; every sentence was checked.")
               + (f" {withheld} sentence(s) withheld by the output guard." if withheld else ""))
    if answer.provenance:
        with st.expander("Provenance"):
            if answer.valuation.plan is not None:
                st.markdown(f"Understood as: {plain(answer.valuation.plan.summary())}")
            for line in answer.provenance:
                cf = f"${line.cf}" if line.cf is not None else "none recorded"
                st.markdown(f"{plain(line.label)} — [{line.fr_citation}]({line.fr_url}) ({line.rule_id}); "
                            f"conversion factor {plain(cf)} ({plain(line.cf_label)})")
    with st.expander("Sources"):
        if not answer.sources:
            st.write("No rule text was retrieved for this question.")
            return
        for heading, group in (("Cited", answer.cited), ("Also retrieved", answer.also_retrieved)):
            if group:
                st.markdown(f"**{heading}**")
            for source in group:
                speaker = f" — {plain(source.speaker)}" if source.speaker else ""
                st.markdown(f"{plain(source.label)} [{plain(source.title[:90])}]({source.url}) — {source.kind}, "
                            f"{source.published}{speaker}  \n> {plain(source.text[:400])}")


def render_turn(answer: Answer, key: str) -> None:
    """A past answer, re-rendered on a rerun."""
    with st.chat_message("user"):
        st.markdown(plain(answer.question))
    with st.chat_message("assistant"):
        if answer.valuation:
            render_valuation(answer.valuation, key)
        if answer.factors:
            render_factors(answer.factors, key)
        st.markdown(linked(answer.text, citation_links(answer)))
        render_after(answer)


def render_live(question: str, events: Iterator[ChatEvent], key: str) -> Answer:
    """Stream one answer: valuation before any token, a status line while the model works, warnings when
    they happen, prose through st.write_stream, then the rest. Returns the folded Answer (kept for reruns)."""
    seen: list[ChatEvent] = []
    with st.chat_message("user"):
        st.markdown(plain(question))
    with st.chat_message("assistant"):
        status = st.empty()
        for event in events:
            seen.append(event)
            if isinstance(event, TokenEvent):
                break
            _show_live(event, status, key)
        prose = st.empty()
        if seen and isinstance(seen[-1], TokenEvent):
            with prose.container():
                st.write_stream(_tokens(seen, events, status))
        status.empty()
        answer = Answer.from_events(question, seen)
        if answer.text:                  # the streamed prose again, its citations now links
            prose.markdown(linked(answer.text, citation_links(answer)))
        for warning in answer.warnings:  # a data note held back: shown only when the prose did not say it
            if warning.kind in DATA_NOTE_KINDS and not _in_prose(warning.message, answer.text):
                st.warning(warning.message)
        render_after(answer, warnings=False)
    return answer


def _show_live(event: ChatEvent, status, key: str) -> None:
    if isinstance(event, ValuationEvent):
        render_valuation(event, key)
    elif isinstance(event, FactorEvent):
        render_factors(event, key)
    elif isinstance(event, WarningEvent) and event.kind not in DATA_NOTE_KINDS:   # data notes lead the prose
        st.warning(event.message)
    elif isinstance(event, ProgressEvent):
        shown = f"; {event.sentences} sentence(s) checked and shown" if event.sentences else ""
        status.caption(f"The model is writing… {event.seconds:.0f} s{shown}. Each sentence appears once it "
                       "has been checked.")


def _tokens(seen: list[ChatEvent], events: Iterator[ChatEvent], status) -> Iterator[str]:
    yield seen[-1].text
    for event in events:
        seen.append(event)
        if isinstance(event, TokenEvent):
            yield event.text
        else:
            _show_live(event, status, "")
