"""Who writes the prose: a model behind Ollama, or plain sentences built from the data (no model).

Either way the output guard checks every sentence afterwards; a writer is never trusted.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Iterator, Protocol, Sequence

from carenav_core.chat.events import Source
from carenav_core.chat.evidence import Evidence, build_evidence
from carenav_core.chat.guard import check_sentence
from carenav_core.chat.prepared import Prepared
from carenav_core.chat.sentences import split_sentences
from carenav_core.llm import ModelClient
from carenav_core.pfs.rows import ValuationRow

log = logging.getLogger(__name__)


class Writer(Protocol):
    """Who writes the prose of a prepared answer. The output guard checks whatever it yields."""
    name: str

    def stream(self, prepared: Prepared) -> Iterator[str]:
        """Prose chunks; a model writer raises ModelError when the model fails."""
        ...


@dataclass(frozen=True, kw_only=True)
class ModelWriter:
    """Prose from the language model behind the one model client (carenav_core/llm.py)."""
    model: ModelClient

    @property
    def name(self) -> str:
        """Writer name for DoneEvent, e.g. "ollama:llama3.2"."""
        return self.model.name

    def stream(self, prepared: Prepared) -> Iterator[str]:
        return self.model.stream(prepared.messages)


# --- deterministic ------------------------------------------------------------------------------

NO_MODEL_NOTICE = "No language model wrote this answer: it restates the fee schedule data and the retrieved excerpts."


def _money(value: Decimal) -> str:
    return f"${value}"


def _code(row: ValuationRow, described: bool) -> str:
    """'G0556-26 (Adv prim care mgmt lvl 1)', or just the code."""
    code = f"{row.hcpcs}-{row.mod}" if row.mod else row.hcpcs
    return f"{code} ({row.description})" if described and row.description else code


def _vintage(row: ValuationRow) -> str:
    return f"the CY{row.cy} proposed rule" if row.proposed else f"the CY{row.cy} final fee schedule"


def _rvu_clause(row: ValuationRow) -> str:
    parts = [f"work RVU {row.work_rvu}" if row.work_rvu is not None else "no work RVU"]
    if row.total_nonfac is not None:
        parts.append(f"a non-facility total of {row.total_nonfac} RVUs")
    if row.total_fac is not None:
        parts.append(f"a facility total of {row.total_fac} RVUs")
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


def _payment_clause(row: ValuationRow) -> str:
    if row.cf is None or (row.payment_nonfac is None and row.payment_fac is None):
        return f"no national payment amount is given (status {row.status}: {row.status_meaning})"
    paid = [f"the national {where} payment is {_money(amount)}" for where, amount in
            (("non-facility", row.payment_nonfac), ("facility", row.payment_fac)) if amount is not None]
    return f"at the CY{row.cy} conversion factor of {_money(row.cf)} " + " and ".join(paid)


def row_sentence(row: ValuationRow, *, described: bool = True) -> str:
    """One plain sentence per row, ending with the row's label."""
    return (f"Under {_vintage(row)}, {_code(row, described)} has {_rvu_clause(row)}; "
            f"{_payment_clause(row)} {row.label}.")


def unpriced_sentence(unpriced: Sequence[str]) -> str:
    codes = ", ".join(unpriced)
    return f"No fee schedule valuation was found for {codes}, so no RVUs or payment are given for {'it' if len(unpriced) == 1 else 'them'}."


def passes_guard(sentence: str, evidence: Evidence) -> bool:
    """Would the output guard release `sentence` whole (as one sentence, with no reasons)?"""
    return split_sentences(sentence + "\n") == [sentence + "\n"] and not check_sentence(sentence, evidence)


def _excerpt_summary(source: Source, evidence: Evidence, sentences: int,
                     terms: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Up to `sentences` sentences quoted from the excerpt (those sharing most words with the
    question first, then in reading order), each passing the guard with its label."""
    candidates = []
    for position, piece in enumerate(split_sentences(re.sub(r"\s+", " ", source.text).strip())):
        text = piece.strip().replace("[", "(").replace("]", ")").rstrip(".!?;: ")
        if len(text.split()) < 6:
            continue                                 # fragments such as "As described in sections II.G.2.b"
        candidate = f"The {source.kind} published {source.published} says: “{text}” {source.label}."
        if passes_guard(candidate, evidence):
            overlap = len(terms & {w.lower() for w in re.findall(r"[A-Za-z0-9]{5,}", text)})
            candidates.append((-overlap, position, candidate))
    chosen = sorted(candidates)[:sentences]
    return [c for _, _, c in sorted(chosen, key=lambda c: c[1])]


def newest_rows(rows: Sequence[ValuationRow]) -> list[ValuationRow]:
    """Per code and modifier: the newest final row, and the proposed row if there is one."""
    newest: dict[tuple[str, str, bool], ValuationRow] = {}
    for row in rows:
        key = (row.hcpcs, row.mod, row.proposed)
        if key not in newest or row.cy > newest[key].cy:
            newest[key] = row
    return [r for r in rows if newest.get((r.hcpcs, r.mod, r.proposed)) is r]


def _terms(question: str, rows: Sequence[ValuationRow]) -> set[str]:
    """Words an excerpt sentence should share with the question, and the codes valued."""
    return {w.lower() for w in re.findall(r"[A-Za-z]{5,}", question)} | {r.hcpcs.lower() for r in rows}


@dataclass(frozen=True, kw_only=True)
class DeterministicWriter:
    """Writes the valuation facts and the top excerpts as plain sentences. No model is involved,
    and every sentence is written to pass the output guard (sentences that would not are left out)."""
    max_sources: int = 3
    sentences_per_source: int = 2
    name: str = "deterministic"

    def stream(self, prepared: Prepared) -> Iterator[str]:
        """Yield one line at a time: the notice, then facts as Markdown list items."""
        question, rows, unpriced, sources = prepared.question, prepared.rows, prepared.unpriced, prepared.sources
        evidence = build_evidence(rows, sources)
        yield NO_MODEL_NOTICE + "\n\n"
        for sentence in self._sentences(question, rows, unpriced, sources, evidence):
            if not passes_guard(sentence.removeprefix("- "), evidence):
                log.error("deterministic writer skipped a sentence the guard rejects: %r", sentence)
                continue
            yield sentence + "\n"

    def _sentences(self, question: str, rows: Sequence[ValuationRow], unpriced: Sequence[str],
                   sources: Sequence[Source], evidence: Evidence) -> Iterator[str]:
        for row in newest_rows(rows):   # earlier years are in the table; a descriptor that trips the guard is left out
            sentence = row_sentence(row)
            yield "- " + (sentence if passes_guard(sentence, evidence) else row_sentence(row, described=False))
        if unpriced:
            yield "- " + unpriced_sentence(unpriced)
        if not sources and not rows:
            yield "No retrieved excerpt or fee schedule row answers this question."
        terms = _terms(question, rows)
        for source in sources[: self.max_sources]:
            quoted = _excerpt_summary(source, evidence, self.sentences_per_source, terms)
            fallback = f"The {source.kind} published {source.published} is also relevant {source.label}."
            yield from ("- " + q for q in quoted or [fallback])
