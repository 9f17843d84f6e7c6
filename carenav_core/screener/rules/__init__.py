"""Layer 1: one module per program, one rule per criterion. No model, ever."""
from __future__ import annotations

from carenav_core.screener.rules import (apple_health, basic_food, copes, extra_help, fcsp, liheap, mac, msp, pace,
                                         property_tax, tsoa, va_pension)
from carenav_core.screener.rules.base import Program

PROGRAMS: tuple[Program, ...] = tuple(m.PROGRAM for m in (
    apple_health, mac, tsoa, copes, pace, msp, extra_help, basic_food, fcsp, va_pension, property_tax, liheap))
PROGRAMS_BY_KEY = {p.key: p for p in PROGRAMS}
