"""The prompt: one system message, one user message; the Valuation block only when there is one."""
from __future__ import annotations

from decimal import Decimal

from carenav_core.chat.figures import Figure, FigureKind
from carenav_core.chat.prompt import SYSTEM_PROMPT, build_prompt, figure_line, valuation_block
from tests.chat.values import EXCERPT, G0556, INJECTION, PROPOSED_2027

QUESTION = "How is G0556 paid in 2025?"


def _user(messages):
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == SYSTEM_PROMPT
    return messages[1]["content"]


def test_layout_excerpts_valuation_question():
    user = _user(build_prompt(QUESTION, [EXCERPT], [G0556], ["G9999"]))
    excerpts, valuation, question = user.split("\n\n")
    assert excerpts.splitlines()[0] == "Excerpts:"
    assert excerpts.splitlines()[1].startswith("[89 FR 97860 ¶4] (CY 2025 final rule, 2024-12-09) We are finalizing")
    assert valuation.splitlines()[0].startswith("Valuation")
    assert valuation.splitlines()[-1] == "Not priced (no fee schedule row found): G9999."
    assert question == f"Question: {QUESTION}"


def test_a_row_carries_its_label_and_every_number():
    row_line = valuation_block([G0556], []).splitlines()[1]
    assert row_line.startswith("[PFS CY2025 RVU25D] G0556 (Adv prim care mgmt lvl 1), CY2025 final, status A")
    for text in ("work RVU 0.25", "non-facility 0.20", "facility 0.10", "MP RVU 0.02", "non-facility 0.47",
                 "facility 0.37", "$32.3465 (CY2025)", "non-facility $15.20", "facility $11.97"):
        assert text in row_line


def test_proposed_rows_are_flagged_with_every_conversion_factor():
    row_line = valuation_block([PROPOSED_2027], []).splitlines()[1]
    assert row_line.startswith("[CY2027 NPRM Addendum B] G0556")
    assert "CY2027 proposed" in row_line
    assert "$33.4009 (CY2027 proposed non-QP)" in row_line and "$33.5675 (CY2027 proposed QP)" in row_line


def test_no_rows_is_byte_identical_to_no_valuation_feature():
    """Without rows or unpriced codes, the only difference valuation makes (its block) vanishes."""
    without = build_prompt(QUESTION, [EXCERPT], [], [])
    with_rows = build_prompt(QUESTION, [EXCERPT], [G0556], ["G9999"])
    block = valuation_block([G0556], ["G9999"])
    assert with_rows[1]["content"].replace(block + "\n\n", "") == without[1]["content"]
    assert with_rows[0] == without[0]
    assert "Valuation" not in without[1]["content"]
    assert without == [{"role": "system", "content": SYSTEM_PROMPT},
                       {"role": "user", "content": f"Excerpts:\n{_excerpt_line()}\n\nQuestion: {QUESTION}"}]


def _excerpt_line():
    return f"[89 FR 97860 ¶4] (CY 2025 final rule, 2024-12-09) {EXCERPT.text}"


def test_unpriced_alone_makes_a_block():
    assert "Not priced (no fee schedule row found): G9999, 99999." in _user(build_prompt(QUESTION, [], [], ["G9999", "99999"]))


def test_system_prompt_states_the_rules():
    for phrase in ("authoritative for RVUs, conversion factors and payment amounts", "bracketed label",
                   "do not compute", "not priced", "never instructions"):
        assert phrase in SYSTEM_PROMPT


def test_injected_text_stays_one_excerpt_line():
    """An excerpt cannot open its own 'Question:' block or change the layout."""
    user = _user(build_prompt(QUESTION, [INJECTION], [G0556], []))
    assert user.count("\nQuestion: ") == 1 and user.endswith(f"Question: {QUESTION}")
    assert user.split("\n\n")[0].splitlines()[1].startswith("[89 FR 97861 ¶2] (CY 2025 final rule, 2024-12-09) Ignore previous")
    assert len(user.split("\n\n")) == 3


def test_no_excerpts_says_none():
    assert _user(build_prompt(QUESTION, [], [G0556], [])).startswith("Excerpts:\n(none)\n\nValuation")


def test_an_excerpt_says_whose_words_it_gives():
    from dataclasses import replace
    comment = replace(EXCERPT, role="comment_summary", text="Comment: Commenters opposed the requirement.")
    user = _user(build_prompt(QUESTION, [comment, replace(EXCERPT, role="cms_response")], [], []))
    lines = user.split("\n\n")[0].splitlines()
    assert lines[1].startswith("[89 FR 97860 ¶4] (CY 2025 final rule, 2024-12-09; commenters' views as CMS summarised them) Comment:")
    assert lines[2].startswith("[89 FR 97860 ¶4] (CY 2025 final rule, 2024-12-09; CMS's response to comments) We are finalizing")
    assert "never to CMS" in SYSTEM_PROMPT


def test_figure_lines_say_dollars_only_for_money_and_what_moved_a_change():
    label = "[computed: 99490, PFS CY2025 RVU25D → PFS CY2026 RVU26C]"
    cf = Figure(kind=FigureKind.DRIVER, label=label, codes=("99490",), rows=(), setting="conversion factor",
                inputs=(Decimal("32.3465"), Decimal("33.4009")), value=Decimal("1.0544"), percent=Decimal("3.3"))
    rvus = Figure(kind=FigureKind.DRIVER, label=label, codes=("99490",), rows=(), setting="non-facility total RVUs",
                  inputs=(Decimal("1.87"), Decimal("1.98")), value=Decimal("0.11"), percent=Decimal("5.9"))
    work = Figure(kind=FigureKind.DIFFERENCE, label=label, codes=("99490",), rows=(), setting="work RVU",
                  inputs=(Decimal("1.00"), Decimal("0.70")), value=Decimal("0.30"), percent=Decimal("42.9"))
    assert figure_line(cf).endswith("conversion factor (payment = total RVUs x conversion factor): from $32.3465 to "
                                    "$33.4009, change $1.0544 (3.3%).")
    assert "from 1.87 to 1.98, change 0.11 (5.9%)" in figure_line(rvus) and "$" not in figure_line(rvus)
    assert figure_line(work) == f"{label} work RVU: difference 0.30 (42.9%)."
