"""Outages under a running session: each still gives a complete answer (valuation, tokens, sources,
done) with a warning event saying what was degraded.

Covered elsewhere (tests/chat/test_pipeline.py): model stream ending in an error line, model slow to
start answering (timeout), model server configured but down from the start, fee DB absent from the
start, retrieval store unreachable from the start.
Here: the embedded PostgreSQL stopped mid-session, the DuckDB file removed or replaced mid-session,
the model server stopped mid-stream, and the model stalling mid-stream past the timeout.
"""
from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import ollama
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from carenav_core.backends import Backends
from carenav_core.chat.events import DoneEvent, SourcesEvent, TokenEvent, ValuationEvent, WarningEvent
from carenav_core.chat.pipeline import answer
from carenav_core.llm import ModelClient
from carenav_core.pfs.valuation import open_reader
from carenav_core.retrieval.store import embedded_url
from carenav_core.settings import PROJECT_ROOT
from tests.app.conftest import use_settings
from tests.reliability.conftest import stop_embedded_server

CCM = "How is chronic care management 99490 valued?"


def complete(events: list) -> None:
    """valuation first, then tokens (and warnings), then sources, then done."""
    assert isinstance(events[0], ValuationEvent) and events[0].rows
    assert isinstance(events[-2], SourcesEvent) and isinstance(events[-1], DoneEvent)
    assert any(isinstance(e, TokenEvent) and e.text.strip() for e in events)


def warnings_of(events, kind: str) -> list[WarningEvent]:
    return [e for e in events if isinstance(e, WarningEvent) and e.kind == kind]


def test_postgres_stopped_mid_session_degrades_then_recovers(stoppable_settings, stoppable_store):
    settings = stoppable_settings
    with open_reader(settings.duckdb_file) as con:
        backends = Backends(settings=settings, fee_db=con, store=stoppable_store)
        before = list(answer(CCM, backends))
        complete(before)
        assert (before[-2].cited or before[-2].also_retrieved) and not warnings_of(before, "retrieval")
        stop_embedded_server(settings)                  # pg_ctl stop under the cached engine
        during = list(answer(CCM, backends))
        complete(during)
        retrieved = [x for x in (*during[-2].cited, *during[-2].also_retrieved) if x.kind != "code family definition"]
        assert warnings_of(during, "retrieval") and not retrieved       # the family definition is not rule text
        assert [r.payment_nonfac for r in during[0].rows] == [r.payment_nonfac for r in before[0].rows]
        embedded_url(settings.pg_folder)                # the server comes back (same data folder)
        after = list(answer(CCM, backends))
    complete(after)
    assert not warnings_of(after, "retrieval"), "a session recovers once the server is back"
    assert after[-2] == before[-2]


def test_duckdb_file_removed_mid_session_keeps_the_open_answering(stoppable_settings, stoppable_store):
    settings = stoppable_settings
    con = open_reader(settings.duckdb_file)
    backends = Backends(settings=settings, fee_db=con, store=stoppable_store)
    first = list(answer(CCM, backends))
    settings.duckdb_file.unlink()
    second = list(answer(CCM, backends))    # the open connection still reads the build it opened
    con.close()
    complete(second)
    assert second[0].rows == first[0].rows


def _app(settings, monkeypatch) -> AppTest:
    use_settings(settings, monkeypatch)
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120)
    at.run()
    at.chat_input[0].set_value(CCM).run()
    assert not at.exception and at.dataframe
    return at


@pytest.mark.parametrize("replacement", ["removed", "garbage", "empty"])
def test_app_when_the_duckdb_file_goes_bad_mid_session(stoppable_settings, monkeypatch, replacement):
    settings = stoppable_settings
    at = _app(settings, monkeypatch)
    try:
        path = settings.duckdb_file
        if replacement == "removed":
            path.unlink()
        else:
            spare = path.with_name("incoming.tmp")
            spare.write_bytes(b"" if replacement == "empty" else os.urandom(4096))
            os.replace(spare, path)
        at.chat_input[0].set_value("What about 99487?").run()
        assert not at.exception, at.exception
        shown = " ".join(str(e.value) for e in [*at.warning, *at.error, *at.markdown])
        answered = any("99487" in set(frame.value["hcpcs"]) for frame in at.dataframe)
        assert answered or "database" in shown.lower(), shown[:500]
    finally:
        st.cache_resource.clear()


class _StallingModel:
    """A loopback model server that streams `chunks`, then stalls until stopped (as when the
    process is killed mid-answer) or forever (a model that hangs mid-stream)."""

    def __init__(self, chunks: list[str]) -> None:
        self.streaming, self.release = threading.Event(), threading.Event()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for chunk in chunks:
                    line = json.dumps({"model": "llama3.2", "created_at": "2026-01-01T00:00:00Z", "done": False,
                                       "message": {"role": "assistant", "content": chunk}}).encode() + b"\n"
                    self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                    self.wfile.flush()
                model.streaming.set()
                model.release.wait(30)
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def stop(self) -> None:
        """The server process goes away: listening socket closed, open streams cut."""
        self.server.shutdown()
        self.server.server_close()
        self.release.set()


@pytest.mark.parametrize("how", ["server stopped", "stalls past the timeout"])
def test_model_lost_mid_stream_gives_a_complete_labelled_answer(reliable_settings, reliable_db, reliable_store, how):
    model = _StallingModel(["CMS values CCM ", "with work RVUs. ", "And then"])
    client = ModelClient(client=ollama.Client(host=model.url, timeout=1.0 if how != "server stopped" else 30),
                         model="llama3.2")
    backends = Backends(settings=reliable_settings, fee_db=reliable_db, store=reliable_store, model=client)
    try:
        events = []
        for event in answer("How is 99490 valued?", backends):
            events.append(event)
            if how == "server stopped" and model.streaming.is_set() and not model.release.is_set():
                model.stop()
    finally:
        model.stop()
    complete(events)
    failed = warnings_of(events, "model_error")
    assert len(failed) == 1 and "deterministic" in failed[0].message
    assert events[-1].writer == "deterministic"
    prose = "".join(e.text for e in events if isinstance(e, TokenEvent))
    assert "No language model wrote this answer" in prose and "And then" not in prose
