"""Dated eligibility thresholds read from data/programs/*.toml and validated.

Each parameter has a label, a unit and dated values; each value has an effective date, an
optional last day (``until``), a source tag ([O] official, [D] derived, [S] secondary) and
at least one reference. The loader rejects unknown keys, duplicate keys and duplicate dates.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from carenav_core.errors import ConfigError
from carenav_core.settings import PROJECT_ROOT

PROGRAMS_DIR = PROJECT_ROOT / "data" / "programs"
PARAMETER_FILES = ("ages", "ssi_based", "fpl_based", "resources", "va_pension", "property_tax")
SHAPES = ("amount", "single", "by_size", "by_county")


class ThresholdNotInForce(ConfigError):
    """No value of a parameter is in force on the screening date."""


class _Reference(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, description="Title of the cited page or rule.")
    href: str = Field(pattern=r"^https?://", description="Address of the cited page.")


class _Value(BaseModel):
    model_config = ConfigDict(extra="forbid")
    effective: date = Field(description="First day the value applies.")
    until: date | None = Field(None, description="Last day the value applies, if known to end.")
    tag: Literal["O", "D", "S"] = Field(description="O official, D derived, S secondary.")
    reference: list[_Reference] = Field(min_length=1, description="Where the value was read.")
    note: str = Field("", description="Caveat shown with the value.")
    amount: float | None = Field(None, ge=0, description="A single figure.")
    single: float | None = Field(None, ge=0, description="Figure for one person.")
    couple: float | None = Field(None, ge=0, description="Figure for a married couple.")
    by_size: list[float] | None = Field(None, min_length=1, description="Figures for household sizes 1..n.")
    each_additional: float | None = Field(None, ge=0, description="Added per person beyond by_size.")
    by_county: dict[str, float] | None = Field(None, description="Figure per Washington county.")

    @model_validator(mode="after")
    def _one_shape(self) -> "_Value":
        present = [s for s in SHAPES if getattr(self, s) is not None]
        if len(present) != 1:
            raise ValueError(f"exactly one of {list(SHAPES)} is required, found {present or 'none'}")
        if (self.single is None) != (self.couple is None):
            raise ValueError("single and couple must be given together")
        if self.until is not None and self.until < self.effective:
            raise ValueError(f"until {self.until} is before effective {self.effective}")
        return self


class _Parameter(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = Field(min_length=1, description="What the figure is, in the program's words.")
    unit: Literal["USD/month", "USD/year", "USD", "years", "flag"] = Field(description="Unit of every value.")
    values: list[_Value] = Field(min_length=1, description="Dated values.")

    @model_validator(mode="after")
    def _dates_unique(self) -> "_Parameter":
        dates = [v.effective for v in self.values]
        if len(set(dates)) != len(dates):
            raise ValueError(f"duplicate effective date in {sorted(map(str, dates))}")
        return self


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

    def describe(self) -> str:
        """'$1,014 (USD/month, from 2026-01-01) [D]' style text."""
        shown = f"{self.amount:g}" if self.unit in ("years", "flag") else f"${self.amount:,.2f}".replace(".00", "")
        return f"{shown} ({self.unit}, from {self.effective}) [{self.tag}]"


@dataclass(frozen=True, kw_only=True)
class Parameter:
    key: str
    label: str
    unit: str
    values: tuple[_Value, ...]

    def in_force(self, on: date) -> _Value:
        """The value whose period contains `on`; raises ThresholdNotInForce otherwise."""
        started = [v for v in self.values if v.effective <= on]
        if started:
            latest = max(started, key=lambda v: v.effective)
            if latest.until is None or on <= latest.until:
                return latest
        raise ThresholdNotInForce(f"parameter {self.key!r} has no value in force on {on}")


@dataclass(frozen=True, kw_only=True)
class ThresholdTable:
    """All parameters, looked up by key, date and household shape."""

    parameters: dict[str, Parameter]

    def _pick(self, key: str, amount: float, value: _Value) -> Threshold:
        parameter = self.parameters[key]
        return Threshold(key=key, label=parameter.label, unit=parameter.unit, amount=amount,
                         effective=value.effective, tag=value.tag, note=value.note,
                         reference=tuple(Reference(title=r.title, href=r.href) for r in value.reference))

    def _value(self, key: str, on: date, shape: str) -> _Value:
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
        return self._pick(key, value.couple if married else value.single, value)

    def for_size(self, key: str, on: date, size: int) -> Threshold:
        """An FPL-style parameter for a household of `size` people."""
        value = self._value(key, on, "by_size")
        listed = len(value.by_size)
        if size <= listed:
            return self._pick(key, value.by_size[size - 1], value)
        if value.each_additional is None:
            raise ThresholdNotInForce(f"parameter {key!r} lists sizes up to {listed}; size {size} has no figure")
        return self._pick(key, value.by_size[-1] + value.each_additional * (size - listed), value)

    def for_county(self, key: str, on: date, county: str) -> Threshold:
        """A per-county parameter (property tax income thresholds)."""
        value = self._value(key, on, "by_county")
        if county not in value.by_county:
            raise ConfigError(f"parameter {key!r} from {value.effective} has no figure for county {county!r}")
        return self._pick(key, value.by_county[county], value)


def parse_parameters(text: str, source: str) -> dict[str, Parameter]:
    """Parse one parameter file; ConfigError names the file, parameter and problem."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: {exc}") from exc
    unknown = set(raw) - {"parameter"}
    if unknown:
        raise ConfigError(f"{source}: unknown top-level keys {sorted(unknown)}; expected only [parameter.*]")
    parsed = {}
    for key, entry in raw.get("parameter", {}).items():
        try:
            model = _Parameter.model_validate(entry)
        except ValidationError as exc:
            raise ConfigError(f"{source}: parameter {key}: {exc}") from exc
        parsed[key] = Parameter(key=key, label=model.label, unit=model.unit,
                                values=tuple(sorted(model.values, key=lambda v: v.effective)))
    return parsed


def merge_parameter_files(texts: dict[str, str]) -> ThresholdTable:
    """Merge parsed files (name -> text); a key defined in two files is an error."""
    merged: dict[str, Parameter] = {}
    origin: dict[str, str] = {}
    for source, text in texts.items():
        for key, parameter in parse_parameters(text, source).items():
            if key in merged:
                raise ConfigError(f"duplicate parameter {key!r} in {origin[key]} and {source}")
            merged[key], origin[key] = parameter, source
    return ThresholdTable(parameters=merged)


@lru_cache(maxsize=4)
def load_thresholds(folder: Path = PROGRAMS_DIR) -> ThresholdTable:
    """The thresholds shipped in data/programs/."""
    texts = {str(folder / f"{name}.toml"): (folder / f"{name}.toml").read_text(encoding="utf-8")
             for name in PARAMETER_FILES}
    return merge_parameter_files(texts)
