"""The DuckDB build: atomic publish, previous database kept on failure, unchanged releases reused."""
import pickle
import shutil
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool

import duckdb
import pytest

from carenav_core.errors import DataError
from carenav_core.pfs import build as build_module
from carenav_core.pfs.build import build
from carenav_core.pfs.sources import ProposedAddendum, SourceCatalog, load_catalog
from carenav_core.settings import Settings
from tests.conftest import FIXTURES


def small_catalog(ids=("rvu25d", "rvu26c"), proposed=()) -> SourceCatalog:
    releases = tuple(r for r in load_catalog().releases if r.id in ids)
    return SourceCatalog(releases=releases, proposed=tuple(proposed), extra={})


@pytest.fixture
def small_mirror(tmp_path, mirror):
    root = tmp_path / "mirror"
    for release_id in ("rvu25d", "rvu26c"):
        target = root / "cms" / release_id
        target.mkdir(parents=True)
        for f in (mirror / "cms" / release_id).glob("PPRRVU*"):
            shutil.copy(f, target / f.name)
    return root


def count(path, table="rvu"):
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_full_build_has_every_release_and_latest_per_cy(built_settings):
    with duckdb.connect(str(built_settings.duckdb_file), read_only=True) as con:
        releases = {r[0] for r in con.execute("SELECT release_id FROM releases").fetchall()}
        current = dict(con.execute("SELECT cy, any_value(release_id) FROM current_rvu GROUP BY cy").fetchall())
    assert len(releases) == 22 and "rvu24ar" in releases and "rvu24d" not in releases
    assert current == {2020: "rvu20d", 2021: "rvu21d", 2022: "rvu22d", 2023: "rvu23d", 2024: "rvu24c",
                       2025: "rvu25d", 2026: "rvu26c"}


def test_rebuild_reuses_unchanged_releases(tmp_path, small_mirror):
    settings = Settings(data_dir=tmp_path / "d", mirror=small_mirror)
    first = build(settings, catalog=small_catalog())
    second = build(settings, catalog=small_catalog())
    assert first.releases == ["rvu25d", "rvu26c"] and first.reused == []
    assert second.releases == [] and second.reused == ["rvu25d", "rvu26c"]
    assert second.rows == first.rows == count(settings.duckdb_file)
    forced = build(settings, catalog=small_catalog(), force=True)
    assert forced.reused == []


def test_failed_build_leaves_previous_database_serving(tmp_path, small_mirror):
    settings = Settings(data_dir=tmp_path / "d", mirror=small_mirror)
    build(settings, catalog=small_catalog())
    before = count(settings.duckdb_file)
    reader = duckdb.connect(str(settings.duckdb_file), read_only=True)   # the app, reading
    bad = small_mirror / "cms" / "rvu26c" / "PPRRVU2026_Jul_nonQPP.csv"
    bad.write_bytes(bad.read_bytes().replace(b"G0556,,Adv prim care mgmt lvl 1,A,,0.25", b"G0556,,Adv prim care mgmt lvl 1,A,,x.25"))
    with pytest.raises(DataError, match=r"PPRRVU2026_Jul_nonQPP.csv.*line \d+.*work_rvu"):
        build(settings, catalog=small_catalog())
    assert count(settings.duckdb_file) == before
    assert reader.execute("SELECT count(*) FROM rvu").fetchone()[0] == before
    assert not list(settings.duckdb_file.parent.glob("*.tmp"))
    reader.close()


def rows(path):
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute("SELECT * EXCLUDE (source_file) FROM rvu ORDER BY release_id, hcpcs, mod").fetchall()


def fell_back(caplog) -> bool:
    return any("parsing worker failed" in r.getMessage() for r in caplog.records)


def test_parsing_workers_load_the_same_rows_as_one_process(tmp_path, small_mirror, monkeypatch, caplog):
    monkeypatch.setattr(build_module, "PARSE_WORKERS", 1)
    alone = Settings(data_dir=tmp_path / "one", mirror=small_mirror)
    build(alone, catalog=small_catalog())
    monkeypatch.setattr(build_module, "PARSE_WORKERS", 2)
    pooled = Settings(data_dir=tmp_path / "two", mirror=small_mirror)
    report = build(pooled, catalog=small_catalog())
    assert report.releases == ["rvu25d", "rvu26c"]
    assert not fell_back(caplog)                                   # the workers did the parsing
    assert rows(pooled.duckdb_file) == rows(alone.duckdb_file)


class DeadPool:
    """A process pool whose workers died (as when a worker process cannot start)."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def submit(self, *args) -> Future:
        future = Future()
        future.set_exception(BrokenProcessPool("a worker process died"))
        return future

    def shutdown(self, **kwargs) -> None:
        pass


def test_dead_parsing_workers_fall_back_to_parsing_here(tmp_path, small_mirror, monkeypatch, caplog):
    monkeypatch.setattr(build_module, "PARSE_WORKERS", 2)
    monkeypatch.setattr(build_module, "ProcessPoolExecutor", DeadPool)
    settings = Settings(data_dir=tmp_path / "d", mirror=small_mirror)
    report = build(settings, catalog=small_catalog())
    assert report.releases == ["rvu25d", "rvu26c"] and fell_back(caplog)
    assert count(settings.duckdb_file) == report.rows > 30000


def test_a_file_broken_in_a_parsing_worker_names_file_line_and_column(tmp_path, small_mirror, monkeypatch, caplog):
    monkeypatch.setattr(build_module, "PARSE_WORKERS", 2)        # two changed files: parsed in workers
    settings = Settings(data_dir=tmp_path / "d", mirror=small_mirror)
    bad = small_mirror / "cms" / "rvu26c" / "PPRRVU2026_Jul_nonQPP.csv"
    bad.write_bytes(bad.read_bytes().replace(b"G0556,,Adv prim care mgmt lvl 1,A,,0.25", b"G0556,,Adv prim care mgmt lvl 1,A,,x.25"))
    with pytest.raises(DataError, match=r"PPRRVU2026_Jul_nonQPP.csv.*line \d+.*work_rvu") as error:
        build(settings, catalog=small_catalog())
    assert error.value.path.endswith("PPRRVU2026_Jul_nonQPP.csv") and error.value.line > 1
    assert error.value.column == "work_rvu" and not fell_back(caplog)
    assert not settings.duckdb_file.exists()


def test_data_error_survives_pickling_whole():
    error = pickle.loads(pickle.dumps(DataError("expected a number", path="f.csv", line=7, column="mp_rvu")))
    assert (str(error), error.path, error.line, error.column) == (
        "file f.csv, line 7, column 'mp_rvu': expected a number", "f.csv", 7, "mp_rvu")


def test_missing_release_in_mirror_is_an_error_naming_it(tmp_path, small_mirror):
    settings = Settings(data_dir=tmp_path / "d", mirror=small_mirror)
    with pytest.raises(DataError, match="release rvu24c not in the mirror"):
        build(settings, catalog=small_catalog(ids=("rvu24c", "rvu25d")))
    assert not settings.duckdb_file.exists()


def test_proposed_addendum_loaded_keyed_by_rule_id(tmp_path, small_mirror):
    folder = small_mirror / "cms" / "cms-1848-p"
    folder.mkdir()
    shutil.copy(FIXTURES / "addendum_b_synthetic.csv", folder / "ADDENDUM_B_synthetic.csv")
    addendum = ProposedAddendum(rule_id="CMS-1848-P", cy=2027, url="https://www.cms.gov/x", file="nope.csv")
    settings = Settings(data_dir=tmp_path / "d", mirror=small_mirror)
    report = build(settings, catalog=small_catalog(proposed=[addendum]))
    assert report.proposed == ["CMS-1848-P"]
    assert count(settings.duckdb_file, "proposed_rvu") == 6


def test_optional_addendum_absent_is_reported_not_fatal(tmp_path, small_mirror):
    addendum = ProposedAddendum(rule_id="CMS-1848-P", cy=2027, url="https://www.cms.gov/x", file="x.csv", optional=True)
    report = build(Settings(data_dir=tmp_path / "d", mirror=small_mirror), catalog=small_catalog(proposed=[addendum]))
    assert report.proposed == [] and "CMS-1848-P" in report.skipped[0]
