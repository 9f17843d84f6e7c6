"""The PostgreSQL server reached by URL (issue 14 item 1): the standalone server .ci/run starts from the
pgserver wheel's binaries (tests/deploy/pg_server.py) with an ordinary role and a password over loopback
TCP. The store, retrieval, chat and screener store tests run on it through `any_store`/`any_backends`;
here: what the server is, a wrong password said clearly, and the server going away mid-session."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from carenav_core.chat.pipeline import answer
from carenav_core.errors import StoreError
from carenav_core.retrieval.store import Store
from tests.deploy import pg_server
from tests.reliability.test_outages import CCM, complete, warnings_of

pytestmark = pytest.mark.skipif(not os.environ.get(pg_server.DIR_ENV),
                                reason=f"{pg_server.DIR_ENV} is not set: .ci/run starts the server "
                                       "(python -m tests.deploy.pg_server start DIR)")


def test_the_server_is_postgresql_16_with_pgvector_and_an_ordinary_role(server_store):
    url = make_url(server_store.settings.database_url)
    assert url.host == "127.0.0.1" and url.port and url.password and url.username == pg_server.ROLE
    with server_store.engine.connect() as conn:
        role = conn.execute(text("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user")).one()
        version = conn.execute(text("SHOW server_version_num")).scalar()
        vector = conn.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).scalar()
        chunks = conn.execute(text("SELECT count(*) FROM chunks WHERE collection = 'rules'")).scalar()
    assert tuple(role) == (pg_server.ROLE, False)
    assert int(version) // 10000 == 16 and vector and chunks > 100


def test_a_wrong_password_is_a_store_error_that_says_so(server_store):
    wrong = make_url(server_store.settings.database_url).set(password="not-the-password")
    store = Store(server_store.settings.model_copy(update={"database_url": wrong.render_as_string(False)}))
    with pytest.raises(StoreError, match="password authentication failed for user \"carenav\""):
        store.engine


def paragraphs(events) -> list[str]:
    """Labels of the Federal Register paragraphs (from the store) among the answer's sources."""
    return [s.label for s in (*events[-2].cited, *events[-2].also_retrieved) if "¶" in s.label]


def test_server_going_away_mid_session_degrades_then_recovers(backends, server_store):
    folder = Path(os.environ[pg_server.DIR_ENV])
    on_server = dataclasses.replace(backends, store=server_store, settings=server_store.settings.model_copy(
        update={"duckdb_path": backends.settings.duckdb_file}))
    before = list(answer(CCM, on_server))
    complete(before)
    assert paragraphs(before) and not warnings_of(before, "retrieval")
    pg_server.stop(folder)                              # pg_ctl stop -m fast under the open engine
    try:
        during = list(answer(CCM, on_server))
    finally:
        pg_server.restart(folder)                       # same port, same data
    complete(during)
    assert warnings_of(during, "retrieval") and not paragraphs(during)
    assert [r.payment_nonfac for r in during[0].rows] == [r.payment_nonfac for r in before[0].rows]
    after = list(answer(CCM, on_server))
    complete(after)
    assert not warnings_of(after, "retrieval"), "the session recovers once the server is back"
    assert after[-2] == before[-2]
