"""One dated-parameter schema and one loader for every data file of figures that change over time.

Used by the screener thresholds (data/programs/*.toml) and the PFS rule book (data/pfs_rules.toml).
A dated value has an effective date, an optional last day (`until`), a confidence tag, at least one
reference {title, href} and an optional note. A value may instead be `pending`: the period is known to
need a figure that is not confirmed (not yet published or not found); rules treat it as no figure.
The loader rejects unknown keys (pydantic extra="forbid"), duplicate keys (tomllib), duplicate or
overlapping periods, and names the file, the parameter and the problem (openfisca-core parameters/config.py).
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from carenav_core.errors import ConfigError

Tag = Literal["O", "D", "S", "U"]
# Shown as the legend wherever a tagged figure is shown to a person.
TAG_MEANINGS: dict[str, str] = {
    "O": "official: read on the agency's own page, rule text or data file",
    "D": "derived: computed from official figures by the rule's stated formula",
    "S": "secondary: read on a non-agency page that cites the agency",
    "U": "unverified: recorded but not yet checked against a source",
}
UNITS = ("USD/month", "USD/year", "USD", "USD/RVU", "years", "flag")


class ParameterNotInForce(ConfigError):
    """No confirmed value of a parameter is in force on a date."""


class Reference(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    title: str = Field(min_length=1, description="Title of the cited page, file or rule.")
    href: str = Field(pattern=r"^https?://", description="Address of the cited page.")


class DatedValue(BaseModel):
    """One value and the period it applies to. Subclasses add the figure fields (the value's shape)."""

    model_config = ConfigDict(extra="forbid")
    effective: date = Field(description="First day the value applies.")
    until: date | None = Field(None, description="Last day the value applies, if known to end.")
    tag: Tag = Field(description="O official, D derived, S secondary, U unverified.")
    reference: list[Reference] = Field(min_length=1, description="Where the value was read (or looked for).")
    note: str = Field("", description="Caveat shown with the value.")
    pending: str = Field("", description="Why no figure is on file for this period (then no figure fields).")

    @model_validator(mode="after")
    def _period(self) -> "DatedValue":
        if self.until is not None and self.until < self.effective:
            raise ValueError(f"until {self.until} is before effective {self.effective}")
        return self


V = TypeVar("V", bound=DatedValue)


@dataclass(frozen=True, kw_only=True)
class Parameter(Generic[V]):
    """A labelled, unit-bearing figure with its dated values (sorted by effective date)."""

    key: str
    label: str
    unit: str
    values: tuple[V, ...]
    source: str

    def value_on(self, on: date) -> V | None:
        """The value whose period holds `on` (pending ones included), or None."""
        started = [v for v in self.values if v.effective <= on]
        latest = max(started, key=lambda v: v.effective) if started else None
        return latest if latest is not None and (latest.until is None or on <= latest.until) else None

    def in_force(self, on: date) -> V:
        """The confirmed value in force on `on`; ParameterNotInForce (in plain words) otherwise."""
        value = self.value_on(on)
        if value is None or value.pending:
            why = f" ({value.pending})" if value is not None and value.pending else ""
            raise ParameterNotInForce(f"the {self.label} for {on:%B %-d, %Y} is not on file{why}")
        return value


def _check_periods(key: str, values: list[DatedValue]) -> None:
    ordered = sorted(values, key=lambda v: v.effective)
    for earlier, later in zip(ordered, ordered[1:]):
        if earlier.effective == later.effective:
            raise ValueError(f"duplicate effective date {later.effective}")
        if earlier.until is not None and earlier.until >= later.effective:
            raise ValueError(f"period {earlier.effective}..{earlier.until} overlaps the value from {later.effective}")


def _parameter_model(value_model: type[V]) -> type[BaseModel]:
    class _Parameter(BaseModel):
        model_config = ConfigDict(extra="forbid")
        label: str = Field(min_length=1, description="What the figure is, in the program's words.")
        unit: Literal[UNITS] = Field(description="Unit of every value.")  # type: ignore[valid-type]
        values: list[value_model] = Field(min_length=1, description="Dated values.")  # type: ignore[valid-type]

        @model_validator(mode="after")
        def _dates(self) -> "_Parameter":
            _check_periods("", self.values)
            return self
    return _Parameter


def read_toml(text: str, source: str, sections: tuple[str, ...]) -> dict:
    """Parse TOML (duplicate keys are a TOMLDecodeError) and reject unknown top-level tables."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: {exc}") from exc
    unknown = set(raw) - set(sections)
    if unknown:
        raise ConfigError(f"{source}: unknown top-level keys {sorted(unknown)}; expected only "
                          + ", ".join(f"[{s}.*]" for s in sections))
    return raw


def validate(model: type[BaseModel], entry: object, source: str, where: str) -> BaseModel:
    """Validate one table; ConfigError names the file, the table and pydantic's field-level message."""
    try:
        return model.model_validate(entry)
    except ValidationError as exc:
        raise ConfigError(f"{source}: [{where}]: {exc}") from exc


def parse_parameters(text: str, source: str, value_model: type[V]) -> dict[str, Parameter[V]]:
    """Every [parameter.<key>] of one file, validated with `value_model` for its values."""
    raw = read_toml(text, source, ("parameter",))
    model = _parameter_model(value_model)
    parsed: dict[str, Parameter[V]] = {}
    for key, entry in raw.get("parameter", {}).items():
        spec = validate(model, entry, source, f"parameter.{key}")
        parsed[key] = Parameter(key=key, label=spec.label, unit=spec.unit, source=source,  # type: ignore[attr-defined]
                                values=tuple(sorted(spec.values, key=lambda v: v.effective)))  # type: ignore[attr-defined]
    return parsed


def check_periods(values: list[DatedValue], source: str, where: str) -> None:
    """Duplicate or overlapping periods are an error (for value lists outside [parameter.*] tables)."""
    try:
        _check_periods(where, values)
    except ValueError as exc:
        raise ConfigError(f"{source}: [{where}]: {exc}") from exc


def merge(files: dict[str, dict[str, Parameter[V]]]) -> dict[str, Parameter[V]]:
    """Merge parsed files (source -> parameters); a key defined in two files is an error."""
    merged: dict[str, Parameter[V]] = {}
    for source, parameters in files.items():
        for key, parameter in parameters.items():
            if key in merged:
                raise ConfigError(f"duplicate parameter {key!r} in {merged[key].source} and {source}")
            merged[key] = parameter
    return merged


@dataclass(frozen=True, kw_only=True)
class Freshness:
    """One finding of `carenav data check`."""

    key: str
    label: str
    source: str
    problem: Literal["no value", "pending", "ends soon", "ended"]
    detail: str


def freshness(parameters: dict[str, Parameter], on: date, *, horizon_days: int = 90) -> list[Freshness]:
    """Parameters with no confirmed value on `on`, or whose value in force ends within `horizon_days`."""
    found = []
    for p in parameters.values():
        value = p.value_on(on)
        if value is None:
            ended = [v for v in p.values if v.until is not None and v.until < on]
            problem = "ended" if ended and all(v.effective <= on for v in p.values) else "no value"
            last = max((v.until for v in ended), default=None)
            found.append(Freshness(key=p.key, label=p.label, source=p.source, problem=problem,
                                   detail=f"last value ended {last}" if last else f"no value covers {on}"))
        elif value.pending:
            found.append(Freshness(key=p.key, label=p.label, source=p.source, problem="pending", detail=value.pending))
        elif getattr(value, "at_least", False):
            decided = "a pass under it, or an answer far above it, is decided" if getattr(value, "indexed", True) \
                else "only a pass under it is decided: no yearly index bounds it"
            found.append(Freshness(key=p.key, label=p.label, source=p.source, problem="floor",
                                   detail=f"value from {value.effective} not seen; the previous figure is carried as a "
                                          f"floor ({decided})"))
        elif value.until is not None and value.until <= on + timedelta(days=horizon_days):
            following = p.value_on(value.until + timedelta(days=1))
            found.append(Freshness(key=p.key, label=p.label, source=p.source, problem="ends soon",
                                   detail=f"value from {value.effective} ends {value.until}; next value not on file"
                                   if following is None else
                                   f"value from {value.effective} ends {value.until}; the next is only a floor (the "
                                   "figure in force then not seen)" if getattr(following, "at_least", False) else
                                   f"value from {value.effective} ends {value.until}; the next one is on file"))
    return [f for f in found if not (f.problem == "ends soon" and "next one is on file" in f.detail)]
