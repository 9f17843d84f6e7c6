"""FR XML / text -> paragraphs (pure: no database)."""
from __future__ import annotations

from pathlib import Path

import pytest

from carenav_core.errors import ConfigError, DataError
from carenav_core.retrieval.fr import heading_level, load_fr_documents, parse_fr_text, parse_fr_xml
from tests.fixtures_pg import PG_MIRROR

FR = PG_MIRROR / "fr"

FRAGMENT = """the end of a paragraph cut mid-element.</P>
<HD SOURCE="HD2">G. Enhanced Care Management</HD>
<HD SOURCE="HD3">2. APCM Services</HD>
<P>HCPCS code G0556 is valued at<SU>12</SU> a work RVU of
   <PRTPAGE P="97860"/> 0.25 for CY 2025.</P>
<FTNT><P><SU>12</SU> See 88 FR 78818.</P></FTNT>
<HD SOURCE="HD3">(1) Beneficiary Consent</HD>
<P>Consent may be verbal.</P>
<GPH SPAN="3"><PRTPAGE P="97861"/><GID>ER09DE24.053</GID></GPH>
<GPOTABLE COLS="2"><TTITLE>Table 5—Codes</TTITLE><BOXHD><CHED H="1">HCPCS</CHED>
<CHED H="1">Work <LI>RVU</LI></CHED></BOXHD><ROW><ENT>G0556</ENT><ENT>0.25</ENT></ROW>
<ROW><ENT>G0557</ENT><ENT>0.77</ENT></ROW></GPOTABLE>
<P>A paragraph that never clo"""


def test_fragment_parses_leniently_with_pages_headings_footnotes_and_tables():
    paragraphs = parse_fr_xml(FRAGMENT)
    texts = [p.text for p in paragraphs]
    assert texts[0] == "the end of a paragraph cut mid-element."
    assert paragraphs[0].page == 97859  # before the first marker: the page before it
    apcm = paragraphs[1]
    assert apcm.text == "HCPCS code G0556 is valued at a work RVU of 0.25 for CY 2025."  # SU anchor dropped
    assert (apcm.page, apcm.page_end) == (97859, 97860)
    assert apcm.heading == ("G. Enhanced Care Management", "2. APCM Services")
    assert paragraphs[2].kind == "footnote" and paragraphs[2].text == "Footnote 12: See 88 FR 78818."
    assert paragraphs[3].heading[-1] == "(1) Beneficiary Consent" and paragraphs[3].page == 97860
    table = paragraphs[4]
    assert table.kind == "table" and table.page == 97861
    assert table.text.splitlines() == ["Table 5—Codes", "Columns: HCPCS | Work RVU", "G0556 | 0.25", "G0557 | 0.77"]
    assert texts[-1] == "A paragraph that never clo" and "ER09DE24" not in " ".join(texts)


@pytest.mark.parametrize(("title", "source", "level"), [
    ("II. Provisions", "HD1", 1), ("I. Background", "HD1", 1), ("I. Intensive care", "HD2", 2),
    ("G. Enhanced Care Management", "HD2", 2), ("2. APCM", "HD3", 3), ("e. Valuation", "HD3", 4),
    ("(1) APCM Level 1", "HD3", 5), ("(a) Consent", "HD3", 6), ("(iii) Timing", "HD3", 6),
    ("Authority:", "HED", 1), ("Unnumbered", "HD2", 2)])
def test_heading_levels_follow_the_enumeration(title, source, level):
    assert heading_level(title, source) == level


def test_cy2025_excerpt_pages_match_its_prtpage_markers():
    paragraphs = parse_fr_xml((FR / "2024-25382.II-G.frag.xml").read_text(encoding="utf-8"))
    assert paragraphs[0].page == 97856 and paragraphs[-1].page == 97903
    pages = [p.page for p in paragraphs]
    assert pages == sorted(pages)  # markers only move forward
    valuation = next(p for p in paragraphs if p.text.startswith("Comment: Commenters had several proposed"))
    assert valuation.page == 97900  # <PRTPAGE P="97900"/> at line 2092, paragraph at line 2097
    assert valuation.heading[-1] == "(1) APCM Level 1 (HCPCS Code G0556)"


def test_correction_document_tables_keep_their_rows():
    paragraphs = parse_fr_xml((FR / "2025-08676.xml").read_text(encoding="utf-8"))
    tables = [p for p in paragraphs if p.kind == "table"]
    assert len(tables) == 3
    assert "Intravenous Infusion: Health Care Setting | $450 | N/A | GAF" in tables[0].text
    assert paragraphs[-1].page == 20808


def test_plain_text_takes_headings_from_manifest_and_numbered_lines():
    text = "G. Program\n\n1. Background\n\nFirst paragraph text here.\n\nIV. Quality\n\nSecond paragraph.\n"
    manifest = ('{"sections": [{"heading_path": ["III. Other", "G. Program"], "start": 0, "end": 60},'
                ' {"heading_path": ["IV. Quality"], "start": 61, "end": 200}]}')
    paragraphs = parse_fr_text(text, manifest)
    assert [(p.heading, p.text) for p in paragraphs] == [
        (("III. Other", "G. Program", "1. Background"), "First paragraph text here."),
        (("IV. Quality",), "Second paragraph.")]
    assert paragraphs[0].page is None


def test_bad_manifest_names_the_file():
    with pytest.raises(DataError, match="x.sections.json"):
        parse_fr_text("text", '{"nope": 1}', source="x.sections.json")


def test_sources_toml_lists_every_fr_text_file_in_the_mirror():
    documents = load_fr_documents(Path(__file__).parents[2] / "data" / "sources.toml")
    listed = {d.mirror_file for d in documents}
    on_disk = {f"fr/{p.name}" for p in FR.iterdir() if p.suffix in (".xml", ".txt")}
    assert listed == on_disk  # *.api.json metadata is never indexed


def test_unknown_fr_document_key_is_rejected(tmp_path):
    bad = tmp_path / "sources.toml"
    bad.write_text('[[fr_document]]\ndocument_number = "2024-25382"\nsurprise = 1\n')
    with pytest.raises(ConfigError, match="surprise"):
        load_fr_documents(bad)
