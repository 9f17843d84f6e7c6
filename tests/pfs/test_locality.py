"""Locality payment against CMS's own payment file, and the locality tables of the build."""
import csv
from decimal import ROUND_HALF_UP, Decimal

import pytest

from carenav_core.errors import DataError
from carenav_core.pfs.gpci import parse_locality_file
from carenav_core.pfs.locality import (Locality, directory, locality_fee, locality_rows, nonpar_and_limiting,
                                       price_row)
from carenav_core.pfs.valuation import value


def pfrev_records(mirror):
    """(MAC, locality) -> (non-facility, facility) fee as CMS printed them in PFREV25C (the CMS PFS
    payment file layout: year, carrier, locality, HCPCS, modifier, non-facility fee, facility fee, ...)."""
    with open(mirror / "cms" / "pfrev25c" / "PFREV25C.txt", encoding="latin-1", newline="") as f:
        rows = [r for r in csv.reader(f) if r and r[0] == "2025"]
    return {(r[1], r[2]): (r[3], r[4].strip(), Decimal(r[5]), Decimal(r[6])) for r in rows}


def test_pfrev25c_76145_matches_in_all_109_localities_to_the_cent(fee_db, mirror):
    expected = pfrev_records(mirror)
    assert len(expected) == 109 and {v[0] for v in expected.values()} == {"76145"}
    result = locality_rows(fee_db, ["76145"], cys=[2025])
    ours = {(r.place.mac, r.place.locality): (r.payment_nonfac, r.payment_fac) for r in result.rows}
    assert len(ours) == 109
    mismatches = {k: (ours.get(k), v[2:]) for k, v in expected.items() if ours.get(k) != v[2:]}
    assert mismatches == {}


def test_integer_path_equals_the_decimal_formula(fee_db):
    """The fast integer arithmetic and the plain Decimal formula agree on real codes and localities."""
    book = directory(fee_db)
    rows, _ = value(fee_db, ["99214", "76145", "71045", "G0556", "27447", "00100"], years=7, modifiers=True)
    checked = 0
    for row in (r for r in rows if not r.proposed):
        for place in book.localities(row.cy)[::7]:
            priced = price_row(row, place, book)
            assert priced.uncapped_nonfac == locality_fee(row.work_rvu, row.pe_nonfac_rvu, row.mp_rvu, place, row.cf)
            assert priced.uncapped_fac == locality_fee(row.work_rvu, row.pe_fac_rvu, row.mp_rvu, place, row.cf)
            checked += 1
    assert checked > 300


@pytest.mark.parametrize("fee, nonpar, limiting", [
    ("100.00", "95.00", "109.25"), ("0.01", "0.01", "0.01"), ("0.00", "0.00", "0.00"),
    ("153.12", "145.46", "167.28"),     # 145.464 -> 145.46; 167.2836 -> 167.28
    ("10.10", "9.60", "11.03"),         # 9.595 -> 9.60 (half-up); 11.03425 -> 11.03
])
def test_nonpar_and_limiting_charge(fee, nonpar, limiting):
    assert nonpar_and_limiting(Decimal(fee)) == (Decimal(nonpar), Decimal(limiting))
    exact = Decimal(fee) * Decimal("0.95")
    assert Decimal(nonpar) == exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def test_every_cy_has_gpcis_and_2026_borrows_the_2025_county_file(fee_db):
    book = directory(fee_db)
    assert sorted(book.gpci) == list(range(2020, 2027))
    assert {cy: len(book.localities(cy)) for cy in (2020, 2024, 2025, 2026)} == {2020: 112, 2024: 109, 2025: 109, 2026: 109}
    assert book.county_note(2025) == ""
    assert "CY2025 LOCCO" in book.county_note(2026)
    result = locality_rows(fee_db, ["99214"], cys=[2026], places=["02402:02"])
    (row,) = result.rows
    assert row.label == "[PFS CY2026 RVU26C · GPCI2026 WA 02]"
    assert any("CY2025 LOCCO" in n for n in result.notes)
    assert (row.place.gpci_work, row.place.gpci_pe, row.place.gpci_mp) == (Decimal("1.050"), Decimal("1.227"),
                                                                            Decimal("0.817"))   # GPCI2026.csv


def test_qp_and_non_qp_both_shown_for_2026(fee_db):
    (row,) = locality_rows(fee_db, ["99214"], cys=[2026], places=["02402:02"]).rows
    assert row.national.cf == Decimal("33.4009")
    (other,) = row.other_cfs
    assert other.cf == Decimal("33.5675") and "QP" in other.cf_label
    assert other.payment_nonfac > row.payment_nonfac


def test_opps_cap_applies_where_the_file_lists_the_code(fee_db, mirror):
    """Some OPPSCAP line whose cap is below the PFS amount: the fee paid is the cap, both shown."""
    with open(mirror / "cms" / "rvu25d" / "OPPSCAP_Oct.csv", encoding="latin-1", newline="") as f:
        caps = [r for r in csv.DictReader(f) if r["PROCSTAT"] == "A"]
    known = {p.key for p in directory(fee_db).localities(2025)}
    caps = [c for c in caps if f"{c['CARRIER']}:{c['LOCALITY']}" in known]   # OPPSCAP also lists a few
    capped_seen = 0                                                             # MAC:LOC pairs Addendum E does not
    for cap in caps[:400]:
        result = locality_rows(fee_db, [cap["HCPCS"]], cys=[2025], places=[f"{cap['CARRIER']}:{cap['LOCALITY']}"],
                               modifier=cap["MOD"] or None)
        (row,) = result.rows
        assert row.opps_cap_nonfac == Decimal(cap["NON-FACILTY PRICE"])
        assert row.payment_nonfac == min(row.uncapped_nonfac, Decimal(cap["NON-FACILTY PRICE"]))
        capped_seen += row.payment_nonfac < row.uncapped_nonfac
    assert capped_seen > 0


def test_modifier_rows_are_priced_from_their_own_rvus(fee_db):
    base = locality_rows(fee_db, ["71045"], cys=[2025], places=["13202:01"]).rows[0]
    pc = locality_rows(fee_db, ["71045"], cys=[2025], places=["13202:01"], modifier="26").rows[0]
    tc = locality_rows(fee_db, ["71045"], cys=[2025], places=["13202:01"], modifier="TC").rows[0]
    assert pc.national.mod == "26" and tc.national.mod == "TC"
    assert pc.national.work_rvu == base.national.work_rvu and tc.national.work_rvu == 0
    assert abs(pc.payment_nonfac + tc.payment_nonfac - base.payment_nonfac) <= Decimal("0.02")


def test_unknown_locality_and_unpriced_modifier_are_noted(fee_db):
    result = locality_rows(fee_db, ["99214"], cys=[2025], places=["99999:01"])
    assert result.rows == [] and any("99999:01" in n and "MAC:LOC" in n for n in result.notes)
    result = locality_rows(fee_db, ["99214"], cys=[2025], modifier="TC")
    assert result.rows == [] and any("modifier TC is not priced for 99214" in n for n in result.notes)


def test_every_row_carries_its_gpci_file_and_sha(fee_db):
    con = fee_db
    bad = con.execute("""SELECT count(*) FROM gpci WHERE source_file = '' OR length(sha256) <> 64""").fetchone()[0]
    assert bad == 0
    kinds = dict(con.execute("SELECT kind, count(*) FROM locality_files GROUP BY kind").fetchall())
    assert kinds == {"gpci": 22, "locco": 21, "anes": 21, "oppscap": 1}


@pytest.mark.parametrize("text, kind, words", [
    ("mac,state,locality_number,locality_name,gpci_work,gpci_pe,gpci_mp\n10112,AL,00,ALABAMA,1.000,x.9,0.7\n",
     "gpci", ["line 2", "gpci_pe", "'x.9'"]),
    ("mac,locality_number,locality_name\n10112,00,ALABAMA\n", "gpci", ["GPCI header", "gpci_work"]),
    ("Contractor,Locality,Locality Name,Anes CF\n10112,AL,ALABAMA,19.31\n", "anes", ["line 2", "locality number", "'AL'"]),
    ("HCPCS,MOD,PROCSTAT,CARRIER,LOCALITY,FACILITY PRICE,NON-FACILTY PRICE\n", "oppscap", ["no rows with a MAC"]),
])
def test_malformed_locality_files_say_where_and_what(text, kind, words):
    with pytest.raises(DataError) as error:
        parse_locality_file(text.encode(), "GPCI_test.csv", kind)
    for word in words:
        assert word in str(error.value)


def test_locco_blank_state_cells_carry_the_state_above():
    text = ("Medicare Adminstrative Contractor,Locality Number,State ,Fee Schedule Area ,Counties\n"
            "2402,2,WASHINGTON ,SEATTLE (KING CNTY),KING\n,,,,\n2402,99,,REST OF STATE,ALL OTHER COUNTIES\n")
    table = parse_locality_file(text.encode(), "25LOCCO.csv", "locco")
    assert [(r["mac"], r["locality"], r["state"].strip()) for r in table.rows] == [
        ("02402", "02", "WASHINGTON"), ("02402", "99", "WASHINGTON")]


def test_locality_fee_needs_every_rvu():
    place = Locality(cy=2025, mac="1", locality="1", state="X", name="X", gpci_work=Decimal(1), gpci_pe=Decimal(1),
                     gpci_mp=Decimal(1), release_id="", source_file="", sha256="")
    assert locality_fee(None, Decimal(1), Decimal(1), place, Decimal(30)) is None
    assert locality_fee(Decimal(1), Decimal(1), Decimal(1), place, None) is None


def test_the_national_anesthesia_cf_an_anes_header_states_is_read_and_built(fee_db):
    text = "Contractor,Locality,Locality Name,National Anes CF of 20.3178\n10112 ,00 ,ALABAMA,19.31 \n"
    assert parse_locality_file(text.encode(), "ANES2025.csv", "anes").national == Decimal("20.3178")
    plain = "Contractor,Locality,Locality Name,Anesthesia Conversion Factor\n10112 ,00 ,ALABAMA,19.31 \n"
    assert parse_locality_file(plain.encode(), "ANES2024.csv", "anes").national is None
    from carenav_core.pfs.factors import national_anesthesia_cf
    assert national_anesthesia_cf(fee_db, 2025) == Decimal("20.3178")     # the mirror's CMS CY2025 file
    assert national_anesthesia_cf(fee_db, 2024) is None
