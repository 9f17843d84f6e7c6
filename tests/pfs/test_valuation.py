"""Valuation against the CMS files themselves (an oracle reading the CSV directly)."""
import csv
import shutil
from decimal import ROUND_HALF_UP, Decimal


from carenav_core.pfs.build import build
from carenav_core.pfs.sources import ProposedAddendum
from carenav_core.pfs.valuation import open_reader, value
from carenav_core.settings import Settings
from tests.conftest import FIXTURES
from tests.pfs.test_build import small_catalog, small_mirror  # noqa: F401  (fixture)

CF = {2025: Decimal("32.3465"), 2026: Decimal("33.4009")}
FILES = {2025: "rvu25d/PPRRVU2025_Oct.csv", 2026: "rvu26c/PPRRVU2026_Jul_nonQPP.csv"}


def oracle_totals(mirror, cy, code):
    """(non-facility total, facility total) as the CMS file prints them; columns by header position."""
    with open(mirror / "cms" / FILES[cy], encoding="latin-1", newline="") as f:
        rows = list(csv.reader(f))
    header_at = next(i for i, r in enumerate(rows) if r and r[0] == "HCPCS")
    for row in rows[header_at + 1:]:
        if row and row[0] == code and row[1] == "":
            return Decimal(row[11]), Decimal(row[12])
    raise AssertionError(f"{code} not in {FILES[cy]}")


def cents(x):
    return x.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def test_apcm_payments_equal_file_totals_times_cf(fee_db, mirror):
    rows, unpriced = value(fee_db, ["G0556", "G0557", "G0558"])
    assert unpriced == []
    assert [(r.hcpcs, r.cy) for r in rows] == [(c, y) for c in ("G0556", "G0557", "G0558") for y in (2025, 2026)]
    for row in rows:
        nonfac, fac = oracle_totals(mirror, row.cy, row.hcpcs)
        assert (row.total_nonfac, row.total_fac) == (nonfac, fac)
        assert row.payment_nonfac == cents(nonfac * CF[row.cy])
        assert row.payment_fac == cents(fac * CF[row.cy])
        assert row.cf == CF[row.cy] and row.file_cf == CF[row.cy]
    g0556_2025 = rows[0]
    assert (g0556_2025.label, g0556_2025.payment_nonfac, g0556_2025.payment_fac) == ("[PFS CY2025 RVU25D]", Decimal("15.20"), Decimal("11.97"))
    assert g0556_2025.fr_citation == "89 FR 97710"
    assert g0556_2025.fr_url == "https://www.federalregister.gov/citation/89-FR-97710"


def test_last_n_years_and_codes_starting_mid_range(fee_db):
    rows, _ = value(fee_db, ["99439"], years=7)
    assert [r.cy for r in rows] == [2021, 2022, 2023, 2024, 2025, 2026]     # new in CY2021
    rows, _ = value(fee_db, ["99490"], years=4)
    assert [r.cy for r in rows] == [2023, 2024, 2025, 2026]
    rows, _ = value(fee_db, ["G2012"], years=2)                           # gone after CY2024
    assert [r.cy for r in rows] == [2023, 2024]


def test_modifier_rows_on_request_base_first(fee_db):
    base, _ = value(fee_db, ["71045"], years=1)
    assert [r.mod for r in base] == [""]
    with_mods, _ = value(fee_db, ["71045"], years=1, modifiers=True)
    assert [r.mod for r in with_mods] == ["", "26", "TC"]


def test_2024_split_cf_uses_the_one_in_force_and_reports_the_other(fee_db):
    row = value(fee_db, ["99490"], years=3)[0][0]
    assert row.cy == 2024 and row.vintage == "rvu24c"
    assert row.cf == Decimal("33.2875") and "Mar 9" in row.cf_label
    assert [(c.value, c.label) for c in row.other_cfs] == [(Decimal("32.7442"), "CY2024 Jan 1-Mar 8")]


def test_2026_uses_non_qp_and_reports_qp(fee_db):
    row = value(fee_db, ["G0556"])[0][-1]
    assert row.cy == 2026 and row.cf == Decimal("33.4009") and row.cf_label == "CY2026 non-QP"
    assert row.other_cfs[0].value == Decimal("33.5675")


def test_unpriced_codes_reported_not_raised(fee_db):
    rows, unpriced = value(fee_db, ["V9998", "G0556", "12345"])
    assert unpriced == ["12345", "V9998"]
    assert {r.hcpcs for r in rows} == {"G0556"}


def test_status_meaning(fee_db):
    row = value(fee_db, ["0001F"])[0][0]
    assert row.status == "I" and "Not valid for Medicare" in row.status_meaning


def test_proposed_rows_flagged_with_rule_cf_and_null_components(tmp_path, small_mirror):  # noqa: F811
    folder = small_mirror / "cms" / "cms-1848-p"
    folder.mkdir()
    shutil.copy(FIXTURES / "addendum_b_synthetic.csv", folder / "ADDENDUM_B.csv")
    settings = Settings(data_dir=tmp_path / "d", mirror=small_mirror)
    build(settings, catalog=small_catalog(proposed=[ProposedAddendum(
        rule_id="CMS-1848-P", cy=2027, url="https://www.cms.gov/x", file="ADDENDUM_B.csv")]))
    with open_reader(settings.duckdb_file) as con:
        rows, _ = value(con, ["G0556", "71045"], modifiers=True)
    proposed = [r for r in rows if r.proposed]
    g0556 = next(r for r in proposed if r.hcpcs == "G0556")
    assert g0556.label == "[CY2027 NPRM Addendum B]" and g0556.cy == 2027 and g0556.rule_id == "CMS-1848-P"
    assert g0556.cf == Decimal("32.8409") and g0556.payment_nonfac == cents(Decimal("0.49") * Decimal("32.8409"))
    assert [r.proposed for r in rows if r.hcpcs == "G0556"] == [False, False, True]     # vintages ascending
    x_ray = next(r for r in proposed if r.hcpcs == "71045" and r.mod == "")
    assert x_ray.total_fac is None and x_ray.payment_fac is None and x_ray.pe_fac_rvu is None
    assert x_ray.payment_nonfac is not None


def test_no_codes_no_rows(fee_db):
    assert value(fee_db, []) == ([], [])
