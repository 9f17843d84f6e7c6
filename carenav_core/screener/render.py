"""Markdown rendering of a screener report (download and CLI output)."""
from __future__ import annotations

from carenav_core.screener.assemble import Card, Report


def _card_markdown(card: Card) -> list[str]:
    lines = [f"## {card.name}", "",
             f"**{card.classification.replace('_', ' ')}** · confidence {card.confidence} · [official page]({card.official_url})", ""]
    if card.retrieval_failed:
        lines += ["_The program details could not be verified in the program documents._", ""]
    lines += [card.summary, ""]
    for title, items in (("Why", card.why), ("What is missing", card.missing),
                         ("What would change it", card.what_would_change), ("Information still needed", card.still_needed)):
        if items:
            lines += [f"**{title}**", "", *[f"- {i}" for i in items], ""]
    if card.citations:
        lines += ["**Sources**", "", *[f"- [{c.heading}]({c.source_url}) (`{c.chunk_id}`)" for c in card.citations], ""]
    return lines


def report_markdown(report: Report) -> str:
    """The whole report as Markdown."""
    lines = [f"# CareNav screen ({report.on})", "", f"> {report.disclaimer}", ""]
    for card in report.cards:
        lines += _card_markdown(card)
    if report.excluded:
        lines += ["## Not likely to apply", ""]
        lines += [f"- **{e.name}**: {'; '.join(e.failed_rules)}" for e in report.excluded]
        lines.append("")
    if report.follow_up_questions:
        lines += ["## Questions to ask next", "", *[f"- {q}" for q in report.follow_up_questions], ""]
    lines.append(f"_Written by the {report.writer} writer._")
    return "\n".join(lines) + "\n"
