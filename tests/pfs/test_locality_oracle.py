"""The product's locality amounts against the independent locality oracle (eval/locality_oracle.py)."""
import ast
import random
from pathlib import Path

import pytest

from carenav_core.eval import locality_oracle as oracle_module
from carenav_core.eval.locality_oracle import LocalityOracle, LocalityOracleError, read_gpci
from carenav_core.pfs.locality import locality_rows


@pytest.fixture(scope="module")
def oracle(mirror):
    return LocalityOracle(mirror / "cms")


def test_oracle_imports_nothing_from_carenav_core():
    tree = ast.parse(Path(oracle_module.__file__).read_text(encoding="utf-8"))
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [("." * n.level) + (n.module or "") for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert imported and not [m for m in imported if m.startswith(("carenav_core", "."))], imported


def test_oracle_reproduces_pfrev25c_in_all_109_localities(oracle, mirror):
    matched, records, mismatches = oracle.pfrev_check(mirror / "cms" / "pfrev25c" / "PFREV25C.txt")
    assert (matched, records, mismatches) == (109, 109, {})


def test_product_equals_oracle_on_sampled_codes_years_and_every_locality(fee_db, oracle):
    codes = [c for (c,) in fee_db.execute(
        "SELECT DISTINCT hcpcs FROM current_rvu WHERE mod = '' AND status = 'A' ORDER BY hcpcs").fetchall()]
    sample = random.Random(13).sample(codes, 60) + ["99214", "76145", "G0556"]
    compared = 0
    for code in sample:
        ours = locality_rows(fee_db, [code]).rows
        assert ours, code
        for cy in sorted({r.national.cy for r in ours}):
            expected = oracle.expected(code, cy)
            got = {(r.place.mac, r.place.locality): (r.uncapped_nonfac, r.uncapped_fac) for r in ours if r.national.cy == cy}
            assert got == expected, (code, cy)
            compared += len(got)
    assert compared > 2000


@pytest.mark.parametrize("code, modifier", [("71045", "26"), ("71045", "TC"), ("93000", ""), ("88305", "26")])
def test_modifier_rows_equal_oracle(fee_db, oracle, code, modifier):
    rows = locality_rows(fee_db, [code], cys=[2025, 2026], modifier=modifier or None).rows
    for cy in (2025, 2026):
        got = {(r.place.mac, r.place.locality): (r.uncapped_nonfac, r.uncapped_fac) for r in rows if r.national.cy == cy}
        assert got and got == oracle.expected(code, cy, modifier)


def test_oracle_says_which_file_it_cannot_read(tmp_path):
    bad = tmp_path / "GPCI.csv"
    bad.write_text("title only\n1,2,3\n")
    with pytest.raises(LocalityOracleError, match="GPCI.csv: no header row with three GPCI columns"):
        read_gpci(bad)
