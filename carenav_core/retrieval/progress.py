"""How far the rule-text index is: one row per collection in `index_runs`, written by the indexer as
it embeds (planned chunks, chunks done, start, last update, finish or error) and read by the Data page,
`carenav index --status` and the chat's note ("rule text still indexing: 1,240 of 5,196 paragraphs").

A collection is complete only when its last run finished without error; a half-built index is served
(its committed documents are searchable) but never reported as complete.
"""
from __future__ import annotations

from dataclasses import dataclass
from sqlalchemy import Connection, Engine, text

from carenav_core.retrieval.store import STORE_ERRORS, Store

RULES = "rules"
STALE_SECONDS = 300   # a run silent this long has died (a batch takes seconds, or ~1 min on a saturated machine)


@dataclass(frozen=True, kw_only=True)
class IndexProgress:
    """Paragraphs (chunks) of a collection indexed so far. `total` 0: nothing known yet (never
    indexed, or the store is down: `problem` says which). `eta_seconds` None while unknown."""
    collection: str
    done: int
    total: int
    complete: bool
    running: bool = False
    eta_seconds: float | None = None
    rate: float | None = None           # chunks embedded per second in the current run
    error: str | None = None
    problem: str | None = None

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else (1.0 if self.complete else 0.0)


def start_run(engine: Engine, collection: str, *, planned: int, total: int) -> None:
    """Record that a run will embed `planned` chunks, leaving the collection with `total`."""
    with engine.begin() as conn:
        conn.execute(text("""INSERT INTO index_runs (collection, planned, done, total, started_at, updated_at)
            VALUES (:c, :p, 0, :t, now(), now()) ON CONFLICT (collection) DO UPDATE
            SET planned = :p, done = 0, total = :t, started_at = now(), updated_at = now(),
                finished_at = NULL, error = NULL"""), {"c": collection, "p": planned, "t": total})


def advance(engine: Engine, collection: str, done: int) -> None:
    """Record `done` chunks embedded so far in the current run."""
    with engine.begin() as conn:
        conn.execute(text("UPDATE index_runs SET done = :d, updated_at = now() WHERE collection = :c"),
                     {"c": collection, "d": done})


def finish_run(engine: Engine, collection: str, error: str | None = None) -> None:
    """Record the end of the run: complete when `error` is None."""
    with engine.begin() as conn:
        conn.execute(text("""UPDATE index_runs SET finished_at = CASE WHEN CAST(:e AS text) IS NULL THEN now() END,
            error = CAST(:e AS text), updated_at = now() WHERE collection = :c"""), {"c": collection, "e": error})


_READ = text("""SELECT r.planned, r.done, r.total, r.started_at, r.updated_at, r.finished_at, r.error, now() AS now,
       (SELECT count(*) FROM chunks k WHERE k.collection = :c) AS stored
FROM index_runs r WHERE r.collection = :c""")


def read_progress(conn: Connection, collection: str = RULES) -> IndexProgress:
    """Progress of `collection` from its run row (a collection indexed before runs were recorded
    counts as complete when it holds chunks)."""
    row = conn.execute(_READ, {"c": collection}).first()
    if row is None:
        stored = conn.execute(text("SELECT count(*) FROM chunks WHERE collection = :c"), {"c": collection}).scalar()
        return IndexProgress(collection=collection, done=stored, total=stored, complete=bool(stored))
    if row.finished_at is not None:
        return IndexProgress(collection=collection, done=row.total, total=row.total, complete=True)
    done = max(0, row.total - row.planned) + row.done
    return IndexProgress(collection=collection, done=min(done, row.total), total=row.total, complete=False,
                         running=row.error is None and (row.now - row.updated_at).total_seconds() < STALE_SECONDS,
                         error=row.error, **_pace(row))


def _pace(row) -> dict:
    """Rate and ETA from the run's own pace (None until a chunk is done)."""
    elapsed = (row.updated_at - row.started_at).total_seconds()
    if row.done <= 0 or elapsed <= 0:
        return {}
    rate = row.done / elapsed
    return {"rate": rate, "eta_seconds": max(0.0, (row.planned - row.done) / rate)}


def index_progress(store: Store, collection: str = RULES) -> IndexProgress:
    """Progress of `collection`; never raises (a down store gives total 0 and a `problem`)."""
    try:
        with store.engine.connect() as conn:
            return read_progress(conn, collection)
    except STORE_ERRORS as exc:
        return IndexProgress(collection=collection, done=0, total=0, complete=False, problem=str(exc))


def progress_note(progress: IndexProgress) -> str | None:
    """The note an answer carries while the rule text is incomplete (None when complete).

    >>> progress_note(IndexProgress(collection="rules", done=1240, total=5196, complete=False, running=True))
    'rule text still indexing: 1,240 of 5,196 paragraphs'
    >>> progress_note(IndexProgress(collection="rules", done=5196, total=5196, complete=True)) is None
    True
    """
    if progress.complete:
        return None
    if progress.problem:
        return f"rule text unavailable: {progress.problem.splitlines()[0]}"
    if progress.error:
        return (f"rule text index incomplete ({progress.done:,} of {progress.total:,} paragraphs): "
                f"the last run failed: {progress.error}; run `carenav index`")
    if progress.total == 0:
        return "rule text not indexed yet: run `carenav build`"
    verb = "still indexing" if progress.running else "incomplete"
    return f"rule text {verb}: {progress.done:,} of {progress.total:,} paragraphs"


def eta_words(seconds: float | None) -> str:
    """'about 3 min' style ETA.

    >>> eta_words(200), eta_words(40), eta_words(None)
    ('about 3 min', 'under a minute', 'unknown')
    """
    if seconds is None:
        return "unknown"
    return "under a minute" if seconds < 60 else f"about {round(seconds / 60)} min"
