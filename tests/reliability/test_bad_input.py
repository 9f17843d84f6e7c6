"""Bad input never crashes and never reaches SQL as code: malformed CMS and FR files give a clear
error naming the file (and line) or parse leniently as designed; odd questions are answered; SQL
metacharacters in every user input are data.

Covered elsewhere: missing column, junk number, duplicate row, empty file, no header, no data,
bad HCPCS (tests/pfs/test_parse.py); zip without PPRRVU, unreadable path (same file); an FR
fragment cut mid-element, bad manifest JSON, unknown sources.toml key (tests/retrieval/test_fr.py);
20,000-character, control-character, Spanish/CJK, "DROP TABLE" and <script> questions through the
pipeline (tests/chat/test_pipeline.py); HTML in the ?q= question (tests/app/test_pages.py).
"""
from __future__ import annotations

import json
import re
from datetime import date
from decimal import Decimal

import pytest
from pydantic import ValidationError
from sqlalchemy import text
from streamlit.testing.v1 import AppTest

from carenav_core.backends import Backends
from carenav_core.chat.events import DoneEvent, SourcesEvent, ValuationEvent, WarningEvent
from carenav_core.chat.pipeline import MAX_QUESTION, answer
from carenav_core.cli import main
from carenav_core.errors import DataError
from carenav_core.pfs.parse import parse_pprrvu
from carenav_core.retrieval.fr import FrDocument
from carenav_core.retrieval.index import document_chunks
from carenav_core.retrieval.store import Store
from carenav_core.settings import PROJECT_ROOT, Settings

# --- CMS files ------------------------------------------------------------------------------------

HEADER = ("HCPCS,MOD,DESCRIPTION,STATUS CODE,WORK RVU,NON-FAC PE RVU,FACILITY PE RVU,MP RVU,"
          "NON-FACILITY TOTAL,FACILITY TOTAL,CONV FACTOR\n")
GOOD = "99490,,Ccm,A,1.00,0.81,0.42,0.06,1.87,1.48,33.4009\n"


@pytest.mark.parametrize("content, words", [
    pytest.param(HEADER + "99490,,Ccm,A,1.00,0.81\n", ["line 2", "99490"], id="truncated-row"),
    pytest.param(HEADER + GOOD.replace("33.4009", "33.40O9"), ["line 2", "file_cf", "'33.40O9'"], id="cf-junk"),
    pytest.param(HEADER + GOOD.replace("33.4009", "NaN"), ["line 2", "file_cf", "finite"], id="cf-nan"),
])
def test_malformed_cms_row_is_an_error_naming_file_line_and_column(content, words):
    with pytest.raises(DataError) as info:
        parse_pprrvu(content.encode("latin-1"), "bad/PPRRVU_TEST.csv")
    assert "bad/PPRRVU_TEST.csv" in str(info.value) and all(w in str(info.value) for w in words), str(info.value)


def test_latin1_descriptor_bytes_are_read_as_latin1():
    parsed = parse_pprrvu((HEADER + GOOD.replace("Ccm", "Ccm caf\xe9 \x96 1\xbd")).encode("latin-1"), "x.csv")
    assert parsed.rows[0]["description"] == "Ccm caf\xe9 \x96 1\xbd" and parsed.rows[0]["file_cf"] == Decimal("33.4009")


@pytest.mark.parametrize("header", [
    "HCPCS,MODIFIER,SHORT DESCRIPTION,STATUS,WORK RVUS,NON-FACILITY PE RVUS,FACILITY PE RVUS,MALPRACTICE RVUS,"
    "NON-FACILITY TOTAL RVUS,FACILITY TOTAL RVUS,CONVERSION FACTOR\n",
    "hcpcs , mod,description,status  code,work rvu,non-fac pe rvu,facility pe rvu,mp rvu,non-facility total,"
    "facility total,conv factor\n",
    pytest.param(HEADER.replace("HCPCS,", "HCPCS CODE,"), id="HCPCS CODE"),
])
def test_header_alias_variants_are_recognised(header):
    parsed = parse_pprrvu((header + GOOD).encode(), "alias.csv")
    assert parsed.rows[0]["total_fac"] == Decimal("1.48") and parsed.rows[0]["file_cf"] == Decimal("33.4009")


# --- FR files -------------------------------------------------------------------------------------

def fr_document(name: str, fmt: str, sections: str | None = None) -> FrDocument:
    return FrDocument(document_number="2099-00001", rule_id="CMS-0000-F", kind="final rule", title="Test",
                      published=date(2099, 1, 1), volume=164, first_page=1,
                      url="https://www.federalregister.gov/documents/full_text/xml/2099/01/01/2099-00001.xml",
                      mirror_file=f"fr/{name}", format=fmt, sections=sections and f"fr/{sections}")


def chunks_of(tmp_path, name: str, body: bytes, fmt: str = "xml", manifest: str | None = None):
    (tmp_path / "fr").mkdir(exist_ok=True)
    (tmp_path / "fr" / name).write_bytes(body)
    if manifest is not None:
        (tmp_path / "fr" / "x.sections.json").write_text(manifest)
    settings = Settings(data_dir=tmp_path, mirror=tmp_path)
    return document_chunks(settings, fr_document(name, fmt, "x.sections.json" if manifest is not None else None))


@pytest.mark.parametrize("name, body, fmt, manifest", [
    pytest.param("empty.xml", b"", "xml", None, id="empty-file"),
    pytest.param("garbage.xml", bytes(range(256)) * 8, "xml", None, id="binary-garbage"),
    pytest.param("2099-00001.api.json", b'{"document_number": "2099-00001", "abstract": "metadata, not rule text"}',
                 "xml", None, id="api-json-as-xml"),
    pytest.param("2099-00001.api.json", b'{"document_number": "2099-00001"}\n\n{"abstract": "x y z"}\n', "text",
                 '{"sections": [{"heading_path": ["A. X"], "start": 0, "end": 10}]}', id="api-json-as-text"),
    pytest.param("m.txt", b"First paragraph.\n\nSecond.\n", "text", '{"sections": [{"start": 0}]}',
                 id="manifest-without-end"),
    pytest.param("m.txt", b"First paragraph.\n", "text",
                 '{"sections": [{"start": 0, "end": 99, "heading_path": "not a list"}]}', id="manifest-path-not-list"),
])
def test_malformed_fr_file_is_a_data_error_naming_it(tmp_path, name, body, fmt, manifest):
    with pytest.raises((DataError, ValidationError), match=re.escape(name.split(".")[0])):
        chunks_of(tmp_path, name, body, fmt, manifest)


def test_fr_unknown_elements_and_manifest_past_the_end_parse_leniently(tmp_path):
    xml = b'<HD SOURCE="HD2">A. Care</HD><P>CMS <NEWTAG k="v">finalized</NEWTAG> the code<WHAT/> 99490.</P>'
    chunks = chunks_of(tmp_path, "u.xml", xml)
    assert [c.text for c in chunks] == ["CMS finalized the code 99490."] and chunks[0].codes == ("99490",)
    past = '{"sections": [{"heading_path": ["A. X"], "start": 0, "end": 5000}, {"heading_path": ["B. Y"], "start": 9000, "end": 9999}]}'
    chunks = chunks_of(tmp_path, "t.txt", b"Paragraph one is here.\n\nParagraph two is here.\n", "text", past)
    assert " ".join(c.text for c in chunks) == "Paragraph one is here. Paragraph two is here."
    assert chunks[0].heading.startswith("A. X")


def test_fr_excerpt_cut_mid_tag_indexes_no_markup(tmp_path):
    chunks = chunks_of(tmp_path, "cut.xml", b'SOURCE="HD2">A. Care</HD><P>CMS finalized 99490 here.</P><HD SOURCE="HD')
    assert [c.text for c in chunks] == ["CMS finalized 99490 here."]


# --- questions ------------------------------------------------------------------------------------

@pytest.mark.parametrize("question", [
    "كم يدفع Medicare مقابل G0556؟", "G0556 の支払いはいくらですか 🤔💊", "\u200f\u202bG0556\u202c\u200e ما هو؟",
    "G0556\u0000\u0007\u001b[2J\u0085\u2028\ufeff", "x " * 10000 + "G0556"],
    ids=["arabic", "cjk-emoji", "rtl-marks", "control", "20005-chars"])
def test_questions_in_other_scripts_and_with_control_characters(reliable_settings, reliable_db, reliable_store,
                                                                question):
    events = list(answer(question, Backends(settings=reliable_settings, fee_db=reliable_db, store=reliable_store)))
    assert isinstance(events[-1], DoneEvent) and isinstance(events[-2], SourcesEvent)
    truncated = [e for e in events if isinstance(e, WarningEvent) and e.kind == "truncated"]
    if len(question) > MAX_QUESTION:
        assert truncated and "20,005" in truncated[0].message and not isinstance(events[0], ValuationEvent)
    else:
        assert not truncated and isinstance(events[0], ValuationEvent) and events[0].rows


# --- HTML and script are shown as text -------------------------------------------------------------

def _render_hostile_sources() -> None:
    from carenav_core.chat.answer import Answer
    from carenav_core.chat.events import DoneEvent, Source, SourcesEvent
    from carenav_core.ui.chat_view import render_after
    hostile = Source(label="[89 FR 1 ¶1]", title="<img src=x onerror=alert(1)>", kind="final rule",
                     published="2024-12-09", url="https://www.federalregister.gov/d/2024-25382",
                     text="<script>alert('x')</script> <b>bold</b> [click](javascript:alert(1)) G0556")
    render_after(Answer.from_events("<script>q</script>", [SourcesEvent(cited=(hostile,), also_retrieved=()),
                                                           DoneEvent(writer="deterministic", withheld=0)]))


def test_retrieved_paragraph_with_html_is_escaped_in_the_sources():
    at = AppTest.from_function(_render_hostile_sources).run()
    assert not at.exception
    shown = " ".join(str(m.value) for m in at.markdown)
    assert "alert" in shown and r"\<script\>" in shown and r"\<img" in shown
    assert not re.search(r"(?<!\\)<|(?<![\\\n])>", shown), "every angle bracket is escaped: shown as text, never HTML"
    assert not re.search(r"(?<!\\)\]\(javascript", shown), "no live javascript: link"


# --- SQL metacharacters in every user input ---------------------------------------------------------

SQL = ["G0556'; DROP TABLE rvu; --", "99490\" OR \"1\"=\"1", "%' OR 1=1 --", "care_mgmt\\", "$1 :codes ?",
       "G0556); DELETE FROM chunks; --"]


def table_counts(settings) -> tuple:
    from carenav_core.pfs.valuation import open_reader
    with open_reader(settings.duckdb_file) as con:
        rvu = con.execute("SELECT count(*) FROM current_rvu").fetchone()[0]
    store = Store(settings)
    with store.engine.connect() as conn:
        chunks = conn.execute(text("SELECT count(*) FROM chunks")).scalar()
    store.close()
    return rvu, chunks


def test_sql_metacharacters_in_the_cli_are_data(reliable_env, tmp_path, capsys):
    before = table_counts(reliable_env)
    for term in SQL:
        assert main(["value", term, "--json"]) == 0, term
        assert main(["search", term, "--json"]) == 0, term
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"age": "70; DROP TABLE chunks", "county": SQL[0], "veteran_status": SQL[2]}))
    assert main(["screen", "--answers", str(answers), "--json"]) in (0, 2)
    answers.write_text(json.dumps({"age": 70, "county": "King", "living_situation": SQL[5]}))
    assert main(["screen", "--answers", str(answers), "--json"]) in (0, 2)
    out = capsys.readouterr()
    assert "Traceback" not in out.err and table_counts(reliable_env) == before
    assert json.loads(main_json(["value", "G0556", "--json"], capsys))["rows"][0]["hcpcs"] == "G0556"


def main_json(argv, capsys) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def test_sql_metacharacters_in_the_pages_are_data(reliable_env):
    before = table_counts(reliable_env)
    app = str(PROJECT_ROOT / "app.py")
    for term in SQL:
        chat = AppTest.from_file(app, default_timeout=120)
        chat.query_params["q"] = term
        chat.run()
        assert not chat.exception, (term, chat.exception)
        codes = AppTest.from_file(app, default_timeout=120)
        codes.query_params["codes"] = term.replace(" ", "")
        codes.run()
        codes.switch_page("views/codes.py").run()
        assert not codes.exception, (term, codes.exception)
        codes.text_input[0].set_value(term).run()
        assert not codes.exception, (term, codes.exception)
    assert table_counts(reliable_env) == before
