"""The oracle: independent of the product, and right on hand-checked values from the CMS files."""
from __future__ import annotations

import ast
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from carenav_core.eval import oracle as oracle_module
from carenav_core.eval.oracle import DATA_DIR, Oracle, OracleError, conversion_factor, payment, read_base_rows


def test_oracle_imports_nothing_from_carenav_core():
    tree = ast.parse(Path(oracle_module.__file__).read_text(encoding="utf-8"))
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [("." * n.level) + (n.module or "") for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert imported and not [m for m in imported if m.startswith(("carenav_core", "."))], imported


@pytest.mark.parametrize(("code", "cy", "field", "expected"), [
    ("G0556", 2025, "total_nonfac", "0.47"),          # rvu25d: 0.25 + 0.20 + 0.02
    ("G0556", 2025, "payment_nonfac", "15.20"),        # 0.47 x 32.3465 = 15.2029
    ("G0556", 2025, "payment_fac", "11.97"),           # 0.37 x 32.3465 = 11.9682
    ("G0556", 2026, "cf", "33.4009"),                  # CY2026 non-QP, listed first
    ("G0556", 2026, "payment_nonfac", "16.37"),        # 0.49 x 33.4009 = 16.3664
    ("99439", 2021, "work_rvu", "0.54"),               # rvu21d, the code's first year
    ("99213", 2024, "cf", "33.2875"),                  # rvu24c is effective 2024-07-01: the March CF
])
def test_hand_checked_values(oracle, code, cy, field, expected):
    row = next(r for r in oracle.rows([code], years=20) if r.cy == cy)
    assert getattr(row, field) == Decimal(expected)


def test_row_label_and_release_are_the_latest_of_the_year(oracle):
    row = oracle.rows(["G0556"])[0]
    assert (row.cy, row.release, row.label) == (2025, "rvu25d", "[PFS CY2025 RVU25D]")
    assert {cy: r.id for cy, r in oracle.releases.items()}[2024] == "rvu24c"


@pytest.mark.parametrize(("code", "years"), [
    ("99439", (2021, 2022, 2023, 2024, 2025, 2026)),    # new in CY2021
    ("G2012", (2020, 2021, 2022, 2023, 2024)),          # gone from CY2025
    ("G0556", (2025, 2026)),                            # APCM, new in CY2025
    ("01160", (2020, 2021, 2022, 2023, 2024, 2025, 2026)),   # rvu20d writes it "1160"
    ("V9998", ()), ("12345", ()),
])
def test_years_a_code_exists(oracle, code, years):
    assert oracle.years_of(code) == years


def test_last_four_years_and_unpriced(oracle):
    assert [r.cy for r in oracle.rows(["99490"])] == [2023, 2024, 2025, 2026]
    assert [r.cy for r in oracle.rows(["G2012"])] == [2021, 2022, 2023, 2024]
    assert oracle.unpriced(["g0556", "V9998", "12345"]) == ["12345", "V9998"]


@pytest.mark.parametrize(("on", "cf"), [
    (date(2024, 3, 8), "32.7442"), (date(2024, 3, 9), "33.2875"), (date(2024, 12, 31), "33.2875"),
])
def test_cf_in_force_on_each_side_of_the_2024_change(on, cf):
    assert conversion_factor(DATA_DIR / "pfs_rules.toml", 2024, on) == Decimal(cf)


@pytest.mark.parametrize(("total", "cf", "expected"), [
    ("0.47", "32.3465", "15.20"), ("1.00", "0.005", "0.01"), ("1.00", "0.0049", "0.00"), (None, "32.3465", None),
])
def test_payment_rounds_half_up_to_cents(total, cf, expected):
    value = payment(Decimal(total) if total else None, Decimal(cf))
    assert value == (Decimal(expected) if expected else None)


HEADER = ",,,STATUS,MEDICARE ,WORK,NON-FAC,NA,FACILITY,NA,MP,NON-FACILITY,FACILITY\n" \
         "HCPCS,MOD,DESCRIPTION,CODE,PAYMENT,RVU,PE RVU,INDICATOR,PE RVU,INDICATOR,RVU,TOTAL,TOTAL\n"


@pytest.mark.parametrize(("content", "words"), [
    ("no header here\n1,2,3\n", "no header row starting with HCPCS"),
    (HEADER.replace("WORK", "LABOR"), "no column 'WORK RVU'"),
])
def test_broken_files_say_what_is_wrong(tmp_path, content, words):
    path = tmp_path / "PPRRVU.csv"
    path.write_text(content)
    with pytest.raises(OracleError, match=words):
        read_base_rows(path)


def test_reader_keeps_base_rows_and_pads_codes(tmp_path):
    path = tmp_path / "PPRRVU.csv"
    path.write_text("caption\n" + HEADER + "1160,,Anesth,J,,0.00,0.00,,0.00,,0.00,0.00,0.00\n"
                    "G0556,26,Mod row,A,,9.00,0,,0,,0,9.00,9.00\nG0556,,APCM,A,,0.25,0.20,,0.10,,0.02,0.47,0.37\n\x1a\n")
    rows = read_base_rows(path)
    assert set(rows) == {"01160", "G0556"} and rows["G0556"]["total_nonfac"] == "0.47"


def test_missing_release_folder_is_an_error(tmp_path):
    with pytest.raises(OracleError, match="no PPRRVU CSV for release"):
        Oracle(tmp_path)


def test_product_valuation_agrees_with_the_oracle_on_every_code(oracle, fee_db):
    from carenav_core.pfs.valuation import value
    every = sorted(set().union(*(oracle.codes_in(cy) for cy in oracle.releases)))
    rows, unpriced = value(fee_db, every + ["V9998"])
    fields = ("hcpcs", "cy", "status", "work_rvu", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu", "total_nonfac",
              "total_fac", "cf", "payment_nonfac", "payment_fac", "label")
    actual = sorted(tuple(getattr(r, f) for f in fields) + (r.vintage,) for r in rows if not r.proposed)
    expected = sorted(tuple(getattr(r, f) for f in fields) + (r.release,) for r in oracle.rows(every))
    assert len(expected) > 60_000 and actual == expected and unpriced == ["V9998"]
