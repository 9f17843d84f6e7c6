"""Claim pricer: reductions, bad lines, Excel formulas that recompute the amounts; indicator registry."""
import io
import json
import re
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

import openpyxl
import pytest

from carenav_core.cli import main
from carenav_core.errors import ConfigError
from carenav_core.pfs.indicators import indicator_values, load_indicators, parse_indicators
from carenav_core.pfs.locality import directory, locality_fee
from carenav_core.pfs.pricer import ClaimFileError, claim_workbook, price_claim, read_claim
from carenav_core.pfs.valuation import value

HEADER = "code,modifier,units,facility,locality,date_of_service\n"
SEATTLE = "02402:02"


def cents(x):
    return x.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def fee(fee_db, code, cy, place_key, facility, mod="", cf=None):
    """The locality fee computed here from the national row and the GPCIs (the plain Decimal formula)."""
    rows, _ = value(fee_db, [code], years=50, modifiers=bool(mod))
    row = next(r for r in rows if r.cy == cy and r.mod == mod and not r.proposed)
    place = directory(fee_db).find(cy, place_key)
    pe = row.pe_fac_rvu if facility else row.pe_nonfac_rvu
    return locality_fee(row.work_rvu, pe, row.mp_rvu, place, cf or row.cf)


def priced(fee_db, body):
    lines, errors = read_claim(HEADER + body)
    return price_claim(fee_db, lines, errors)


def test_multi_procedure_claim_ranks_by_amount_100_50_50(fee_db):
    claim = priced(fee_db, "29881,,1,Y,02402:02,2025-03-04\n27447,,1,Y,02402:02,2025-03-04\n"
                           "27130,,1,Y,02402:02,2025-03-04\n")
    fees = {c: fee(fee_db, c, 2025, SEATTLE, True) for c in ("29881", "27447", "27130")}
    ranked = sorted(fees, key=lambda c: -fees[c])
    by_code = {line.claim.code: line for line in claim.lines}
    assert [by_code[c].rank for c in ranked] == [1, 2, 3]
    assert by_code[ranked[0]].allowed == fees[ranked[0]]
    for code in ranked[1:]:
        assert by_code[code].allowed == cents(fees[code] * Decimal("0.5"))
        step = next(s for s in by_code[code].steps if s.name.startswith("multiple procedure"))
        assert step.indicator.startswith("MULT PROC=") and "§40.6" in step.citation
    assert claim.total == sum(line.allowed for line in claim.lines)


def test_units_count_as_procedures(fee_db):
    (line,) = priced(fee_db, "27447,,3,Y,02402:02,2025-03-04\n").lines
    assert line.multiple_factor == Decimal("2.0")                  # 100% + 50% + 50%
    assert line.allowed == cents(fee(fee_db, "27447", 2025, SEATTLE, True) * 2)


def test_bilateral_assistant_co_surgery(fee_db):
    claim = priced(fee_db, "27130,50,1,Y,02402:02,2025-03-04\n27447,80,1,Y,02402:02,2025-03-05\n"
                           "27447,AS,1,Y,02402:02,2025-03-06\n27447,62,1,Y,02402:02,2025-03-07\n")
    bilateral, assistant, non_physician, co = claim.lines
    f27130, f27447 = fee(fee_db, "27130", 2025, SEATTLE, True), fee(fee_db, "27447", 2025, SEATTLE, True)
    assert bilateral.allowed == cents(f27130 * Decimal("1.5")) and bilateral.steps[0].indicator == "BILAT SURG=1"
    assert assistant.allowed == cents(f27447 * Decimal("0.16")) and "§20.4.3" in assistant.steps[0].citation
    assert non_physician.allowed == cents(f27447 * Decimal("0.136"))
    assert co.allowed == cents(f27447 * Decimal("0.625")) and "§40.8" in co.steps[0].citation


def test_assistant_and_surgeon_are_ranked_separately(fee_db):
    claim = priced(fee_db, "27447,,1,Y,02402:02,2025-03-04\n27447,80,1,Y,02402:02,2025-03-04\n")
    assert [line.rank for line in claim.lines] == [1, 1]


def test_bad_lines_are_reported_and_the_rest_priced(fee_db):
    claim = priced(fee_db, "99214,,1,N,02402:02,2025-01-01\n"
                           "99999,,1,N,02402:02,2025-01-01\n"      # unknown code
                           "99214,QQ,1,N,02402:02,2025-01-01\n"    # modifier not priced
                           "99214,26,1,N,02402:02,2025-01-01\n"    # no 99214-26 row
                           "99214,,1,N,02402:02,2019-06-01\n"      # outside the loaded years
                           "99214,,1,N,99999:01,2025-01-01\n"      # unknown locality
                           "99214,,x,N,02402:02,2025-01-01\n"      # units not a number
                           "27447,66,1,Y,02402:02,2025-03-04\n"    # team surgery: by report
                           "99214,,1,maybe,02402:02,2025-01-01\n")
    assert [line.claim.line for line in claim.lines] == [2]
    reasons = {e.line: e.reason for e in claim.errors}
    expected = {3: "99999 is in no loaded release", 4: "modifier QQ is not priced", 5: "modifier 26",
                6: "outside the loaded years", 7: "'99999:01' is not in the CY2025 GPCI file", 8: "units",
                9: "TEAM SURG", 10: "facility 'maybe'"}
    assert set(reasons) == set(expected)
    for line, words in expected.items():
        assert words in reasons[line], (line, reasons[line])


def test_cf_in_force_on_the_date_of_service(fee_db):
    """CY2024: 32.7442 until 2024-03-08, 33.2875 from 2024-03-09 (pfs_rules.toml)."""
    claim = priced(fee_db, "99214,,1,N,02402:02,2024-03-08\n99214,,1,N,02402:02,2024-03-09\n")
    before, after = claim.lines
    assert (before.cf, after.cf) == (Decimal("32.7442"), Decimal("33.2875"))
    assert before.allowed == fee(fee_db, "99214", 2024, SEATTLE, False, cf=Decimal("32.7442"))
    assert after.allowed == fee(fee_db, "99214", 2024, SEATTLE, False, cf=Decimal("33.2875"))


def _evaluate(sheet, formula: str, row: int) -> float:
    """Evaluate the pricer's formulas (ROUND, MIN, IF(x="",a,b), + * and cell references)."""
    def cell(ref):
        v = sheet[ref].value
        if isinstance(v, str) and v.startswith("="):
            return _evaluate(sheet, v, int(re.sub(r"[A-Z]", "", ref)))
        return v
    expression = formula[1:]
    expression = re.sub(r'IF\(([A-Z]+\d+)="",([A-Z]+\d+),(MIN\([^)]*\))\)', r'(\2 if \1 is None else \3)', expression)
    expression = re.sub(r"\b([A-Z]{1,2}\d+)\b", lambda m: f"cell('{m.group(1)}')", expression)
    return eval(expression, {"ROUND": lambda x, n: float(Decimal(repr(x)).quantize(Decimal(1).scaleb(-n), ROUND_HALF_UP)),
                             "MIN": min, "cell": cell, "SUM": sum})


def _formulas_recompute(claim) -> None:
    """Each Claim-sheet row's Allowed formula, evaluated on its own cells, gives CareNav's allowed amount."""
    sheet = openpyxl.load_workbook(io.BytesIO(claim_workbook(claim)))["Claim"]
    header = [c.value for c in sheet[1]]
    allowed, check = header.index("Allowed") + 1, header.index("CareNav allowed (check)") + 1
    for row in range(2, len(claim.lines) + 2):
        formula = sheet.cell(row=row, column=allowed).value
        assert formula.startswith("=ROUND(")
        assert _evaluate(sheet, formula, row) == pytest.approx(sheet.cell(row=row, column=check).value, abs=1e-9)


def test_excel_formulas_recompute_every_amount(fee_db):
    claim = priced(fee_db, "27447,,1,Y,02402:02,2025-03-04\n27130,50,1,Y,02402:02,2025-03-04\n"
                           "29881,,2,Y,02402:02,2025-03-04\n99214,,1,N,13202:01,2026-02-10\n99999,,1,N,02402:02,2025-01-01\n")
    _formulas_recompute(claim)
    book = openpyxl.load_workbook(io.BytesIO(claim_workbook(claim)))
    assert [r[0].value for r in book["Errors"].iter_rows(min_row=2)] == [6]
    provenance = [c.value for row in book["Provenance"].iter_rows() for c in row if c.value]
    assert any(str(v).endswith("GPCI2025.csv") for v in provenance)
    assert any(re.fullmatch(r"[0-9a-f]{64}", str(v)) for v in provenance)


def test_claim_file_without_required_columns():
    with pytest.raises(ClaimFileError, match="no column locality"):
        read_claim("code,units,facility,date_of_service\n99214,1,N,2025-01-01\n")


def test_every_indicator_value_in_the_files_has_a_meaning(fee_db):
    book = load_indicators()
    for key in ("mult_proc", "bilat_surg", "asst_surg", "co_surg", "team_surg", "pctc", "global_days", "phys_supv",
                "diag_family"):
        seen = {v for (v,) in fee_db.execute(f"SELECT DISTINCT {key} FROM pfs_indicators").fetchall()}
        unknown = sorted(v for v in seen if book.explain(key, v).meaning.startswith("Value "))
        assert unknown == [], (key, unknown)
    flags = indicator_values(fee_db, [(2026, "43239", "")])[(2026, "43239", "")]
    endo = book.explain("endo_base", flags["endo_base"])
    assert flags["endo_base"] == "43235" and "endoscopic base code" in endo.meaning and "§40.6" in endo.citation


@pytest.mark.parametrize("edit, words", [
    (lambda t: t.replace('section = "40.7"', 'section = "forty"'), ["section", "bilat_surg"]),
    (lambda t: t.replace('label = "Team surgery"', 'label = "Team surgery"\ncolour = "red"'), ["colour", "Extra inputs"]),
    (lambda t: t.replace('reference_href = "https://www.ecfr.gov/current/title-42/part-410/section-410.32"\n', ""),
     ["phys_supv", "reference_title and reference_href"]),
    (lambda t: t + '\n[indicator.mult_proc]\nlabel = "again"\n', ["mult_proc"]),
])
def test_broken_indicator_registry_says_what_and_where(edit, words):
    from carenav_core.pfs.indicators import INDICATORS_FILE
    with pytest.raises(ConfigError) as error:
        parse_indicators(edit(INDICATORS_FILE.read_text(encoding="utf-8")), source="broken.toml")
    assert "broken.toml" in str(error.value)
    for word in words:
        assert word in str(error.value)


def test_cli_value_locality_all_json(built_settings, monkeypatch, capsys):
    monkeypatch.setenv("CARENAV_DATA_DIR", str(built_settings.data_dir))
    assert main(["value", "G0556", "--cy", "2026", "--locality", "all", "--json"]) == 0
    reply = json.loads(capsys.readouterr().out)             # G0556 names its family (G0556-G0558), as `value` does
    records = reply["rows"]
    assert reply["unpriced"] == [] and reply["not_codes"] == [] and any("CY2025 LOCCO" in n for n in reply["notes"])
    g0556 = [r for r in records if r["hcpcs"] == "G0556"]
    assert len(g0556) == 109 and {r["cy"] for r in records} == {2026} and len(records) == 3 * 109
    seattle = next(r for r in g0556 if r["mac"] == "02402" and r["locality"] == "02")
    assert seattle["label"] == "[PFS CY2026 RVU26C · GPCI2026 WA 02]"
    for key in ("locality_name", "payment_nonfac", "payment_fac", "limiting_charge_nonfac", "limiting_charge_fac"):
        assert seattle[key]
    assert Decimal(seattle["limiting_charge_nonfac"]) == cents(Decimal(seattle["payment_nonfac"]) * Decimal("1.0925"))


def test_cli_value_place_name_and_price(built_settings, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("CARENAV_DATA_DIR", str(built_settings.data_dir))
    assert main(["value", "G0556", "--cy", "2026", "--locality", "Portland", "--json"]) == 0
    captured = capsys.readouterr()
    assert {r["state"] for r in json.loads(captured.out)["rows"]} == {"OR", "ME"} and "matches 2 localities" in captured.err
    claim = tmp_path / "claim.csv"
    claim.write_text(HEADER + "27447,,1,Y,02402:02,2025-03-04\n99999,,1,N,02402:02,2025-01-01\n")
    assert main(["price", str(claim), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert len(record["lines"]) == 1 and record["errors"][0]["line"] == 3
    assert record["total_allowed"] == record["lines"][0]["allowed"]
    assert main(["price", str(claim), "--xlsx", str(tmp_path / "c.xlsx")]) == 0 and (tmp_path / "c.xlsx").exists()


def test_read_claim_accepts_modifier_lists_and_settings():
    lines, errors = read_claim(HEADER + "27130,50 RT,2,facility,2402:2,2025-03-04\n")
    assert errors == [] and lines[0].modifiers == ("50", "RT") and lines[0].facility and lines[0].units == 2
    assert lines[0].date_of_service == date(2025, 3, 4)


@pytest.mark.parametrize("body, family, base_code", [
    ("45380,,1,N,02402:02,2026-03-04\n45385,,1,N,02402:02,2026-03-04\n", ("45385", "45380"), "45378"),
    ("43239,,1,Y,02402:02,2025-06-02\n43235,,1,Y,02402:02,2025-06-02\n", ("43239", "43235"), "43235"),
])
def test_endoscopies_of_one_family_are_paid_less_their_base(fee_db, body, family, base_code):
    """MULT PROC 3 (§40.6): the highest in full, each other its fee less the ENDO BASE code's fee at the locality;
    the base beside a member of its family adds nothing. The workbook's formula gives the same amount."""
    claim = priced(fee_db, body)
    by_code = {line.claim.code: line for line in claim.lines}
    facility = body.split(",")[3] == "Y"
    cy = int(body.split(",")[5][:4])
    fees = {c: fee(fee_db, c, cy, SEATTLE, facility) for c in (*family, base_code)}
    high, other = sorted(family, key=lambda c: -fees[c])
    assert by_code[high].allowed == fees[high]
    assert by_code[other].allowed == max(fees[other] - fees[base_code], Decimal(0))
    assert all(any(s.name.startswith("endoscopic family rule") and s.indicator == f"ENDO BASE={base_code}"
                   for s in line.steps) for line in claim.lines)
    for line in claim.lines:        # what the workbook's Allowed formula computes
        assert cents(line.fee * line.multiple_factor * line.bilateral_factor * line.surgeon_factor) == line.allowed


def test_an_endoscopic_family_is_one_procedure_beside_other_surgery(fee_db):
    claim = priced(fee_db, "45380,,1,Y,02402:02,2026-03-04\n45385,,1,Y,02402:02,2026-03-04\n"
                           "27447,,1,Y,02402:02,2026-03-04\n")
    fees = {c: fee(fee_db, c, 2026, SEATTLE, True) for c in ("45380", "45385", "45378", "27447")}
    by_code = {line.claim.code: line for line in claim.lines}
    assert by_code["27447"].allowed == fees["27447"]                  # the largest block, in full
    assert by_code["45385"].allowed == cents(fees["45385"] * Decimal("0.5"))
    assert by_code["45380"].allowed == cents((fees["45380"] - fees["45378"]) * Decimal("0.5"))


def _reduced(fee_db, code, cy, place_key, facility):
    """The unit fee with half its practice expense (the therapy MPPR), from the national row and the GPCIs."""
    rows, _ = value(fee_db, [code], years=50)
    row = next(r for r in rows if r.cy == cy and not r.mod and not r.proposed)
    place = directory(fee_db).find(cy, place_key)
    pe = row.pe_fac_rvu if facility else row.pe_nonfac_rvu
    return locality_fee(row.work_rvu, pe / 2, row.mp_rvu, place, row.cf), pe * place.gpci_pe


@pytest.mark.parametrize("body, cy, place_key, facility", [
    ("97110,GP,4,N,02402:02,2025-03-04\n97140,GP,2,N,02402:02,2025-03-04\n97161,GP,1,N,02402:02,2025-03-04\n",
     2025, SEATTLE, False),
    ("97530,GO,3,N,01112:05,2026-06-01\n97535,GO,2,N,01112:05,2026-06-01\n", 2026, "01112:05", False),
    ("97116,GP,2,Y,13202:01,2024-06-03\n", 2024, "13202:01", True),   # after the Mar 9 CF change
])
def test_therapy_units_of_one_day_pay_half_the_practice_expense_after_the_first(fee_db, body, cy, place_key, facility):
    claim = priced(fee_db, body)
    assert not claim.errors                                   # GP/GO are accepted
    units = []                                                # (PE payment, line, fee, reduced fee)
    for line in claim.lines:
        full = fee(fee_db, line.claim.code, cy, place_key, facility)
        reduced, pe = _reduced(fee_db, line.claim.code, cy, place_key, facility)
        units += [(pe, line.claim.line, full, reduced)] * line.claim.units
    units.sort(key=lambda u: (-u[0], u[1]))
    expected = {}
    for position, (_, number, full, reduced) in enumerate(units):
        expected[number] = expected.get(number, Decimal(0)) + (full if position == 0 else reduced)
    for line in claim.lines:
        assert line.allowed == expected[line.claim.line]
        step = next(s for s in line.steps if s.name.startswith("therapy multiple procedure"))
        assert step.indicator == "MULT PROC=5" and f"of {len(units)} units" in step.name
    assert claim.total < sum(full for _, _, full, _ in units)


def test_one_therapy_unit_and_other_days_are_not_reduced(fee_db):
    claim = priced(fee_db, "97110,GP,1,N,02402:02,2025-03-04\n97110,GP,1,N,02402:02,2025-03-05\n"
                           "99214,,1,N,02402:02,2025-03-04\n")
    assert [l.allowed for l in claim.lines[:2]] == [fee(fee_db, "97110", 2025, SEATTLE, False)] * 2
    assert not any(s.name.startswith("therapy") for l in claim.lines for s in l.steps)


@pytest.mark.parametrize("day, share", [("2025-03-04", Decimal("0.85")), ("2021-06-01", Decimal("1"))])
def test_therapy_assistant_modifier_pays_85_percent_from_2022(fee_db, day, share):
    (line,) = priced(fee_db, f"97110,GP CQ,1,N,02402:02,{day}\n").lines
    cy = int(day[:4])
    assert line.allowed == cents(fee(fee_db, "97110", cy, SEATTLE, False) * share)
    step = next(s for s in line.steps if s.name == "therapy assistant (CQ)")
    assert "1834(v)" in step.citation and (step.factor == share if share < 1 else step.factor is None)


@pytest.mark.parametrize("body", [
    "97110,GP,3,N,02402:02,2025-03-04\n97140,GP CQ,2,N,02402:02,2025-03-04\n97161,GP,1,N,02402:02,2025-03-04\n",
    "74177,,1,N,02402:02,2025-03-04\n70450,,2,N,02402:02,2025-03-04\n93306,,1,N,02402:02,2025-03-04\n"
    "93880,,1,N,02402:02,2025-03-04\n",
])
def test_excel_formulas_recompute_therapy_assistant_and_diagnostic_lines(fee_db, body):
    """The therapy, PT-assistant and diagnostic reductions are in the factors the workbook multiplies."""
    claim = priced(fee_db, body)
    _formulas_recompute(claim)


@pytest.mark.parametrize("body, cy, place_key, flag, tc_cut, pc_cut", [
    ("74177,,1,N,02402:02,2025-03-04\n70450,,1,N,02402:02,2025-03-04\n72148,,1,N,02402:02,2025-03-04\n",
     2025, SEATTLE, "4", Decimal("0.50"), Decimal("0.05")),                           # imaging: TC 50%, PC 5%
    ("93306,,1,N,13202:01,2026-05-05\n93880,,1,N,13202:01,2026-05-05\n", 2026, "13202:01", "6",
     Decimal("0.25"), Decimal(0)),                                                    # cardiovascular: TC 25%
    ("92134,,2,N,01112:05,2026-05-05\n", 2026, "01112:05", "7", Decimal("0.20"), Decimal(0)),   # ophthalmology
    ("74177,,1,N,02402:02,2025-03-04\n70450,26,1,Y,02402:02,2025-03-04\n", 2025, SEATTLE, "4",
     Decimal("0.50"), Decimal("0.05")),                                               # a -26 line: its PC only
])
def test_diagnostic_families_cut_the_technical_and_professional_parts_after_the_first(
        fee_db, body, cy, place_key, flag, tc_cut, pc_cut):
    """Indicators 4 / 6 / 7 on one date: each unit's TC (its -TC row here) ranked, the highest in full, each other
    less the family's cut; imaging also each PC (its -26 row) after the highest less 5%. A global line is paid its fee
    less its cuts."""
    claim = priced(fee_db, body)
    assert not claim.errors
    units = []          # (line number, fee, TC, PC)
    for line in claim.lines:
        mod = line.pricing_modifier
        facility = line.claim.facility
        tc = Decimal(0) if mod == "26" else fee(fee_db, line.claim.code, cy, place_key, facility, mod="TC")
        pc = Decimal(0) if mod == "TC" else fee(fee_db, line.claim.code, cy, place_key, facility, mod="26")
        units += [(line.claim.line, line.fee, tc, pc)] * line.claim.units
    cut = {number: Decimal(0) for number, *_ in units}
    for part, rate in ((2, tc_cut), (3, pc_cut)):
        for number, *_rest in sorted(units, key=lambda u: (-u[part], u[0]))[1:] if rate else []:
            cut[number] += cents(dict((u[0], u) for u in units)[number][part] * rate)
    for line in claim.lines:
        assert line.allowed == line.fee * line.claim.units - cut[line.claim.line]
        step = next(s for s in line.steps if "multiple procedure (rank" in s.name)
        assert step.indicator == f"MULT PROC={flag}"
    assert claim.total < sum(line.fee * line.claim.units for line in claim.lines)


def test_a_diagnostic_code_alone_on_its_day_is_not_reduced(fee_db):
    claim = priced(fee_db, "74177,,1,N,02402:02,2025-03-04\n70450,,1,N,02402:02,2025-03-05\n")
    assert [l.allowed for l in claim.lines] == [l.fee for l in claim.lines]
    assert not any("multiple procedure" in s.name for l in claim.lines for s in l.steps)


def test_a_diagnostic_line_with_modifier_59_is_a_session_of_its_own(fee_db):
    """59 / XE on an imaging line: another session that day, its components not cut with the first session's."""
    claim = priced(fee_db, "74177,,1,N,02402:02,2025-03-04\n70450,59,1,N,02402:02,2025-03-04\n")
    assert [l.allowed for l in claim.lines] == [l.fee for l in claim.lines]
    claim = priced(fee_db, "74177,,1,N,02402:02,2025-03-04\n70450,,1,N,02402:02,2025-03-04\n")
    assert claim.lines[1].allowed < claim.lines[1].fee
