"""Physician Fee Schedule: sources, parsing, the DuckDB build, rule metadata and valuation."""
