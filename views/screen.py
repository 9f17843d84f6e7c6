"""Screen page: plain-language intake in sections -> screener core -> summary table and one card per
program. Answers live in the URL (shareable); `?on=YYYY-MM-DD` screens as of another date."""
from __future__ import annotations

from datetime import date

import streamlit as st

from carenav_core.errors import CareNavError
from carenav_core.screener.assemble import Card, Report, run_screen
from carenav_core.screener.edges import program_search
from carenav_core.screener.intake import DECLINED, DONT_KNOW, answers_to_params, params_to_answers
from carenav_core.screener.profile import normalize
from carenav_core.screener.questions import (SECTIONS, Question, drop_hidden, earlier_option_words, option_words,
                                             visible)
from carenav_core.screener.render import report_html, report_markdown
from carenav_core.ui.resources import app_model, app_settings, app_store

SPECIAL = {"": "—", DONT_KNOW: "Don't know", DECLINED: "Prefer not to say"}
LIMITS = {"household_size": (1, 20)}


def _choice(question: Question, current: object) -> object:
    earlier = earlier_option_words(question, current)       # a saved link's earlier bracket stays answered
    words = {**option_words(question), **earlier, **SPECIAL}
    options = ["", *option_words(question), *earlier, DONT_KNOW, DECLINED]
    shown = str(current) if current is not None else ""
    picked = st.selectbox(question.text, options, index=options.index(shown) if shown in options else 0,
                          format_func=words.get, key=f"q_{question.field}", help=question.help or None)
    return picked or None


def _multi(question: Question, current: object) -> object:
    words = {**option_words(question), **SPECIAL}
    options = [*option_words(question), DONT_KNOW, DECLINED]
    default = current if isinstance(current, list) else ([current] if current in options else [])
    picked = st.multiselect(question.text, options, default=default, format_func=words.get,
                            key=f"q_{question.field}", help=question.help or None)
    specials = [p for p in picked if p in ("none", DONT_KNOW, DECLINED)]
    if specials and len(picked) > 1:
        # "None of these" (or don't know / prefer not to say) beside ticked answers contradicts them: nothing is
        # dropped; the person is asked to choose, and a screen of both is refused with the same reason
        st.error(f"“{'” and “'.join(words[p] for p in specials)}” cannot be chosen together with other answers: "
                 "untick either it or the others.")
        return picked
    return specials[0] if specials else (picked or None)


def _number(question: Question, current: object) -> object:
    low, high = LIMITS.get(question.field, (0, 120))
    number, special = st.columns([3, 2])
    value = number.number_input(question.text, min_value=low, max_value=high, step=1, placeholder="Not answered",
                                value=current if isinstance(current, int) and low <= current <= high else None,
                                key=f"q_{question.field}")
    options = ["", DONT_KNOW, DECLINED]
    other = special.selectbox("If there is no number", options, format_func=SPECIAL.get,
                              index=options.index(current) if current in options else 0, key=f"s_{question.field}")
    return int(value) if value is not None else (other or None)


WIDGETS = {"choice": _choice, "money": _choice, "multi": _multi, "number": _number}


def _intake(current: dict) -> dict | None:
    """Sections of questions; a question that does not apply (given the answers so far) is not shown."""
    answers: dict = {}
    for section in SECTIONS:
        questions = [q for q in visible({**current, **answers}) if q.section == section]
        if questions:
            with st.container(border=True):
                st.markdown(f"**{section}**")
                for question in questions:
                    answers[question.field] = WIDGETS[question.kind](question, current.get(question.field))
    pressed = st.button("Screen", type="primary")
    chosen = drop_hidden({k: v for k, v in answers.items() if v is not None})
    return params_to_answers(answers_to_params(chosen)) if pressed else None


def _card(card: Card) -> None:
    with st.container(border=True):
        st.subheader(card.name)
        tier = f" · points to **{card.tier}**" if card.tier else ""
        st.markdown(f"**{card.result}**{tier} · confidence {card.confidence} · [official page]({card.official_url})")
        if card.judged_for:
            st.caption(f"Judged for {card.judged_for}: {card.judged_for_because}.")
        if card.also_judged:
            st.caption(card.also_judged)
        for notice in card.figures_missing:
            st.warning(f"{notice[0].upper()}{notice[1:]}.")
        if card.retrieval_failed:
            st.warning("The program details could not be verified in the program documents.")
        st.write(card.summary)
        for title, items in (("Why", card.why), ("What is not known yet", card.missing),
                             ("What would change it", card.what_would_change),
                             ("Information still needed", card.still_needed)):
            if items:
                st.markdown(f"**{title}**\n" + "\n".join(f"- {i}" for i in items))
        links = [f"- [{s.title}]({s.href}){f' [{s.tag}]' if s.tag else ''}" for s in card.sources]
        links += [f"- [{c.heading}]({c.source_url}) (program document)" for c in card.citations]
        st.markdown("**Sources**\n" + "\n".join(links))


def _writer_note(report: Report) -> str:
    """Which writer wrote the explanations, and what happened to the model's attempts, in plain words."""
    failed = [r for r in report.rejections if r.startswith("model call failed")]
    too_big = [r for r in report.rejections if r.startswith("model not asked")]
    checked = [r for r in report.rejections if r not in failed and r not in too_big]
    fallback = "so the explanations were written from the rules and program documents."
    if report.writer == "model":
        note = "The explanations were written by a language model and checked against the rules and documents."
        if checked:
            note += f" Its first reply was set aside ({len(checked)} problem(s)) and it answered again."
    elif too_big:
        note = f"The language model was not asked (its context is too small for this screen), {fallback}"
    elif checked:
        note = (f"The language model's reply was set aside {len(checked)} time(s) — it named a program that was not a "
                "candidate, described coverage without citing a program document, cited a document of another "
                f"program, or was not in the required format — {fallback}")
    elif failed:
        late = "did not answer in time" if any("within" in r or "in time" in r for r in failed) else "failed"
        note = f"The language model {late}, {fallback}"
    else:
        note = "The explanations were written from the rules and program documents (no language model)."
    if report.passages_dropped:
        note += (f" {report.passages_dropped} program document passage(s) were left out of the model's prompt "
                 "to fit its context.")
    return note


def _render(report: Report) -> None:
    st.info(report.disclaimer)
    st.caption(_writer_note(report))
    for notice in report.notices:
        st.warning(f"Figure not on file: {notice}")
    for warning in report.warnings:
        st.warning(f"Please check: {warning}")
    st.subheader("Summary")
    st.table([{"Program": r.program, "Result": r.result, "Why": r.why, "Next step": r.next_step}
              for r in report.summary])
    for card in report.cards:
        _card(card)
    if report.excluded:
        st.subheader("Not likely to apply")
        st.markdown("\n".join(f"- **{e.name}**: {'; '.join(e.failed_rules)}" for e in report.excluded))
    if report.follow_up_questions:
        st.subheader("Questions to ask next")
        st.markdown("\n".join(f"- {q}" for q in report.follow_up_questions))
    st.caption("Tags on figures: " + " · ".join(report.legend))
    markdown, html = st.columns(2)
    markdown.download_button("Download report (Markdown)", report_markdown(report), file_name="carenav-screen.md",
                             mime="text/markdown")
    html.download_button("Printable report (HTML, print to PDF)", report_html(report), file_name="carenav-screen.html",
                         mime="text/html")


def _screening_date(params: dict) -> date:
    on = params.pop("on", None)
    return date.fromisoformat(on) if on else date.today()


st.title("Screen for Washington programs")
st.caption("For care navigators and family caregivers. Do not enter names or other identifying details. "
           "Every question can be skipped or answered \"Don't know\".")
url = st.query_params.to_dict()
try:
    on = _screening_date(url)
except ValueError:
    st.error(f"The screening date {url.get('on')!r} in the address is not a date like 2026-12-01.")
    on = date.today()
url.pop("on", None)
submitted = _intake(params_to_answers(url))
if submitted is not None:
    st.query_params.from_dict({**answers_to_params(submitted), **({"on": str(on)} if on != date.today() else {})})
answers = submitted if submitted is not None else params_to_answers(url)
if answers:
    try:
        settings = app_settings()
        model = app_model(settings)
        with st.spinner("Screening: rules, program documents" + (", then the language model's explanation "
                                                                   "(checked before it is shown)…" if model else "…")):
            report = run_screen(normalize(answers), on=on, search=program_search(app_store(settings)), model=model)
    except CareNavError as exc:
        st.error(f"The answers could not be screened: {exc}")
    else:
        st.caption(f"Screened as of {on:%B %-d, %Y}.")
        _render(report)
