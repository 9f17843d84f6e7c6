"""Procedures named in words ("a total knee replacement") are read as their codes, and the answer says how."""
from __future__ import annotations

from datetime import date

import pytest

from carenav_core.chat.deterministic import DeterministicWriter
from carenav_core.chat.events import WarningKind
from carenav_core.chat.pipeline import prepare
from carenav_core.codes import detect
from carenav_core.codes.detect import spelled_out
from carenav_core.codes.procedures import load_procedures, named_procedures, parse_procedures
from carenav_core.errors import ConfigError

TODAY = date(2026, 12, 1)


def test_every_code_and_descriptor_is_the_newest_loaded_releases(fee_db):
    newest = fee_db.execute("SELECT max(cy) FROM current_rvu").fetchone()[0]
    loaded = dict(fee_db.execute("SELECT hcpcs, any_value(description) FROM current_rvu WHERE cy = ? AND "
                                 "coalesce(mod, '') = '' GROUP BY hcpcs", [newest]).fetchall())
    wrong = {(p.key, c): (d, loaded.get(c)) for p in load_procedures() for c, d in zip(p.codes, p.descriptors)
             if loaded.get(c) != d}
    assert wrong == {}
    assert len(load_procedures()) >= 80


@pytest.mark.parametrize("question, codes", [
    ("What does Medicare pay for a total knee replacement in 2026?", {"27447"}),
    ("Compare a partial knee replacement with a knee replacement", {"27446", "27447"}),     # longest match first
    ("screening colonoscopy payment 2025", {"G0121", "G0105"}),                             # not all colonoscopies
    ("How much is a colonoscopy?", {"45378", "45380", "45385"}),
    ("What do two knee replacements and three flu shots pay?", {"27447", "G0008"}),          # plurals
    ("What is the fee for an EKG in Boston?", {"93000"}),
    ("what does medicare pay for CATARACT SURGERY", {"66984", "66982"}),
    ("Incision and drainage of an abscess, 2024", {"10060", "10061"}),
])
def test_a_procedure_named_in_words_is_read_as_its_codes(question, codes):
    text, read = spelled_out(question)
    assert set(detect(text).codes) == codes
    assert read and all(any(c in meant for c in codes) for _, meant in read)


@pytest.mark.parametrize("question", [
    "What does a total knee replacement (27447) pay?",      # the code is written: nothing to read
    "Is chronic care management paid per month?",           # a family, not a procedure
    "What did CMS say about the echo chamber of comments?",  # "echo" alone names no procedure
    "How is the TKAX code valued?",                          # never inside a word
])
def test_words_that_name_no_further_procedure_are_left_alone(question):
    text, read = spelled_out(question)
    assert read == () and text == question


def test_one_procedure_named_twice_is_read_once():
    text, read = spelled_out("EKGs and ECGs in 2024")
    assert len(read) == 1 and text.count("93000") == 1


@pytest.mark.parametrize("toml, words", [
    ('[procedure.X]\nname="x"\nsynonyms=["x"]\ncodes=["27447"]\n', "descriptors"),
    ('[procedure.X]\nname="x"\nsynonyms=["x"]\ncodes=["2744"]\ndescriptors=["a"]\n', "not HCPCS/CPT codes"),
    ('[procedure.X]\nname="x"\nsynonyms=["x"]\ncodes=["27447", "27130"]\ndescriptors=["a"]\n', "2 codes but 1"),
    ('[procedure.X]\nname="x"\nsynonyms=["x y"]\ncodes=["27447"]\ndescriptors=["a"]\n'
     '[procedure.Y]\nname="y"\nsynonyms=["X-Y"]\ncodes=["27130"]\ndescriptors=["b"]\n', "already procedure X's"),
    ('[procedures.X]\nname="x"\n', "unknown top-level keys"),
])
def test_registry_validation_names_the_entry(toml, words):
    with pytest.raises(ConfigError, match=words):
        parse_procedures(toml)


def test_family_words_are_not_taken_by_a_procedure():
    question = "cardiac rehab"
    assert [p.key for _, _, p in named_procedures(question)] == ["CARDIAC_REHAB"]
    assert named_procedures(question, taken=[(0, len(question))]) == []


def test_the_answer_prices_the_procedure_and_says_how_it_was_read(backends):
    prepared = prepare("What does Medicare pay for a total knee replacement in 2026?", backends, today=TODAY)
    focus = [r for r in prepared.rows if r.in_focus]
    assert {r.hcpcs for r in focus} == {"27447"} and {r.cy for r in focus} == {2026}
    read = [w for w in prepared.warnings if w.kind == WarningKind.READ_AS]
    assert read and "total knee replacement" in read[0].message and "27447" in read[0].message
    text = "".join(DeterministicWriter().stream(prepared))
    assert f"${focus[0].payment_fac:,.2f}" in text


@pytest.mark.parametrize("question, codes", [
    ("gallbladder removal and appendectomy on the same day in 2025", {"47562", "44970"}),
    ("Upper endoscopy and colonoscopy same day 2026", {"43235", "45378"}),
    ("What would 75 colonoscopies a month bring in?", {"45378"}),
    ("cataract surgery on both eyes", {"66984"}),
])
def test_words_covering_several_codes_price_the_first_with_other_services_or_a_count(question, codes):
    """An amount computed with other services or a count prices one code of the words' alternatives, and says so."""
    text, read = spelled_out(question)
    assert set(detect(text).codes) == codes
    assert all("may also mean" in meant for written, meant in read
               if len(next(p for _, _, p in named_procedures(written)).codes) > 1)


@pytest.mark.parametrize("question, rewritten", [
    ("20 knee MRIs in 2026", "20 73721s (knee MRIs)"),
    ("two knee replacements in 2026", "2 27447s (knee replacements)"),
    ("PT evaluation + 2 units of therapeutic exercise", "2 units of 97110 (therapeutic exercise)"),
])
def test_a_counted_procedure_is_that_many_of_its_code(question, rewritten):
    assert rewritten in spelled_out(question)[0]


@pytest.mark.parametrize("question, name", [("colonscopy payment 2025", "colonoscopy"),
                                            ("cataract surgury in 2026", "cataract surgery"),
                                            ("mamogram 2026", "mammogram"),
                                            ("two cataract surgeries", "cataract surgeries")])
def test_a_procedure_misspelt_or_in_ies_plural_is_read(question, name):
    text, read = spelled_out(question)
    assert detect(text).codes and name in text.lower()


@pytest.mark.parametrize("question", ["cholecystostomy in 2026", "What is an echo chamber?", "electrocardiography 2026"])
def test_a_different_word_is_not_read_as_a_near_procedure_name(question):
    """"cholecystostomy" is another operation than "cholecystectomy" (0.87 similar): under the 0.9 line."""
    assert not detect(spelled_out(question)[0]).codes


def test_each_counted_procedure_keeps_its_own_count():
    text, _ = spelled_out("5 mammograms and 2 DEXA scans in 2026")
    assert "77067 x 5" in text and "77080 x 2" in text


@pytest.mark.parametrize("question", ["45380 and 45385 at the same colonoscopy session in 2026",
                                      "45380 and 45385 during the same colonoscopy, 2025"])
def test_a_procedure_word_naming_the_session_adds_no_code(question):
    assert set(detect(spelled_out(question)[0]).codes) == {"45380", "45385"}


@pytest.mark.parametrize("question, codes", [("knee vs hip replacement 2020 to 2026", {"27447", "27130"}),
                                             ("a partial and a total knee replacement", {"27446", "27447"}),
                                             ("a screening and a diagnostic mammogram in 2026", {"77067", "77065"})])
def test_two_procedures_sharing_a_noun_are_both_read(question, codes):
    assert set(detect(spelled_out(question)[0]).codes) == codes


@pytest.mark.parametrize("question", ["Can an echocardiographer's time be billed?", "Is a spirometer covered?"])
def test_a_person_or_device_word_is_not_read_as_the_procedure(question):
    assert not detect(spelled_out(question)[0]).codes


def test_a_polyp_removal_beside_a_colonoscopy_is_the_same_days_second_endoscopy():
    text, _ = spelled_out("a colonoscopy with biopsy plus a polyp removal done the same day in 2025")
    assert set(detect(text).codes) == {"45380", "45385"}
