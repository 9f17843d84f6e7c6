"""The PPRRVU parser on every release in the mirror, and each kind of bad input."""
import io
import zipfile
from decimal import Decimal

import pytest

from carenav_core.errors import DataError
from carenav_core.pfs.parse import parse_addendum_b, parse_pprrvu
from carenav_core.pfs.sources import load_catalog, locate
from tests.conftest import FIXTURES

# Data rows per release, as PROVENANCE.md of the mirror records them.
EXPECTED_ROWS = {"rvu20a": 17236, "rvu23a": 18010, "rvu23c": 18132, "rvu23d": 18168, "rvu24a": 18499,
                 "rvu24ar": 18499, "rvu24b": 18534, "rvu24c": 18664, "rvu25d": 19090, "rvu26c": 19356}


@pytest.fixture(scope="module")
def parsed(mirror):
    out = {}
    for release in load_catalog().releases:
        raw, origin = locate(mirror / "cms", release.id, release.pprrvu, "PPRRVU")
        out[release.id] = parse_pprrvu(raw, origin)
    return out


def test_every_release_in_the_mirror_parses(parsed):
    assert len(parsed) == 22
    for release_id, rows in EXPECTED_ROWS.items():
        assert len(parsed[release_id].rows) == rows, release_id


def test_columns_found_by_header_text_in_2026_layout(parsed):
    columns = parsed["rvu26c"].columns
    assert columns["file_cf"] == "CONV FACTOR"
    g0556 = next(r for r in parsed["rvu26c"].rows if r["hcpcs"] == "G0556" and r["mod"] == "")
    assert g0556["file_cf"] == Decimal("33.4009")
    assert g0556["work_rvu"] == Decimal("0.25")
    assert g0556["total_nonfac"] == Decimal("0.49")


def test_trailing_ctrl_z_and_blank_rows_skipped(parsed):
    rows = parsed["rvu23a"].rows
    assert rows[-1]["hcpcs"] != ""
    assert all(r["hcpcs"] for r in rows)


def test_leading_zeros_restored(parsed):
    codes = {r["hcpcs"] for r in parsed["rvu20d"].rows}
    assert "00100" in codes and "100" not in codes


def test_every_row_totals_add_up(parsed):
    for release_id in ("rvu25d", "rvu26c"):
        for row in parsed[release_id].rows:
            components = row["work_rvu"] + row["pe_nonfac_rvu"] + row["mp_rvu"]
            assert abs(components - row["total_nonfac"]) <= Decimal("0.011"), (release_id, row["hcpcs"])


HEADER = ("HCPCS,MOD,DESCRIPTION,STATUS CODE,WORK RVU,NON-FAC PE RVU,FACILITY PE RVU,MP RVU,"
          "NON-FACILITY TOTAL,FACILITY TOTAL\n")


@pytest.mark.parametrize("content, words", [
    (HEADER.replace("MP RVU,", "") + "99490,,Ccm,A,1.00,0.81,0.42,1.87,1.48\n", ["line 1", "missing required column", "mp_rvu"]),
    (HEADER + "99490,,Ccm,A,1.00,abc,0.42,0.06,1.87,1.48\n", ["line 2", "pe_nonfac_rvu", "expected a number", "'abc'"]),
    (HEADER + "99490,,Ccm,A,1,0.81,0.42,0.06,1.87,1.48\n99490,,Ccm,A,1,0.81,0.42,0.06,1.87,1.48\n",
     ["line 3", "duplicate HCPCS+MOD 99490", "first on line 2"]),
    ("", ["file is empty"]),
    ("\x1a\r\n,,,\r\n", ["file is empty"]),
    ("title only\n,,,\n", ["no header row whose first cell is 'HCPCS'"]),
    (HEADER, ["no data rows"]),
    (HEADER + "9949,,Ccm,A,1,0.81,0.42,0.06,1.87,1.48X\n".replace("9949,", "99X,"), ["5-character HCPCS"]),
])
def test_bad_input_names_file_line_and_column(content, words):
    with pytest.raises(DataError) as info:
        parse_pprrvu(content.encode("latin-1"), "bad/PPRRVU_TEST.csv")
    message = str(info.value)
    assert "bad/PPRRVU_TEST.csv" in message
    for word in words:
        assert word in message


def test_zip_without_pprrvu_file(tmp_path):
    archive = tmp_path / "rvu99a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("GPCI2099.csv", "x")
    with pytest.raises(DataError, match=r"rvu99a.zip.*no PPRRVU CSV file.*GPCI2099.csv"):
        locate(tmp_path, "rvu99a", "PPRRVU99.csv", "PPRRVU")


def test_release_zip_is_accepted(tmp_path, mirror):
    source = mirror / "cms" / "rvu25d" / "PPRRVU2025_Oct.csv"
    with zipfile.ZipFile(tmp_path / "rvu25d.zip", "w") as zf:
        zf.write(source, "PPRRVU2025_Oct.csv")
    raw, origin = locate(tmp_path, "rvu25d", "PPRRVU2025_Oct.csv", "PPRRVU")
    assert raw == source.read_bytes() and origin.endswith("rvu25d.zip!PPRRVU2025_Oct.csv")


def test_unreadable_path(tmp_path):
    folder = tmp_path / "rvu99a"
    (folder / "PPRRVU99.csv").mkdir(parents=True)      # a directory where a file should be
    with pytest.raises(DataError, match=r"PPRRVU99.csv.*cannot read"):
        locate(tmp_path, "rvu99a", "PPRRVU99.csv", "PPRRVU")


def test_addendum_b_synthetic_fixture():
    parsed = parse_addendum_b((FIXTURES / "addendum_b_synthetic.csv").read_bytes(), "addendum_b_synthetic.csv")
    assert parsed.columns["work_rvu"] == "WORK RVUS"
    assert parsed.columns["global_days"] == "GLOBAL"
    by_key = {(r["hcpcs"], r["mod"]): r for r in parsed.rows}
    assert by_key[("G0556", "")]["work_rvu"] == Decimal("0.26")
    assert by_key[("71045", "")]["total_fac"] is None          # blank stays blank
    assert by_key[("71045", "TC")]["pe_nonfac_rvu"] == Decimal("0.55")
    assert parsed.rows[0]["file_cf"] is None


def test_csv_reader_handles_quoted_commas():
    content = HEADER + '99490,,"Ccm, staff",A,1.00,0.81,0.42,0.06,1.87,1.48\n'
    parsed = parse_pprrvu(io.BytesIO(content.encode()).getvalue(), "q.csv")
    assert parsed.rows[0]["description"] == "Ccm, staff"
