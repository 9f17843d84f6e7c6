"""`carenav build --force` while the app reads: every answer comes whole from exactly one build.

Ten reader threads do what the pages do (carenav_core/ui/resources.py: reopen the fee-schedule
database when its mtime changes; retrieve() and code_cited() on the real store) while the main
thread runs build_all(force=True): a real forced rebuild of the DuckDB file (written aside, renamed
into place) and a real re-embedding of every FR document and the program corpus.

Covered elsewhere: a failed build leaves the previous database serving (tests/pfs/test_build.py).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import duckdb
import pytest
from sqlalchemy import text

import carenav_core.pfs.build as pfs_build
from carenav_core.build_all import build_all
from carenav_core.pfs.valuation import open_reader, value
from carenav_core.retrieval.search import code_cited, retrieve
from carenav_core.retrieval.store import Store
from tests.reliability.conftest import SMALL_FR, small_catalog, small_settings, write_release_files

READERS = 10
CODES = ("G0556", "G0557", "G0558", "99490", "99487")
QUESTIONS = ("How is chronic care management valued?", "What did the correction notice change?",
             "principal care management requirements", "G0556 APCM consent")
CITED = ["99490", "99487", "G0556"]
K = 6


def row_key(row) -> tuple:
    """A valuation row without its provenance (the same in both builds)."""
    return (row.hcpcs, row.mod, row.cy, row.vintage, row.work_rvu, row.total_nonfac, row.total_fac,
            row.payment_nonfac, row.payment_fac)


@dataclass
class Observed:
    valuations: list[tuple[float, frozenset[str], tuple]] = field(default_factory=list)  # (time, sha256s, rows)
    searches: list[tuple[float, tuple[str, ...], tuple[tuple[str, str], ...]]] = field(default_factory=list)
    cited: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    chunk_counts: list[dict[str, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class AppLikeReader:
    """One read-only connection, reopened when the file's mtime changes (as ui/resources.py does)."""

    def __init__(self, path) -> None:
        self.path, self.mtime, self.con = path, None, None

    def connection(self) -> duckdb.DuckDBPyConnection:
        mtime = self.path.stat().st_mtime_ns
        if mtime != self.mtime:
            old, self.con, self.mtime = self.con, open_reader(self.path), mtime
            if old is not None:
                old.close()
        return self.con

    def close(self) -> None:
        if self.con is not None:
            self.con.close()


def reader(store: Store, worker: int, stop: threading.Event, seen: Observed) -> None:
    settings = store.settings
    app = AppLikeReader(settings.duckdb_file)
    turn = 0
    try:
        while not stop.is_set():
            turn += 1
            time.sleep(0.05)          # a person's pace, not a benchmark: the build must get the CPU too
            rows, unpriced = value(app.connection(), CODES, years=settings.years)
            question = QUESTIONS[(worker + turn) % len(QUESTIONS)]
            found = retrieve(store, question, K, ("rules",))
            cited = code_cited(store, CITED, 2)
            with seen.lock:
                seen.valuations.append((time.monotonic(), frozenset(r.sha256 for r in rows),
                                        (tuple(map(row_key, rows)), tuple(unpriced))))
                seen.searches.append((time.monotonic(), found.warnings, tuple((h.label, h.text) for h in found.hits)))
                seen.cited.append((cited.warnings, tuple(h.label for h in cited.hits)))
    except Exception as exc:  # the assertion below reports it
        with seen.lock:
            seen.errors.append(f"reader {worker}: {type(exc).__name__}: {exc}")
    finally:
        app.close()


def count_chunks(store: Store, stop: threading.Event, seen: Observed) -> None:
    """Chunks per document, in one statement (one snapshot), as often as possible."""
    try:
        with store.engine.connect() as conn:
            while not stop.is_set():
                counts = dict(conn.execute(text("SELECT doc_id, count(*) FROM chunks WHERE collection = 'rules' "
                                                "GROUP BY doc_id")).all())
                conn.commit()
                with seen.lock:
                    seen.chunk_counts.append(counts)
    except Exception as exc:
        with seen.lock:
            seen.errors.append(f"chunk counter: {type(exc).__name__}: {exc}")


def shas(con) -> frozenset[str]:
    return frozenset(r[0] for r in con.execute("SELECT DISTINCT sha256 FROM current_rvu").fetchall())


@pytest.fixture
def small_data(tmp_path, mirror, monkeypatch):
    # Two FR documents, so the chunk counter also sees whether one document's new build can show beside the
    # other's old one (a one-document run, once beside this one, checked nothing more in 40 s of CI).
    settings = small_settings(tmp_path, mirror, fr=SMALL_FR)
    monkeypatch.setattr(pfs_build, "load_catalog", small_catalog)   # build_all's own catalog, two releases
    store = Store(settings)
    yield store
    store.close()


@pytest.mark.slow
def test_forced_rebuild_under_ten_readers_never_mixes_builds(small_data, mirror):
    store = small_data
    settings = store.settings
    with open_reader(settings.duckdb_file) as con:
        before_shas = shas(con)
        rows, unpriced = value(con, CODES, years=settings.years)
    expected_valuation = (tuple(map(row_key, rows)), tuple(unpriced))
    with store.engine.connect() as conn:
        expected_counts = dict(conn.execute(text("SELECT doc_id, count(*) FROM chunks WHERE collection = 'rules' "
                                                 "GROUP BY doc_id")).all())
        chunk_text = dict(conn.execute(text("SELECT label, text FROM chunks WHERE collection = 'rules'")).all())
    expected_cited = code_cited(store, CITED, 2).hits
    assert rows and expected_counts and expected_cited

    write_release_files(settings.mirror, mirror, "b")      # the rebuild publishes other sha256s
    seen, stop = Observed(), threading.Event()
    threads = [threading.Thread(target=reader, args=(store, n, stop, seen)) for n in range(READERS)]
    threads.append(threading.Thread(target=count_chunks, args=(store, stop, seen)))
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    started = time.monotonic()
    lines = build_all(settings, store, force=True)
    finished = time.monotonic()
    time.sleep(1.0)
    stop.set()
    for thread in threads:
        thread.join(timeout=60)

    assert not seen.errors, seen.errors
    rule_text = next(line for line in lines if line.startswith("rule text:"))
    assert f"embedded {len(expected_counts)}," in rule_text and "reused 0" in lines[0], lines
    with open_reader(settings.duckdb_file) as con:
        after_shas = shas(con)
    assert before_shas and after_shas and not before_shas & after_shas
    during = [v for v in seen.valuations if started <= v[0] <= finished]
    assert during and [s for s in seen.searches if started <= s[0] <= finished], "readers overlapped the build"
    for _, row_shas, answer in seen.valuations:                        # whole, and from one build
        assert answer == expected_valuation
        assert row_shas <= before_shas or row_shas <= after_shas, row_shas
    for _, warnings, hits in seen.searches:                            # complete, never half-indexed
        assert not warnings and len(hits) == K
        assert all(chunk_text[label] == body for label, body in hits)
    expected_labels = tuple(h.label for h in expected_cited)
    assert all(not w and labels == expected_labels for w, labels in seen.cited)
    assert seen.chunk_counts and all(c == expected_counts for c in seen.chunk_counts)


def test_the_app_serves_the_new_build_after_a_rebuild(tmp_path, mirror):
    import hashlib

    import streamlit as st

    from carenav_core.pfs.build import build
    from carenav_core.settings import Settings
    from carenav_core.ui import resources

    write_release_files(tmp_path / "mirror", mirror, "a")
    settings = Settings(data_dir=tmp_path / "data", mirror=tmp_path / "mirror")
    build(settings, catalog=small_catalog())
    st.cache_resource.clear()
    try:
        before = shas(resources.fee_db(settings))
        write_release_files(settings.mirror, mirror, "b")
        build(settings, catalog=small_catalog(), force=True)
        published = {hashlib.sha256(p.read_bytes()).hexdigest() for p in (settings.mirror / "cms").glob("*/PPRRVU*")}
        assert not before & published
        assert shas(resources.fee_db(settings)) == published      # the page's next query, after the rename
    finally:
        st.cache_resource.clear()
