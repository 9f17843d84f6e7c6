"""Classes of analyst questions the round-13 second reader found wrong or unanswered, each asked through the real
pipeline (real DuckDB, real embedded PostgreSQL, the deterministic writer). Values are read from the rows the answer
shows, never written here."""
from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from carenav_core.chat.figures import FigureKind
from carenav_core.chat.pipeline import prepare
from tests.chat.test_question_classes import _cent, said

TODAY = date(2026, 12, 1)


def _row(prepared, code, cy=2026):
    return next(r for r in prepared.rows if r.hcpcs == code and not r.mod and not r.locality and not r.proposed
                and r.cy == cy)


def _multiple(prepared, setting="non-facility"):
    (figure,) = [f for f in prepared.figures if f.kind is FigureKind.MULTIPLE and f.setting == setting]
    return figure


@pytest.mark.parametrize("question, codes", [
    ("45380 and 45385 on the same day in 2026: what is paid?", ("45380", "45385")),
    ("What does Medicare pay for 43239 and 43235 done on the same day in 2026?", ("43239", "43235")),
])
def test_endoscopies_of_one_family_are_paid_less_their_base(backends, question, codes):
    """Indicator 3: the highest in full, each other its amount less the ENDO BASE code's; the base itself, billed
    beside a member of its family, adds nothing. The base's row comes along when it was not asked."""
    prepared = prepare(question, backends, today=TODAY)
    bases = {f.meaning.value for f in prepared.indicators if f.meaning.key == "endo_base" and f.meaning.value}
    (base,) = bases
    for setting, field in (("non-facility", "payment_nonfac"), ("facility", "payment_fac")):
        figure = _multiple(prepared, setting)
        base_amount = getattr(_row(prepared, base), field)
        amounts = sorted((getattr(_row(prepared, c), field) for c in codes if c != base), reverse=True)
        expected = amounts[0] + sum(max(a - base_amount, Decimal(0)) for a in amounts[1:])
        assert figure.value == expected < sum(getattr(_row(prepared, c), field) for c in codes)
        assert figure.label in said(prepared)
    assert not [r for r in prepared.rows if r.hcpcs == base and r.in_focus] or base in codes


def test_an_endoscopic_family_is_one_procedure_beside_other_surgery(backends):
    """The family's sum is ranked against the day's other procedures under 100%/50%."""
    prepared = prepare("45380 and 45385 and 11042 on the same day in 2026: what is the total?", backends,
                       today=TODAY)
    figure = _multiple(prepared)
    base = _row(prepared, "45378").payment_nonfac
    family = _row(prepared, "45385").payment_nonfac + _row(prepared, "45380").payment_nonfac - base
    other = _row(prepared, "11042").payment_nonfac
    high, low = max(family, other), min(family, other)
    assert abs(figure.value - (high + _cent(low / 2))) <= Decimal("0.01")     # cents rounded per unit
