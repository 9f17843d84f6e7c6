"""Paragraphs -> chunks (pure: no database)."""
from __future__ import annotations

from datetime import date

from carenav_core.retrieval.chunk import MAX_WORDS, chunk_document, merge_tiny, paragraph_codes, split_long
from carenav_core.retrieval.fr import FrDocument, Paragraph, parse_fr_xml
from tests.fixtures_pg import PG_MIRROR

DOC = FrDocument(document_number="2024-25382", part="II-G", rule_id="CMS-1807-F", kind="final rule",
                 title="CY 2025 PFS final rule", published=date(2024, 12, 9), volume=89, first_page=97710,
                 url="https://www.federalregister.gov/documents/full_text/xml/2024/12/09/2024-25382.xml",
                 mirror_file="fr/2024-25382.II-G.frag.xml", format="xml")


def _p(text, page=97860, heading=("G. ECM",), kind="text"):
    return Paragraph(heading=heading, page=page, page_end=page, text=text, kind=kind)


def test_codes_skip_fr_page_runs_and_keep_real_codes():
    assert paragraph_codes("(84 FR 62692 through 62694) created G2064 and G2065") == ("G2064", "G2065")
    assert paragraph_codes("(81 FR 80339-80349) and on pages 98547 and 98548 CPT code 99490") == ("99490",)
    assert paragraph_codes("the APCM family") == ()  # families are not expanded for paragraphs


def test_tiny_paragraphs_join_the_one_before_under_the_same_heading():
    long = " ".join(["word"] * 60)
    merged = merge_tiny([_p(long), _p("Response: We thank commenters."), _p("Short start.", heading=("H",)),
                         _p(long, heading=("H",))])
    assert [m.text for m in merged] == [f"{long} Response: We thank commenters.", f"Short start. {long}"]


def test_long_paragraphs_split_at_sentence_ends():
    sentence = "Each " + " ".join(["word"] * 28) + " end."
    pieces = split_long(" ".join([sentence] * 20))
    assert len(pieces) > 1 and all(len(p.split()) <= MAX_WORDS for p in pieces)
    assert all(p.endswith("end.") for p in pieces)


def test_labels_count_chunks_per_page_and_cite_that_page():
    chunks = chunk_document(DOC, (_p(" ".join(["a"] * 40)), _p("G0556 " + " ".join(["b"] * 40)),
                                  _p(" ".join(["c"] * 40), page=97861)))
    assert [c.label for c in chunks] == ["[89 FR 97860 ¶1]", "[89 FR 97860 ¶2]", "[89 FR 97861 ¶1]"]
    assert chunks[1].codes == ("G0556",)
    assert chunks[2].metadata["citation"] == "89 FR 97861"
    assert chunks[2].metadata["url"] == "https://www.federalregister.gov/citation/89-FR-97861"
    assert chunks[0].doc_id == "2024-25382:II-G" and chunks[0].metadata["kind"] == "final rule"


def test_real_excerpt_chunks_have_unique_labels_and_bounded_size():
    text = (PG_MIRROR / DOC.mirror_file).read_text(encoding="utf-8")
    chunks = chunk_document(DOC, parse_fr_xml(text))
    assert len({c.label for c in chunks}) == len(chunks) > 300
    assert max(len(c.text.split()) for c in chunks) <= MAX_WORDS + 60  # one very long sentence may overflow
    assert {"G0556", "G0557", "G0558"} <= {code for c in chunks for code in c.codes}


def _words(n: int, word: str = "w") -> str:
    return " ".join([word] * n)


def test_speaker_roles_follow_comment_and_response_markers_until_the_decision():
    chunks = chunk_document(DOC, (
        _p("We proposed to require consent. " + _words(40)),
        _p("We received public comments on these proposals. The following is a summary of the comments we "
           "received and our responses. Comment: Commenters asked whether consent may be verbal. " + _words(40)),
        _p("Other commenters disagreed with the proposal. " + _words(40)),
        _p("Response: Verbal consent is enough. " + _words(40)),
        _p("For these reasons a new consent is needed. " + _words(40)),
        _p("After consideration of public comments, we are finalizing as proposed. " + _words(40)),
        _p("Comment: Under a new heading. " + _words(40), heading=("G. ECM", "(2) Visit")),
        _p("A plain paragraph of the new section. " + _words(40), heading=("G. ECM", "(3) Access"))))
    assert [c.role for c in chunks] == ["cms_text", "comment_summary", "comment_summary", "cms_response",
                                        "cms_response", "cms_text", "comment_summary", "cms_text"]
    # both comment paragraphs point at the response; the response and its continuation at the first comment
    assert [c.pair_seq for c in chunks] == [None, 3, 3, 1, 1, None, None, None]
    assert chunks[3].context == "G. ECM\nComment: Commenters asked whether consent may be verbal. " + \
        " ".join(_words(40).split()[:22]) + " ..."
    assert chunks[3].embed_text.startswith("G. ECM\nComment: Commenters asked") and chunks[3].embed_text.endswith(
        chunks[3].text)
    assert chunks[0].context == "G. ECM" and chunks[0].metadata["rule_year"] == 2025   # from "CY 2025 PFS final rule"


def test_real_excerpt_consent_exchange_is_paired_hand_checked():
    # 2024-25382.II-G.frag.xml, (1) Beneficiary Consent: "Comment: Most commenters were generally supportive"
    # [89 FR 97880 ¶7] is answered by "Response: We thank commenters" [¶8] and its continuation "For these
    # reasons, we do not believe that a patient's previous consent for CCM" [¶9]; "After consideration of
    # public comments, we are finalizing as proposed that patient consent" [¶10] is CMS's decision.
    text = (PG_MIRROR / DOC.mirror_file).read_text(encoding="utf-8")
    by_label = {c.label: c for c in chunk_document(DOC, parse_fr_xml(text))}
    comment, response, more, decision = (by_label[f"[89 FR 97880 ¶{n}]"] for n in (7, 8, 9, 10))
    assert (comment.role, response.role, more.role, decision.role) == (
        "comment_summary", "cms_response", "cms_response", "cms_text")
    assert comment.pair_seq == response.seq and response.pair_seq == more.pair_seq == comment.seq
    assert "Comment: Most commenters were generally supportive" in response.context
    assert response.context.startswith("c. APCM Service Elements and Practice-Level Capabilities > (1) Beneficiary Consent")
