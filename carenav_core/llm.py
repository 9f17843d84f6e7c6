"""One language-model client for the chat and the screener: probe, stream, JSON reply, timeout,
one retry on a retryable error. Callers fall back to their deterministic writer (with a visible
warning) when it raises ModelError; the client itself decides nothing.

The model is never trusted: whatever this returns is checked by code (chat/guard.py,
screener/explain.py cross_check) before a user sees it.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import httpx
import ollama
from pydantic import BaseModel

from carenav_core.errors import ModelError
from carenav_core.settings import Settings

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 2.0   # seconds GET /api/tags may take before we write without a model
TRANSPORT_ERRORS = (ollama.ResponseError, ConnectionError, httpx.TransportError)
HEARTBEAT = 1.0       # seconds: a deadline-bound stream yields "" this often while it waits for the model


@dataclass(frozen=True, kw_only=True)
class Probe:
    """What GET /api/tags said: reachable, and whether the configured model is listed."""
    host: str
    reachable: bool
    has_model: bool
    detail: str


def probe(settings: Settings, timeout: float = PROBE_TIMEOUT) -> Probe | None:
    """Ask the configured server which models it has; None when no server is configured."""
    if not settings.ollama_host:
        return None
    host, model = settings.ollama_host, settings.llm_model
    try:
        with ollama.Client(host=host, timeout=timeout) as client:
            names = {m.model for m in client.list().models}
    except (*TRANSPORT_ERRORS, httpx.HTTPError, OSError, ValueError) as exc:
        return Probe(host=host, reachable=False, has_model=False, detail=f"{host} unreachable ({type(exc).__name__})")
    has_model = bool(names & {model, f"{model}:latest"})
    detail = f"Ollama at {host}: model {model} " + ("available" if has_model else f"NOT pulled (ollama pull {model})")
    return Probe(host=host, reachable=True, has_model=has_model, detail=detail)


def model_error(exc: Exception, model: str) -> ModelError:
    """Map a client/transport failure to ModelError, saying whether a retry may help."""
    if isinstance(exc, ollama.ResponseError):
        status = exc.status_code
        retryable = status < 0 or status >= 500 or status == 429
        hint = f" (is the model pulled? run `ollama pull {model}`)" if status == 404 else ""
        return ModelError(f"Ollama refused the request for {model}: {exc}{hint}", retryable=retryable)
    if isinstance(exc, httpx.TimeoutException):
        return ModelError(f"Ollama did not answer in time for {model}: {exc!r}", retryable=True)
    return ModelError(f"Ollama connection failed for {model}: {exc!r}", retryable=True)


@dataclass(frozen=True, kw_only=True)
class ModelClient:
    """The official `ollama` client bound to one model, with the retry policy of STYLE.md §8:
    a retryable error before anything was produced is tried once more, then ModelError is raised."""
    client: ollama.Client
    model: str
    keep_alive: str | float | None = None
    options: dict[str, Any] = field(default_factory=dict)
    host: str | None = None          # set: each streamed answer with a deadline gets a connection of its own
    timeout: float | None = None     # per-read timeout of those connections
    json_num_predict: int | None = None  # longest structured (JSON) reply, tokens (the screener's explanation)
    answer_timeout: float | None = None  # seconds a whole answer may take (chat and screener deadlines)

    @property
    def name(self) -> str:
        """Writer name shown to users, e.g. "ollama:llama3.2"."""
        return f"ollama:{self.model}"

    def stream(self, messages: list[dict[str, str]], options: dict[str, Any] | None = None, *,
               first_token_s: float | None = None, total_s: float | None = None) -> Iterator[str]:
        """Content chunks of a streamed chat reply. ModelError when the request or the stream fails
        (including a stream that ends before its final ``done`` line), or when the first chunk takes longer
        than `first_token_s` or the whole reply longer than `total_s` seconds (deadlines are enforced here,
        client-side; the request's connection is then closed so the server can stop). With a deadline, an
        empty chunk comes every HEARTBEAT seconds while the model has not sent anything new."""
        if first_token_s is None and total_s is None:
            yield from self._retrying(messages, options, self.client)
            return
        yield from self._with_deadline(messages, options, first_token_s, total_s)

    def _retrying(self, messages: list[dict[str, str]], options: dict[str, Any] | None,
                  client: ollama.Client, stopped: threading.Event | None = None) -> Iterator[str]:
        produced = False
        for attempt in (1, 2):
            try:
                for chunk in self._stream_once(messages, options, client):
                    produced = True
                    yield chunk
                return
            except ModelError as exc:
                if produced or not exc.retryable or attempt == 2 or (stopped is not None and stopped.is_set()):
                    raise
                log.warning("model request failed (%s); trying once more", exc)

    def _with_deadline(self, messages: list[dict[str, str]], options: dict[str, Any] | None,
                       first_token_s: float | None, total_s: float | None) -> Iterator[str]:
        # A connection of its own when the host is known, so closing it on expiry stops only this answer.
        client = ollama.Client(host=self.host, timeout=self.timeout) if self.host else self.client
        chunks: queue.Queue = queue.Queue()
        stop = threading.Event()

        def pump() -> None:
            try:
                for chunk in self._retrying(messages, options, client, stop):
                    if stop.is_set():
                        return
                    chunks.put(("chunk", chunk))
                chunks.put(("end", None))
            except ModelError as exc:
                chunks.put(("error", exc))
            except RuntimeError as exc:     # httpx: the connection was closed under us (the deadline passed)
                if not stop.is_set():
                    chunks.put(("error", ModelError(f"{self.name} stream failed: {exc}", retryable=False)))
        threading.Thread(target=pump, name="carenav-model-stream", daemon=True).start()
        started, first = time.monotonic(), True
        try:
            while True:
                limit = first_token_s if first else total_s
                remaining = None if limit is None else max(limit - (time.monotonic() - started), 0.0)
                try:
                    kind, item = chunks.get(timeout=HEARTBEAT if remaining is None else min(remaining, HEARTBEAT))
                except queue.Empty:
                    if remaining is not None and remaining <= HEARTBEAT:
                        what = "start answering" if first else "finish its answer"
                        raise ModelError(f"{self.name} did not {what} within {limit:g} s", retryable=False) from None
                    yield ""            # a heartbeat: still waiting (callers may show progress)
                    continue
                if kind == "end":
                    return
                if kind == "error":
                    raise item
                first = False
                yield item
        finally:
            stop.set()
            if client is not self.client:
                client.close()          # the server sees the request closed and can stop generating

    def _stream_once(self, messages: list[dict[str, str]], options: dict[str, Any] | None,
                     client: ollama.Client) -> Iterator[str]:
        try:
            parts = client.chat(model=self.model, messages=messages, stream=True, keep_alive=self.keep_alive,
                                options={**self.options, **(options or {})} or None)
            for part in parts:
                if part.message and part.message.content:
                    yield part.message.content
                if part.done:
                    return
        except TRANSPORT_ERRORS as exc:
            raise model_error(exc, self.model) from exc
        except ValueError as exc:   # a line that is not JSON, or not a chat response
            raise ModelError(f"Ollama sent an unreadable reply for {self.model}: {exc}", retryable=False) from exc
        raise ModelError(f"Ollama stream for {self.model} ended before it was done", retryable=True)

    def reply_json(self, messages: list[dict[str, str]], schema: type[BaseModel],
                   options: dict[str, Any] | None = None, *, total_s: float | None = None) -> str:
        """One non-streamed reply constrained to `schema`'s JSON schema (the caller validates it). With
        `total_s`, the reply (retry included) must come within that many seconds: the request gets a
        connection of its own whose timeout is the time left, closed on expiry so the server can stop."""
        started = time.monotonic()
        for attempt in (1, 2):
            left = None if total_s is None else total_s - (time.monotonic() - started)
            if left is not None and left < 1.0:
                raise ModelError(f"{self.name} did not answer within {total_s:g} s", retryable=False)
            client = ollama.Client(host=self.host, timeout=left) if self.host and left is not None else self.client
            try:
                predict = {"num_predict": self.json_num_predict} if self.json_num_predict else {}
                response = client.chat(model=self.model, messages=messages, stream=False,
                                       format=schema.model_json_schema(), keep_alive=self.keep_alive,
                                       options={**self.options, **predict, **(options or {})} or None)
                return response.message.content or ""
            except TRANSPORT_ERRORS as exc:
                error = model_error(exc, self.model)
            except ValueError as exc:
                error = ModelError(f"Ollama sent an unreadable reply for {self.model}: {exc}", retryable=False)
            finally:
                if client is not self.client:
                    client.close()
            if not error.retryable or attempt == 2:
                raise error
            log.warning("model request failed (%s); trying once more", error)
        raise AssertionError("unreachable")


def model_client(settings: Settings, *, probe_timeout: float = PROBE_TIMEOUT) -> ModelClient | None:
    """A ModelClient when `settings.ollama_host` is set and answers within `probe_timeout` seconds;
    None otherwise (callers then use their deterministic writer and say so)."""
    found = probe(settings, probe_timeout)
    if found is None or not found.reachable:
        if found is not None:
            log.warning("%s; writing without a model", found.detail)
        return None
    if not found.has_model:
        log.warning(found.detail)
    client = ollama.Client(host=settings.ollama_host, timeout=settings.llm_timeout)
    return ModelClient(client=client, model=settings.llm_model, keep_alive=settings.keep_alive,
                       options={"num_ctx": settings.llm_num_ctx}, host=settings.ollama_host,
                       timeout=settings.llm_timeout, json_num_predict=settings.llm_num_predict_screener,
                       answer_timeout=settings.llm_answer_timeout)
