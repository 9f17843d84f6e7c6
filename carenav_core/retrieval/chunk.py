"""Paragraphs -> retrieval chunks: tiny paragraphs merged, long ones split at sentence ends,
each with a stable label ("[89 FR 97860 ¶4]"), its FR citation address and the codes it names."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date

from carenav_core.codes.detect import detect
from carenav_core.retrieval.fr import FrDocument, Paragraph

# all-MiniLM-L6-v2 reads 256 word pieces; FR prose runs ~1.3 pieces per word, so ~190 words fit.
MAX_WORDS = 190
MIN_WORDS = 30
# Numbers that follow an FR citation or "page" are page numbers, not CPT codes:
# "84 FR 62692 through 62694", "81 FR 80339-80349", "On pages 98547 and 98548".
_PAGE_RUNS = re.compile(
    r"(?:\d+\s*FR\s*|\bpages?\s+)\d[\d,]*(?:\s*(?:through|thru|to|and|-|–|—|,)\s*\d[\d,]*)*", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?;”\"])\s+(?=[A-Z(“\"§])")


@dataclass(frozen=True, kw_only=True)
class Chunk:
    """One indexed unit. `metadata` holds collection-specific facts (for rules: rule_id, title,
    kind, citation, url, volume, page_end, document_number)."""
    doc_id: str
    seq: int
    label: str
    heading: str
    text: str
    codes: tuple[str, ...]
    page: int | None = None
    published: date | None = None
    metadata: dict = field(default_factory=dict)
    role: str = ""              # rules: cms_text | cms_response | comment_summary (see speaker_roles)
    context: str = ""           # rules: section heading and, for a response, the comment it answers
    pair_seq: int | None = None  # rules: seq of the response to this comment (or the comment a response answers)

    @property
    def embed_text(self) -> str:
        """What the embedder reads: the context (else the innermost heading), then the text."""
        lead = self.context or self.heading.rsplit(" > ", 1)[-1]
        return f"{lead}\n{self.text}" if lead else self.text


def paragraph_codes(text: str) -> tuple[str, ...]:
    """Codes a paragraph writes out (no family expansion), page runs after FR citations removed.

    >>> paragraph_codes("CY 2015 (79 FR 67715 through 67730) valued CPT code 99490 and G0556.")
    ('99490', 'G0556')
    """
    return detect(_PAGE_RUNS.sub(lambda m: " " * len(m.group(0)), text)).explicit


def _words(text: str) -> int:
    return len(text.split())


def split_long(text: str, max_words: int = MAX_WORDS) -> list[str]:
    """Split at sentence ends into pieces of at most `max_words` (a single longer sentence stays whole).

    >>> split_long("One two three. Four five six. Seven.", max_words=4)
    ['One two three.', 'Four five six. Seven.']
    """
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        if pieces and _words(pieces[-1]) + _words(sentence) <= max_words:
            pieces[-1] = f"{pieces[-1]} {sentence}"
        else:
            pieces.append(sentence)
    return pieces


def _split_table(paragraph: Paragraph, max_words: int) -> list[Paragraph]:
    """Long tables split between rows; every part repeats the caption and column heads."""
    lines = paragraph.text.split("\n")
    lead = [ln for ln in lines[:2] if ln == lines[0] or ln.startswith("Columns:")]
    parts: list[list[str]] = [[]]
    for row in lines[len(lead):]:
        if parts[-1] and _words(" ".join(lead + parts[-1] + [row])) > max_words:
            parts.append([])
        parts[-1].append(row)
    return [replace(paragraph, text="\n".join(lead + rows)) for rows in parts]


def _split(paragraph: Paragraph, max_words: int) -> list[Paragraph]:
    if _words(paragraph.text) <= max_words:
        return [paragraph]
    if paragraph.kind == "table":
        return _split_table(paragraph, max_words)
    return [replace(paragraph, text=piece) for piece in split_long(paragraph.text, max_words)]


def merge_tiny(paragraphs: list[Paragraph], min_words: int = MIN_WORDS,
               max_words: int = MAX_WORDS) -> list[Paragraph]:
    """Join a paragraph under `min_words` to the one before it (same heading and kind, room left),
    else carry it into the next one. Tables are never merged."""
    out: list[Paragraph] = []
    carry: Paragraph | None = None
    for paragraph in paragraphs:
        if carry is not None:
            if carry.heading == paragraph.heading and carry.kind == paragraph.kind != "table":
                paragraph = replace(paragraph, text=f"{carry.text} {paragraph.text}", page=carry.page)
            else:
                out.append(carry)
            carry = None
        previous = out[-1] if out else None
        tiny = _words(paragraph.text) < min_words and paragraph.kind != "table"
        if tiny and previous and previous.heading == paragraph.heading and previous.kind == paragraph.kind \
                and _words(previous.text) + _words(paragraph.text) <= max_words:
            out[-1] = replace(previous, text=f"{previous.text} {paragraph.text}", page_end=paragraph.page_end)
        elif tiny:
            carry = paragraph
        else:
            out.append(paragraph)
    return out + ([carry] if carry is not None else [])


def citation(volume: int, page: int | None, document: FrDocument) -> tuple[str, str]:
    """FR citation and its federalregister.gov address; without a page, the document's first page
    and the document's own address.

    >>> citation(89, 97860, None)
    ('89 FR 97860', 'https://www.federalregister.gov/citation/89-FR-97860')
    """
    if page is None:
        return f"{volume} FR {document.first_page}", f"https://www.federalregister.gov/d/{document.document_number}"
    return f"{volume} FR {page}", f"https://www.federalregister.gov/citation/{volume}-FR-{page}"


CMS_TEXT, RESPONSE, COMMENT = "cms_text", "cms_response", "comment_summary"
ROLES = (CMS_TEXT, RESPONSE, COMMENT)
# FR preambles summarise comments as "Comment: ..." and answer them with "Response: ..."; the
# paragraphs that follow continue that speaker until the next marker, a new heading, or CMS's
# decision ("After consideration of (the) public comments, we are finalizing ...").
_COMMENT = re.compile(r"(?:^|\bresponses\.\s+)Comment:\s")
_RESPONSE = re.compile(r"(?:^|\s)Response:\s")
_DECISION = re.compile(r"^(?:After consider(?:ation of|ing)|In consideration of|We are finalizing|"
                       r"Therefore, we are finalizing|We did not receive (?:any )?(?:public )?comments)")


def speaker_role(text: str, previous: str, same_section: bool) -> str:
    """Who is speaking in a paragraph: CMS's own text, CMS's response, or CMS's summary of comments.

    >>> speaker_role("Response: We agree.", "comment_summary", True)
    'cms_response'
    >>> speaker_role("Other commenters disagreed.", "comment_summary", True)
    'comment_summary'
    >>> speaker_role("After consideration of public comments, we are finalizing.", "cms_response", True)
    'cms_text'
    """
    if _RESPONSE.search(text):
        return RESPONSE
    if _COMMENT.search(text):
        return COMMENT
    if not same_section or _DECISION.match(text):
        return CMS_TEXT
    return previous


def speaker_roles(pieces: list[Paragraph]) -> list[str]:
    """The role of each piece in order (footnotes and tables are CMS text and keep the running role)."""
    roles, running, heading = [], CMS_TEXT, None
    for piece in pieces:
        if piece.kind != "text":
            roles.append(CMS_TEXT)
            continue
        running = speaker_role(piece.text, running, piece.heading == heading)
        heading = piece.heading
        roles.append(running)
    return roles


def pair_comments(roles: list[str], headings: list[tuple[str, ...]]) -> list[int | None]:
    """For each comment, the index of the first response after it in the same section; for each
    response, the index of the comment that starts the exchange it answers."""
    pairs: list[int | None] = [None] * len(roles)
    pending: list[int] = []          # comments of the current exchange awaiting a response
    opener: int | None = None
    for i, role in enumerate(roles):
        if i and headings[i] != headings[i - 1]:
            pending, opener = [], None
        if role == COMMENT:
            if not pending:
                opener = i
            pending.append(i)
        elif role == RESPONSE:
            for comment in pending:
                pairs[comment] = i
            pending = [] if pending else pending
            pairs[i] = opener
        else:
            pending, opener = [], None
    return pairs


CONTEXT_WORDS = 30   # of the comment a response answers: enough to name the question asked


def context_of(heading: tuple[str, ...], comment: str | None) -> str:
    r"""What is embedded and keyword-ranked with a chunk besides its text: the two innermost
    headings and, for a response, the start of the comment it answers.

    >>> context_of(("G. Care", "2. APCM", "(1) Consent"), "Comment: Should consent be written? Yes.")
    '2. APCM > (1) Consent\nComment: Should consent be written? Yes.'
    """
    lines = [" > ".join(heading[-2:])] if heading else []
    if comment:
        words = comment.split()
        lines.append(" ".join(words[:CONTEXT_WORDS]) + (" ..." if len(words) > CONTEXT_WORDS else ""))
    return "\n".join(line for line in lines if line)


def chunk_document(document: FrDocument, paragraphs: tuple[Paragraph, ...]) -> tuple[Chunk, ...]:
    """Chunks of one FR document; ¶ numbers count chunks within each printed page (or the whole
    excerpt when it has no page markers), so labels are stable across rebuilds."""
    pieces = [p for merged in merge_tiny(list(paragraphs)) for p in _split(merged, MAX_WORDS)]
    roles = speaker_roles(pieces)
    pairs = pair_comments(roles, [p.heading for p in pieces])
    per_page: dict[int | None, int] = {}
    chunks = []
    for seq, paragraph in enumerate(pieces):
        answered = pieces[pairs[seq]].text if roles[seq] == RESPONSE and pairs[seq] is not None else None
        per_page[paragraph.page] = per_page.get(paragraph.page, 0) + 1
        cite, url = citation(document.volume, paragraph.page, document)
        where = cite if paragraph.page is not None else f"FR Doc. {document.document_number}"
        chunks.append(Chunk(
            doc_id=document.doc_id, seq=seq, label=f"[{where} ¶{per_page[paragraph.page]}]",
            heading=" > ".join(paragraph.heading), text=paragraph.text, codes=paragraph_codes(paragraph.text),
            page=paragraph.page, published=document.published, role=roles[seq], pair_seq=pairs[seq],
            context=context_of(paragraph.heading, _comment_start(answered)),
            metadata={"document_number": document.document_number, "rule_id": document.rule_id,
                      "title": document.title, "kind": document.kind, "citation": cite, "url": url,
                      "volume": document.volume, "page_end": paragraph.page_end, "paragraph_kind": paragraph.kind,
                      "rule_year": rule_year(document.title)}))
    return tuple(chunks)


def _comment_start(text: str | None) -> str | None:
    """The comment itself, without the "We received public comments ..." lead-in."""
    if text is None:
        return None
    match = _COMMENT.search(text)
    return text[text.index("Comment:", match.start()):] if match else text


def rule_year(title: str) -> int | None:
    """The calendar year a PFS rule sets payment for, from its title.

    >>> rule_year("Medicare Program; CY 2022 Payment Policies Under the Physician Fee Schedule")
    2022
    """
    match = re.search(r"\bCY (\d{4})\b", title)
    return int(match.group(1)) if match else None
