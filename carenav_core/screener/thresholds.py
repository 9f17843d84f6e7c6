"""Eligibility thresholds read from data/programs/*.toml through the one dated-parameter schema (params.py).

A screener value has exactly one figure shape: `amount`, `single` + `couple`, `by_size` (+ optional
`each_additional` and/or `guideline`) or `by_county`; a `pending` value has none (no confirmed figure for that period).

A limit set as a percentage of the HHS poverty guidelines is computed the agencies' way for every household size:
the percentage of the guideline for that size (base + (size - 1) x per-person amount), divided by 12 and rounded once
as that program rounds (`guideline`). Building a large household's figure from the size-4 figure plus a rounded
per-person increment drifts by a dollar or more (7 CFR 273.9(a)(3)(ii); DSHS's Basic Food table lists sizes 1-10 and
adds its per-person amount only above 10). A `by_size` list is the agency's published table and must agree with the
`guideline` it names; sizes past the list use the agency's own published per-person amount (`each_additional`) where
it has one, else the guideline. A `single` / `couple` pair on the guidelines (the Medicare Savings Programs, Extra
Help) names its `guideline` too, and both figures must agree with it for one and for two people, so a figure rounded
where the program keeps cents (or kept to the cent where it rounds up) is refused when the file is read.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import date
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from carenav_core.errors import ConfigError
from carenav_core.params import DatedValue, Parameter, ParameterNotInForce, merge, parse_parameters
from carenav_core.settings import PROJECT_ROOT

PROGRAMS_DIR = PROJECT_ROOT / "data" / "programs"
PARAMETER_FILES = ("ages", "ssi_based", "fpl_based", "resources", "va_pension", "property_tax")
SHAPES = ("amount", "single", "by_size", "by_county")
UNIT_WORDS = {"USD/month": " a month", "USD/year": " a year", "USD": "", "years": " years", "flag": ""}
ThresholdNotInForce = ParameterNotInForce


ROUNDING_WORDS = {"up": "rounded up to the next whole dollar", "nearest": "rounded to the nearest whole dollar",
                  "cents": "to the cent"}


class Guideline(BaseModel):
    """A monthly limit set as a percentage of the HHS poverty guideline for the household's size."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    percent: float = Field(gt=0, description="Percentage of the poverty guideline (200 for 200% FPL).")
    base: int = Field(gt=0, description="HHS annual guideline for one person (48 states and DC).")
    each: int = Field(gt=0, description="HHS annual amount added for each further person.")
    rounding: Literal["up", "nearest", "cents"] = Field(
        description="How the program rounds the monthly figure of each size: up (7 CFR 273.9(a)(3)(ii); HCA's MAGI "
                    "and Medicare Savings Program figures), nearest (DSHS's Basic Food 200% table), cents (kept to "
                    "the cent: LIHEAP; Extra Help, whose limit SSA states as a yearly figure, POMS HI 03020.055).")

    def monthly(self, size: int) -> float:
        """The limit for a household of `size`: percent x guideline(size) / 12, rounded once."""
        exact = Fraction(str(self.percent)) / 100 * (self.base + (size - 1) * self.each) / 12
        if self.rounding == "up":
            return float(math.ceil(exact))
        if self.rounding == "nearest":
            return float(math.floor(exact + Fraction(1, 2)))
        return float(math.floor(exact * 100 + Fraction(1, 2))) / 100


class ScreenerValue(DatedValue):
    amount: float | None = Field(None, ge=0, description="A single figure.")
    single: float | None = Field(None, ge=0, description="Figure for one person.")
    couple: float | None = Field(None, ge=0, description="Figure for a married couple.")
    by_size: list[float] | None = Field(None, min_length=1, description="Figures for household sizes 1..n.")
    each_additional: float | None = Field(None, ge=0, description="The agency's published amount added per person "
                                                                  "beyond by_size (DSHS: over 10; FNS: over 8; VA: "
                                                                  "per dependant).")
    guideline: Guideline | None = Field(None, description="With by_size: the poverty-guideline rule every size's "
                                                          "figure comes from; by_size must agree with it, and sizes "
                                                          "past by_size (without each_additional) are computed by it. "
                                                          "With single and couple: the rule both come from (the "
                                                          "guideline for one and for two people), and they must "
                                                          "agree with it.")
    source_sizes: int | None = Field(None, ge=1, description="With by_size and a guideline, when the tagged source "
                                                              "shows only sizes 1..n: the figures for larger sizes "
                                                              "were computed from the guideline, and are tagged D.")
    by_county: dict[str, float] | None = Field(None, description="Figure per Washington county.")
    at_least: bool = Field(False, description="The figure in force is not seen; this one is a floor (a limit the law "
                                              "only raises, such as one indexed by the COLA): a pass under it holds, "
                                              "nothing above it is decided.")
    indexed: bool = Field(True, description="With at_least: the figure rises by a yearly index, so an answer far above "
                                            "the floor (rules/base.py FLOOR_HEADROOM) is above the figure in force too; "
                                            "false for a figure set by rule with no index: nothing above it is decided.")
    index_steps: int = Field(1, ge=1, le=3, description="With at_least and indexed: how many yearly index changes may "
                                                       "lie between the figure carried and the figure in force (1 the "
                                                       "first year past the last figure seen, 2 the second); the "
                                                       "headroom compounds over them (rules/base.py FLOOR_HEADROOM).")
    couple_at_least: bool = Field(False, description="The couple figure covers only part of what a married applicant "
                                                     "keeps (the spouse's share is not on file): it is a floor with "
                                                     "no index, while the single figure is exact.")

    @model_validator(mode="after")
    def _one_shape(self) -> "ScreenerValue":
        present = [s for s in SHAPES if getattr(self, s) is not None]
        if self.pending:
            if present:
                raise ValueError(f"a pending value has no figure, found {present}")
            return self
        if len(present) != 1:
            raise ValueError(f"exactly one of {list(SHAPES)} is required, found {present or 'none'}")
        if (self.single is None) != (self.couple is None):
            raise ValueError("single and couple must be given together")
        if self.source_sizes is not None and (self.guideline is None or self.by_size is None or
                                              self.source_sizes > len(self.by_size)):
            raise ValueError("source_sizes needs by_size and its guideline, and no more sizes than by_size lists")
        if self.guideline is not None:
            for name, size, listed in self._guideline_figures():
                computed = self.guideline.monthly(size)
                if abs(listed - computed) > 0.001:
                    rule = self.guideline
                    raise ValueError(f"{name} is {listed:g}, but {rule.percent:g}% of the guideline (${rule.base:,} + "
                                     f"${rule.each:,} a person) / 12 {ROUNDING_WORDS[rule.rounding]} is {computed:g}")
        return self

    def _guideline_figures(self) -> list[tuple[str, int, float]]:
        """(name, household size, figure) of each figure a `guideline` must agree with: every `by_size` entry, or the
        `single` (a household of one) and `couple` (two) figures."""
        if self.by_size is not None:
            return [(f"by_size for {size} {'person' if size == 1 else 'people'}", size, listed)
                    for size, listed in enumerate(self.by_size, start=1)]
        if self.single is not None:
            return [("single (a household of one)", 1, self.single), ("couple (a household of two)", 2, self.couple)]
        raise ValueError("guideline needs by_size or single and couple (the figures it must agree with)")

    def size_tag(self, size: int) -> str:
        """The tag of the figure for a household of `size`: the value's own tag for the sizes its source shows, D for
        a size computed from the guideline (past `source_sizes`, or past `by_size` with no agency per-person amount)."""
        shown = self.source_sizes or (len(self.by_size) if self.each_additional is None else size)
        return self.tag if size <= shown else "D"


@dataclass(frozen=True, kw_only=True)
class Reference:
    title: str
    href: str


@dataclass(frozen=True, kw_only=True)
class Threshold:
    """One figure in force on a date, with everything needed to cite it."""

    key: str
    label: str
    unit: str
    amount: float
    effective: date
    tag: str
    reference: tuple[Reference, ...]
    note: str = ""
    at_least: bool = False     # a floor: the figure in force is not seen, and is not lower than this
    indexed: bool = True       # with at_least: raised by a yearly index (FLOOR_HEADROOM bounds the figure in force)
    index_steps: int = 1       # with at_least and indexed: yearly index changes since the figure carried

    def shown(self) -> str:
        """The figure in words: '$1,856 a month', '65 years'."""
        if self.unit == "flag":
            return "yes" if self.amount else "no"
        number = f"{self.amount:g}" if self.unit == "years" else f"${self.amount:,.2f}".replace(".00", "")
        return number + UNIT_WORDS.get(self.unit, "")

    def describe(self) -> str:
        """'$1,014 a month (from January 1, 2026) [D]' style text."""
        return f"{'at least ' if self.at_least else ''}{self.shown()} (from {self.effective:%B %-d, %Y}) [{self.tag}]"


@dataclass(frozen=True, kw_only=True)
class ThresholdTable:
    """All parameters, looked up by key, date and household shape."""

    parameters: dict[str, Parameter[ScreenerValue]]

    def _pick(self, key: str, amount: float, value: ScreenerValue, *, partial: bool = False,
              tag: str | None = None) -> Threshold:
        parameter = self.parameters[key]
        return Threshold(key=key, label=parameter.label, unit=parameter.unit, amount=amount,
                         effective=value.effective, tag=tag or value.tag, note=value.note,
                         at_least=value.at_least or partial,
                         indexed=value.indexed and not partial, index_steps=value.index_steps,
                         reference=tuple(Reference(title=r.title, href=r.href) for r in value.reference))

    def _value(self, key: str, on: date, shape: str) -> ScreenerValue:
        if key not in self.parameters:
            raise ConfigError(f"unknown threshold parameter {key!r}; known: {sorted(self.parameters)}")
        value = self.parameters[key].in_force(on)
        if getattr(value, shape) is None:
            raise ConfigError(f"parameter {key!r} value from {value.effective} has no {shape!r} figure")
        return value

    def amount(self, key: str, on: date) -> Threshold:
        """A parameter with a single figure."""
        value = self._value(key, on, "amount")
        return self._pick(key, value.amount, value)

    def for_unit(self, key: str, on: date, *, married: bool) -> Threshold:
        """A single/couple parameter (SSI-based limits, resource standards)."""
        value = self._value(key, on, "single")
        return self._pick(key, value.couple if married else value.single, value,
                          partial=married is True and value.couple_at_least)

    def for_size(self, key: str, on: date, size: int) -> Threshold:
        """An FPL-style parameter for a household of `size` people."""
        value = self._value(key, on, "by_size")
        listed, tag = len(value.by_size), value.size_tag(size)
        if size <= listed:
            return self._pick(key, value.by_size[size - 1], value, tag=tag)
        if value.each_additional is None and value.guideline is not None:
            return self._pick(key, value.guideline.monthly(size), value, tag=tag)
        if value.each_additional is None:
            raise ThresholdNotInForce(f"the {self.parameters[key].label} lists households of up to {listed}; "
                                      f"a household of {size} has no figure on file")
        return self._pick(key, value.by_size[-1] + value.each_additional * (size - listed), value, tag=tag)

    def for_county(self, key: str, on: date, county: str) -> Threshold:
        """A per-county parameter (property tax income thresholds)."""
        value = self._value(key, on, "by_county")
        if county not in value.by_county:
            raise ConfigError(f"parameter {key!r} from {value.effective} has no figure for county {county!r}")
        return self._pick(key, value.by_county[county], value)


    def county_extremes(self, key: str, on: date) -> tuple[Threshold, Threshold]:
        """The lowest and highest figures of a per-county parameter in force on `on`, each labelled with the counties
        that have it (an answer under the lowest is under every county's, one above the highest above every one)."""
        value = self._value(key, on, "by_county")
        figures = value.by_county

        def extreme(amount: float, which: str) -> Threshold:
            counties = [c for c, a in figures.items() if a == amount]
            named = counties[0] if len(counties) == 1 else ", ".join(counties[:-1]) + " and " + counties[-1]
            found = self._pick(key, amount, value)
            return replace(found, label=f"{found.label}: the {which} of any county's, {named}'s")
        return extreme(min(figures.values()), "lowest"), extreme(max(figures.values()), "highest")


def merge_parameter_files(texts: dict[str, str]) -> ThresholdTable:
    """Parse files (name -> text) and merge them; a key defined in two files is an error."""
    return ThresholdTable(parameters=merge({source: parse_parameters(text, source, ScreenerValue)
                                            for source, text in texts.items()}))


def parameter_texts(folder: Path = PROGRAMS_DIR) -> dict[str, str]:
    """The shipped parameter files, name -> text."""
    return {str(folder / f"{name}.toml"): (folder / f"{name}.toml").read_text(encoding="utf-8")
            for name in PARAMETER_FILES}


@lru_cache(maxsize=4)
def load_thresholds(folder: Path = PROGRAMS_DIR) -> ThresholdTable:
    """The thresholds shipped in data/programs/."""
    return merge_parameter_files(parameter_texts(folder))
