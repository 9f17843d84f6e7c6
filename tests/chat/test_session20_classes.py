"""Session 20: failure classes found asking the chat, fixed as classes. Asked through the real pipeline (real DuckDB,
real embedded PostgreSQL, the deterministic writer); amounts are read from the rows the answer shows, never written
here."""
from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal

import pytest

from carenav_core.chat.figures import FigureKind
from carenav_core.chat.pipeline import prepare
from carenav_core.chat.plan import asked_volume

TODAY = date(2026, 12, 1)


def _cents(x: Decimal) -> Decimal:
    return x.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def _row(prepared, code, cy, place=False):
    return next(r for r in prepared.rows if r.hcpcs == code and not r.mod and bool(r.locality) == place
                and not r.proposed and r.cy == cy)


def _half_pe(row) -> Decimal:
    return _cents((row.total_nonfac - row.pe_nonfac_rvu / 2) * row.cf) if not row.locality else None


@pytest.mark.parametrize("question, visits, counted", [
    ("A patient gets 97110 x 3 units twice a week for 6 weeks. What does Medicare pay in 2026?", 12, {"97110": 3}),
    ("3 units of 97110, 3 times a week for 4 weeks: what does Medicare pay in 2026?", 12, {"97110": 3}),
    ("Patient gets 2 units of 97140 and 1 unit of 97110 twice weekly for 8 weeks. Total 2026 payment?", 16,
     {"97140": 2, "97110": 1}),
    ("4 units of 97530 3x/week for 2 weeks in 2026 - what is paid?", 6, {"97530": 4}),
])
def test_units_at_a_frequency_of_visits_are_each_visits_units(backends, question, visits, counted):
    """"97110 x 3 units twice a week for 6 weeks": the visits are 2 a week for 6 weeks (12), each billing 3 units on
    its day under the therapy rule; the units are not the weekly count (it priced 18 units in full)."""
    prepared = prepare(question, backends, today=TODAY)
    assert prepared.plan.volume.services(False)[0] == visits
    assert {c: n for c, n in prepared.plan.units} == {c: n for c, n in counted.items() if n > 1}
    (one,) = [f for f in prepared.figures if f.kind is FigureKind.MULTIPLE and f.setting == "non-facility"
              and not f.place]
    units = sorted(((_row(prepared, c, 2026), n) for c, n in counted.items()), key=lambda u: -u[0].pe_nonfac_rvu)
    paid = [row.payment_nonfac if i == 0 else _half_pe(row) for i, row in enumerate(r for r, n in units
                                                                                     for _ in range(n))]
    assert one.value == sum(paid)
    (note,) = [w.message for w in prepared.warnings if w.message.startswith("Per visit:")]
    assert f"{visits} visits bring in ${one.value * visits:,}" in note
    full = sum(r.payment_nonfac * n for r, n in units) * visits
    assert f"(${full:,} with every unit paid in full)" in note
    # every volume figure paying each unit in full is replaced by the note
    assert not [f for f in prepared.figures if f.kind is FigureKind.VOLUME and f.setting.startswith("non-facility")]


def test_units_at_a_frequency_at_a_place_compare_with_the_visits_whole_sum(backends):
    prepared = prepare("Patient gets 2 units of 97140 and 1 unit of 97110 twice weekly for 8 weeks. Total 2026 "
                       "payment in Seattle?", backends, today=TODAY)
    (local,) = [f for f in prepared.figures if f.kind is FigureKind.MULTIPLE and f.setting == "non-facility"
                and f.place]
    (note,) = [w.message for w in prepared.warnings if w.message.startswith("Per visit:")]
    full = (_row(prepared, "97110", 2026, True).payment_nonfac + 2 * _row(prepared, "97140", 2026, True).payment_nonfac)
    assert f"16 visits bring in ${local.value * 16:,} (${full * 16:,} with every unit paid in full)" in note


@pytest.mark.parametrize("text, services", [
    ("20 patients a day, 5 days a week, 50 weeks a year", 5000),      # no units: a daily rate, as before
    ("99490 for 100 patients a month for a year", 1200),
    ("99214 twice a month for 6 months", None),                      # no units written: no visits read here
    ("4 units of 97110 for 30 patients, twice a week for 10 weeks", 600),
    ("3 units of 97110 once a week for 3 months", 13),
])
def test_a_frequency_reads_visits_only_with_units_written(text, services):
    volume = asked_volume(text, ("97110", "99490", "99214"))
    if services is None:
        assert volume is None or not volume.per_visit
    else:
        assert volume.services(False)[0] == services
