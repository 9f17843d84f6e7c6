import pytest
from hypothesis import given, settings as hsettings, strategies as st

from datetime import date

from carenav_core.chat.plan import plan_question
from carenav_core.codes import detect
from carenav_core.codes.detect import RANGE_MAX
from carenav_core.codes.families import Family


@pytest.mark.parametrize("text, explicit", [
    ("How is G0556 valued?", ("G0556",)),
    ("what about g0556", ("G0556",)),
    ("code 99490?", ("99490",)),
    ("99490/99439", ("99439", "99490")),
    ("99490, 99439 and 99490 again", ("99439", "99490")),
    ("Category II 1036F and III 0591T", ("0591T", "1036F")),
    ("vaccine administration 0073A", ("0073A",)),
    ("(G2211)", ("G2211",)),
])
def test_explicit_codes(text, explicit):
    assert detect(text).explicit == explicit


@pytest.mark.parametrize("text, family", [
    ("What is APCM?", "APCM"),
    ("advanced primary care management billing", "APCM"),
    ("Chronic Care Management rules", "CCM"),
    ("chronic-care   management", "CCM"),
    ("principal care management", "PCM"),
    ("transitional care management after discharge", "TCM"),
    ("advance care planning", "ACP"),
    ("collaborative care model", "BHI"),
    ("remote patient monitoring", "RPM"),
    ("annual wellness visit", "AWV"),
    ("principal illness navigation", "PIN"),
    ("PIN peer support", "PIN_PS"),
    ("community health integration", "CHI"),
    ("SDOH risk assessment", "SDOH"),
    ("caregiver training", "CTS"),
    ("the Welcome to Medicare visit", "IPPE"),
    ("interprofessional consultation codes", "INTERPROFESSIONAL"),
    ("telephone E/M visit codes", "TELEPHONE_EM"),
    ("prolonged service codes", "PROLONGED"),
    ("virtual check-in", "CTBS"),
    ("the visit complexity add-on", "OFFICE_EM"),
])
def test_families_by_name_or_synonym(text, family):
    detection = detect(text)
    assert family in detection.families
    assert detection.explicit == ()


@pytest.mark.parametrize("text", ["XCCM", "CCMx", "PCM2", "apcm_x", "TCMSx", "the CCMed list"])
def test_word_boundaries(text):
    assert detect(text).families == ()


@pytest.mark.parametrize("text, families", [("TCMs are not APCMs", ("APCM", "TCM")), ("40 AWVs a week", ("AWV",)),
                                            ("CCM's time rules", ("CCM",))])
def test_a_family_named_in_the_plural_or_possessive_is_that_family(text, families):
    assert sorted(detect(text).families) == sorted(families)


def test_member_code_pulls_in_family():
    detection = detect("Is G0557 billable?")
    assert detection.families == ("APCM",)
    assert detection.codes == ("G0556", "G0557", "G0558")
    assert detection.explicit == ("G0557",)


def test_codes_sorted_unique_across_family_and_explicit():
    detection = detect("APCM and G0556 and 99490 and chronic care management")
    assert list(detection.codes) == sorted(set(detection.codes))
    assert {"G0556", "99490", "99439"} <= set(detection.codes)


@pytest.mark.parametrize("text", [
    "See 89 FR 97710 and 86 FR 65115.",
    "It pays $17,100 or $12345.00 or $ 99490",
    "19,090 rows and 12,345,678 dollars",
    "In 2025 and CY2026 and FY2024",
    "The CF is 33.4009 and 32.34650",
    "https://www.federalregister.gov/d/2024-25382 and /citation/89-FR-97710",
    "",
])
def test_not_codes(text):
    assert detect(text).codes == ()


@pytest.mark.parametrize("text, explicit", [
    ("How are G0556-G0558 valued?", ("G0556", "G0557", "G0558")),
    ("APCM G0556 \u2013 G0558", ("G0556", "G0557", "G0558")),            # en dash, spaced
    ("g0556 thru G0558", ("G0556", "G0557", "G0558")),
    ("G0556 through G0558", ("G0556", "G0557", "G0558")),
    ("RPM 99453-99458", ("99453", "99454", "99457", "99458")),           # only codes a family lists
    ("complex CCM 99487-99489", ("99487", "99489")),                     # 99488 is in no family (deleted)
    ("surgical codes 10000-69999", ("10000", "69999")),                 # a class of codes: ends only
    ("G0556-99490", ("99490", "G0556")),                                # different shapes
    ("compare 99490 to 99495", ("99490", "99495")),                     # "to" compares, it is no range
    ("99495-99490", ("99490", "99495")),                                # backwards
    ("Fees: 99490 $62.16 - 99495 $120", ("99490", "99495")),           # a price between: no range
    ("99490 (89 FR 97710) - 99495", ("99490", "99495")),
    ("Which of these?\n- 99490\n- 99495", ("99490", "99495")),          # a bulleted list: no range
])
def test_a_short_range_names_the_codes_between_its_ends(text, explicit):
    assert detect(text).explicit == explicit


def test_a_range_is_filled_in_up_to_range_max_codes():
    family = Family(key="X", name="X", synonyms=("xfam",), codes=tuple(f"A{n:04d}" for n in range(1, 30)),
                    reference="https://example.org")
    longest = detect(f"A0001-A{RANGE_MAX:04d}", (family,))
    assert longest.explicit == tuple(f"A{n:04d}" for n in range(1, RANGE_MAX + 1))
    assert dict(longest.filled) == {f"A{n:04d}": "A0001" for n in range(2, RANGE_MAX)}
    # both ends in one family: its members between them, past RANGE_MAX (only registered codes are filled in)
    assert detect(f"A0001-A{RANGE_MAX + 1:04d}", (family,)).explicit == tuple(f"A{n:04d}" for n in range(1, RANGE_MAX + 2))
    # an end outside the family: the short-range cap holds
    assert detect(f"A0001-A{RANGE_MAX + 40:04d}", (family,)).explicit == ("A0001", f"A{RANGE_MAX + 40:04d}")


def test_a_compare_with_a_range_keeps_the_question_order():
    question = "Compare 99490 with G0556-G0558 in 2026"
    plan = plan_question(question, detect(question), date(2026, 12, 1))
    assert plan.named_codes == ("99490", "G0556", "G0557", "G0558")


@pytest.mark.parametrize("question, order", [
    ("How were G0556-G0558 valued, and what about the G0557 work RVU?", ("G0556", "G0557", "G0558")),
    ("Is G0557 paid more than G0556-G0558?", ("G0557", "G0556", "G0558")),       # written before the range
])
def test_a_code_in_a_range_and_written_again_keeps_its_first_place(question, order):
    assert plan_question(question, detect(question), date(2026, 12, 1)).named_codes == order


def test_unknown_code_is_still_a_candidate():
    # value() reports it as not priced; detection does not know the data.
    assert detect("what about V9998?").explicit == ("V9998",)


@hsettings(max_examples=300, deadline=None)
@given(st.text())
def test_detect_never_raises_and_is_sorted_unique(text):
    detection = detect(text)
    assert list(detection.codes) == sorted(set(detection.codes))
    assert set(detection.explicit) <= set(detection.codes)
    assert all(len(c) == 5 for c in detection.codes)


def test_a_range_within_one_family_fills_in_its_registered_members_however_far_apart():
    detection = detect("which office E/M code (99202-99215) got the biggest % increase?")
    assert detection.explicit == ("99202", "99203", "99204", "99205", "99211", "99212", "99213", "99214", "99215")
    assert detect("20001-20005").explicit == ("20001", "20005")       # not a family's range: the ends only


@pytest.mark.parametrize("text, codes", [("99213,99214;99215/2026", ("99213", "99214", "99215")),
                                         ("99213,99214,G0556", ("99213", "99214", "G0556")),
                                         ("paid 19,090 claims of 99213", ("99213",)),
                                         ("12,345 visits", ())])
def test_codes_joined_by_punctuation_alone_are_each_read(text, codes):
    assert detect(text).explicit == codes
