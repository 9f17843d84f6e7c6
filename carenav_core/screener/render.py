"""Renderings of a screener report: Markdown (download, CLI) and print-ready HTML (print to PDF)."""
from __future__ import annotations

from html import escape

from carenav_core.screener.assemble import SERVES_THE_PERSON_CARED_FOR as SERVES, Card, Report

SECTIONS = (("Why", "why"), ("What is not known yet", "missing"), ("What would change it", "what_would_change"),
            ("Information still needed", "still_needed"))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "/")


def _card_markdown(card: Card) -> list[str]:
    tier = f" · points to **{card.tier}**" if card.tier else ""
    lines = [f"## {card.name}", "",
             f"**{card.result}**{tier} · confidence {card.confidence} · [official page]({card.official_url})", ""]
    if card.judged_for:
        lines += [f"_Judged for {card.judged_for}: {card.judged_for_because or SERVES}._", ""]
    if card.also_judged:
        lines += [f"_{card.also_judged}_", ""]
    if card.retrieval_failed:
        lines += ["_The program details could not be verified in the program documents._", ""]
    lines += [card.summary, ""]
    for title, name in SECTIONS:
        if getattr(card, name):
            lines += [f"**{title}**", "", *[f"- {i}" for i in getattr(card, name)], ""]
    if card.citations:
        lines += ["**From the program documents**", "", *[f"- [{c.heading}]({c.source_url})" for c in card.citations], ""]
    if card.sources:
        lines += ["**Sources for the rules and figures applied**", "",
                  *[f"- [{s.title}]({s.href}){f' [{s.tag}]' if s.tag else ''}" for s in card.sources], ""]
    return lines


def report_markdown(report: Report) -> str:
    """The whole report as Markdown."""
    lines = [f"# CareNav screen ({report.on:%B %-d, %Y})", "", f"> {report.disclaimer}", ""]
    lines += [f"> **Figure not on file:** {n}" for n in report.notices] + ([""] if report.notices else [])
    lines += [f"> **Please check:** {w}" for w in report.warnings] + ([""] if report.warnings else [])
    lines += ["| Program | Result | Why | Next step |", "|---|---|---|---|",
              *[f"| {_cell(r.program)} | {r.result} | {_cell(r.why)} | {_cell(r.next_step)} |" for r in report.summary], ""]
    for card in report.cards:
        lines += _card_markdown(card)
    if report.excluded:
        lines += ["## Not likely to apply", ""]
        lines += [f"- **{e.name}**: {'; '.join(e.failed_rules)}" for e in report.excluded]
        lines.append("")
    if report.follow_up_questions:
        lines += ["## Questions to ask next", "", *[f"- {q}" for q in report.follow_up_questions], ""]
    lines += ["## What the tags on figures mean", "", *[f"- {t}" for t in report.legend], ""]
    lines.append(f"_Written by the {report.writer} writer._")
    return "\n".join(lines) + "\n"


def _list(title: str, items: tuple[str, ...]) -> str:
    return f"<h4>{escape(title)}</h4><ul>{''.join(f'<li>{escape(i)}</li>' for i in items)}</ul>" if items else ""


def _card_html(card: Card) -> str:
    tier = f" · points to <b>{escape(card.tier)}</b>" if card.tier else ""
    parts = [f"<section class='card'><h2>{escape(card.name)}</h2>",
             f"<p><b>{escape(card.result)}</b>{tier} · confidence {escape(card.confidence)} · "
             f"<a href='{escape(card.official_url)}'>official page</a></p>"]
    if card.judged_for:
        parts.append(f"<p><i>Judged for {escape(card.judged_for)}: {escape(card.judged_for_because or SERVES)}.</i></p>")
    if card.also_judged:
        parts.append(f"<p><i>{escape(card.also_judged)}</i></p>")
    parts.append(f"<p>{escape(card.summary)}</p>")
    parts += [_list(title, getattr(card, name)) for title, name in SECTIONS]
    links = [f"<li><a href='{escape(s.href)}'>{escape(s.title)}</a>{f' [{s.tag}]' if s.tag else ''}</li>" for s in card.sources]
    parts.append(f"<h4>Sources for the rules and figures applied</h4><ul>{''.join(links)}</ul></section>")
    return "".join(parts)


STYLE = ("body{font-family:Georgia,serif;max-width:52em;margin:2em auto;color:#111}"
         "table{border-collapse:collapse;width:100%}td,th{border:1px solid #999;padding:.3em;vertical-align:top;"
         "text-align:left}.note{background:#f3f3f3;padding:.5em;border-left:4px solid #555}"
         ".card{break-inside:avoid;border-top:1px solid #999;margin-top:1em}"
         "@media print{a{color:#000}a[href]:after{content:' (' attr(href) ')';font-size:80%}}")


def report_html(report: Report) -> str:
    """A self-contained page that prints cleanly (browser Print -> PDF): table first, then each program."""
    rows = "".join(f"<tr><td>{escape(r.program)}</td><td>{escape(r.result)}</td><td>{escape(r.why)}</td>"
                   f"<td>{escape(r.next_step)}</td></tr>" for r in report.summary)
    notes = "".join(f"<p class='note'><b>Figure not on file:</b> {escape(n)}</p>" for n in report.notices)
    notes += "".join(f"<p class='note'><b>Please check:</b> {escape(w)}</p>" for w in report.warnings)
    excluded = _list("Not likely to apply", tuple(f"{e.name}: {'; '.join(e.failed_rules)}" for e in report.excluded))
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>CareNav screen {report.on}</title>"
            f"<style>{STYLE}</style></head><body><h1>CareNav screen ({report.on:%B %-d, %Y})</h1>"
            f"<p class='note'>{escape(report.disclaimer)}</p>{notes}"
            f"<table><tr><th>Program</th><th>Result</th><th>Why</th><th>Next step</th></tr>{rows}</table>"
            f"{''.join(_card_html(c) for c in report.cards)}{excluded}"
            f"{_list('Questions to ask next', report.follow_up_questions)}"
            f"{_list('What the tags on figures mean', report.legend)}</body></html>\n")
