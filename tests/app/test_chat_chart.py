"""The chat's trend chart draws the measure the question asks about, one line per code, setting and place."""
from __future__ import annotations

from decimal import Decimal

import pytest

from carenav_core.ui import chat_view
from tests.chat.values import make_row

ROWS = [make_row(cy=2025), make_row(cy=2026, mp_rvu=Decimal("0.03"), label="[PFS CY2026 RVU26C]")]


@pytest.fixture
def drawn(monkeypatch):
    frames = []
    monkeypatch.setattr(chat_view.st, "line_chart", lambda frame, **kw: frames.append((frame, kw)))
    return frames


@pytest.mark.parametrize("measure, axis, columns, field", [
    ("payment", "Payment ($)", {"G0556 non-facility", "G0556 facility"}, "payment_nonfac"),
    ("mp_rvu", "Malpractice RVU", {"G0556 malpractice"}, "mp_rvu"),
    ("pe_rvu", "PE RVU", {"G0556 non-facility PE", "G0556 facility PE"}, "pe_nonfac_rvu"),
])
def test_the_chart_draws_the_asked_measure(drawn, measure, axis, columns, field):
    chat_view._trend_chart(ROWS, measure)
    (frame, options), = drawn
    assert options["y_label"] == axis and set(frame.columns) == columns
    first = next(c for c in columns if "facility" not in c or "non-facility" in c)    # the non-facility line
    assert frame.loc["2026", first] == float(getattr(ROWS[1], field))


def test_two_places_are_two_lines_not_an_error(drawn):
    rows = [make_row(cy=cy, locality=place, label=f"[PFS CY{cy} · {place}]") for cy in (2025, 2026)
            for place in ("WA 02 Seattle", "FL 04 Miami")]
    chat_view._trend_chart(rows, "payment")
    (frame, _), = drawn
    assert len(frame.columns) == 4 and len(frame.index) == 2
