"""One question, top to bottom: detect → value → retrieve (+ code-cited) → prompt → writer → guard.

Decisions are deterministic (codes, rows, payments, which sentences a user sees); only the prose is
generated. Events come out in order: valuation (only when codes were detected, before any token),
token*, sources, done; warning events wherever something was degraded.

Every collaborator arrives in one `Backends` value (fee-schedule reader, store, model client) built at
the edge; nothing here reaches for a process-wide cache.
"""
from __future__ import annotations

import logging
import unicodedata
from typing import Iterator

import duckdb

from carenav_core.backends import Backends
from carenav_core.chat.events import (ChatEvent, DoneEvent, Source, SourcesEvent, TokenEvent, ValuationEvent,
                                      WarningEvent, WarningKind, provenance_for)
from carenav_core.chat.evidence import cited_and_also_retrieved
from carenav_core.chat.guard import GuardedSentence, OutputGuard
from carenav_core.chat.prepared import Prepared
from carenav_core.chat.prompt import build_prompt
from carenav_core.chat.writers import DeterministicWriter, ModelWriter, Writer
from carenav_core.codes import Detection, detect
from carenav_core.errors import ModelError
from carenav_core.pfs.rows import ValuationRow
from carenav_core.pfs.valuation import value
from carenav_core.retrieval.search import Hit, SearchResult, code_cited, merge, retrieve

log = logging.getLogger(__name__)
MAX_QUESTION = 2000          # characters used for detection, retrieval and the prompt
RETRIEVE_K = 6
CITED_PER_CODE = 2
NO_DETECTION = Detection(codes=(), families=(), explicit=())


def clean_question(question: str) -> tuple[str, tuple[WarningEvent, ...]]:
    """Control characters out, length capped (with a warning); other scripts kept as they are."""
    text = "".join(ch if unicodedata.category(ch)[0] != "C" or ch in "\n\t" else " " for ch in question).strip()
    if len(text) <= MAX_QUESTION:
        return text, ()
    return text[:MAX_QUESTION], (WarningEvent(kind=WarningKind.TRUNCATED, message=f"The question was {len(text):,} "
                                              f"characters; only the first {MAX_QUESTION:,} were used."),)


def source_of(hit: Hit) -> Source:
    return Source(label=hit.label, title=hit.title, kind=hit.kind, published=hit.published, text=hit.text,
                  url=hit.url, codes=hit.codes)


def _valuation(backends: Backends, detection: Detection) -> tuple[list[ValuationRow], list[str], tuple[WarningEvent, ...]]:
    if backends.fee_db is None:
        return [], [], (WarningEvent(kind=WarningKind.DATABASE, message="The fee-schedule database is not available "
                                     "(run `carenav build`); no valuation rows could be shown."),)
    try:
        rows, unpriced = value(backends.fee_db, detection.codes, years=backends.settings.years)
    except duckdb.Error as exc:
        log.warning("valuation query failed: %s", exc)
        return [], [], (WarningEvent(kind=WarningKind.DATABASE, message=f"The fee-schedule database failed: {exc}"),)
    return rows, unpriced, ()


def _sources(backends: Backends, text: str, detection: Detection) -> SearchResult:
    retrieved = retrieve(backends.store, text, RETRIEVE_K, ("rules",))
    if not detection.codes:
        return retrieved
    return merge(retrieved, code_cited(backends.store, list(detection.codes), CITED_PER_CODE))


def prepare(question: str, backends: Backends, valuation: bool = True) -> Prepared:
    """Detect, value, retrieve and build the prompt. `valuation=False` switches the code feature off."""
    text, warnings = clean_question(question)
    detection = detect(text) if valuation else NO_DETECTION
    rows, unpriced, problems = _valuation(backends, detection) if detection.codes else ([], [], ())
    found = _sources(backends, text, detection)
    store_warnings = tuple(WarningEvent(kind=WarningKind.RETRIEVAL, message=w) for w in found.warnings)
    sources = tuple(source_of(h) for h in found.hits)
    return Prepared(question=text, detection=detection, rows=tuple(rows), unpriced=tuple(unpriced), sources=sources,
                    messages=build_prompt(text, sources, rows, unpriced),
                    warnings=warnings + problems + store_warnings)


def answer(question: str, backends: Backends, *, valuation: bool = True) -> Iterator[ChatEvent]:
    """Stream the events of one answer. Without a model client the deterministic writer writes."""
    prepared = prepare(question, backends, valuation)
    if prepared.detection.codes:
        yield ValuationEvent(codes=prepared.detection.codes, families=prepared.detection.families,
                             rows=prepared.rows, provenance=provenance_for(prepared.rows), unpriced=prepared.unpriced)
    yield from prepared.warnings
    if backends.model is None and backends.settings.ollama_host:
        yield WarningEvent(kind=WarningKind.MODEL_DOWN, message=f"The model server at {backends.settings.ollama_host} "
                           "is not reachable; this answer was written without a language model.")
    writer = ModelWriter(model=backends.model) if backends.model is not None else None
    used, withheld, labels = yield from _prose(prepared, writer)
    cited, also = cited_and_also_retrieved(prepared.sources, labels)
    yield SourcesEvent(cited=cited, also_retrieved=also)
    yield DoneEvent(writer=used, withheld=withheld)


def _prose(prepared: Prepared, writer: Writer | None) -> Iterator[ChatEvent]:
    """Tokens through a fresh guard; a failing model is replaced by the deterministic writer.
    Returns (writer name, sentences withheld, labels cited by released sentences)."""
    labels: tuple[str, ...] = ()
    if writer is not None and (prepared.sources or prepared.rows):   # nothing retrieved: no model call
        guard = OutputGuard.for_answer(prepared.rows, prepared.sources)
        try:
            withheld = yield from _guarded(writer.stream(prepared), guard)
            return writer.name, withheld, guard.cited_labels
        except ModelError as exc:
            log.warning("model failed: %s", exc)
            labels = guard.cited_labels
            yield WarningEvent(kind=WarningKind.MODEL_ERROR, message=f"The language model failed ({exc}); the answer "
                               "continues with the deterministic writer (no language model).")
    guard = OutputGuard.for_answer(prepared.rows, prepared.sources)
    deterministic = DeterministicWriter()
    withheld = yield from _guarded(deterministic.stream(prepared), guard)
    return deterministic.name, withheld, labels + guard.cited_labels


def _guarded(chunks: Iterator[str], guard: OutputGuard) -> Iterator[ChatEvent]:
    withheld = 0
    for chunk in chunks:
        for sentence in guard.feed(chunk):
            withheld += yield from _emit(sentence)
    for sentence in guard.flush():
        withheld += yield from _emit(sentence)
    return withheld


def _emit(sentence: GuardedSentence) -> Iterator[ChatEvent]:
    if not sentence.released:
        log.info("withheld %r: %s", sentence.original, "; ".join(sentence.reasons))
    yield TokenEvent(text=sentence.text, withheld=not sentence.released, reasons=sentence.reasons)
    return 0 if sentence.released else 1
