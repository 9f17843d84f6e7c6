"""Who writes the prose: a model behind Ollama, or plain sentences built from the data (no model).

Either way the output guard checks every sentence afterwards; a writer is never trusted.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterator, Sequence

import httpx
import ollama

from carenav_core.chat.events import Source
from carenav_core.chat.guard import Evidence, build_evidence, check_sentence, split_sentences
from carenav_core.errors import ModelError
from carenav_core.pfs.rows import ValuationRow
from carenav_core.settings import Settings

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 2.0   # seconds GET /api/tags may take before we write without a model


# --- Ollama -------------------------------------------------------------------------------------

def _model_error(exc: Exception, model: str) -> ModelError:
    """Map client/transport failures to ModelError, saying whether a retry may help."""
    if isinstance(exc, ollama.ResponseError):
        status = exc.status_code
        retryable = status < 0 or status >= 500 or status == 429
        hint = f" (is the model pulled? run `ollama pull {model}`)" if status == 404 else ""
        return ModelError(f"Ollama refused the chat request for {model}: {exc}{hint}", retryable=retryable)
    if isinstance(exc, httpx.TimeoutException):
        return ModelError(f"Ollama did not answer in time for {model}: {exc!r}", retryable=True)
    return ModelError(f"Ollama connection failed for {model}: {exc!r}", retryable=True)


@dataclass(frozen=True, kw_only=True)
class OllamaWriter:
    """Streams a chat reply from an Ollama server through the official client."""
    client: ollama.Client
    model: str
    keep_alive: str | float | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """Writer name for DoneEvent, e.g. "ollama:llama3.2"."""
        return f"ollama:{self.model}"

    def stream(self, messages: list[dict[str, str]]) -> Iterator[str]:
        """Yield content chunks. Raises ModelError (with .retryable) if the request or stream fails,
        including a stream that ends before its final ``done`` line."""
        try:
            parts = self.client.chat(model=self.model, messages=messages, stream=True,
                                     keep_alive=self.keep_alive, options=self.options or None)
            for part in parts:
                if part.message and part.message.content:
                    yield part.message.content
                if part.done:
                    return
        except (ollama.ResponseError, ConnectionError, httpx.TransportError) as exc:
            raise _model_error(exc, self.model) from exc
        except ValueError as exc:   # a line that is not JSON, or not a chat response
            raise ModelError(f"Ollama sent an unreadable reply for {self.model}: {exc}", retryable=False) from exc
        raise ModelError(f"Ollama stream for {self.model} ended before it was done", retryable=True)


def ollama_writer_from_settings(settings: Settings, *, probe_timeout: float = PROBE_TIMEOUT,
                                options: dict[str, Any] | None = None) -> OllamaWriter | None:
    """An OllamaWriter if `settings.ollama_host` is set and answers GET /api/tags within
    `probe_timeout` seconds; None otherwise (the caller then uses DeterministicWriter)."""
    if not settings.ollama_host:
        return None
    try:
        with ollama.Client(host=settings.ollama_host, timeout=probe_timeout) as probe:
            listed = probe.list()
    except (ollama.ResponseError, ConnectionError, httpx.HTTPError, OSError) as exc:
        log.warning("Ollama at %s is not answering (%r); writing without a model", settings.ollama_host, exc)
        return None
    names = {m.model for m in listed.models}
    if not names & {settings.llm_model, f"{settings.llm_model}:latest"}:
        log.warning("Ollama at %s does not list model %s (has %s)", settings.ollama_host,
                    settings.llm_model, sorted(n for n in names if n))
    client = ollama.Client(host=settings.ollama_host, timeout=settings.llm_timeout)
    return OllamaWriter(client=client, model=settings.llm_model, keep_alive=settings.keep_alive,
                        options=options or {})


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

    def stream(self, question: str, rows: Sequence[ValuationRow], unpriced: Sequence[str],
               sources: Sequence[Source]) -> Iterator[str]:
        """Yield one line at a time: the notice, then facts as Markdown list items."""
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
