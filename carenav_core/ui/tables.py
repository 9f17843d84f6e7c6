"""Valuation rows as analyst tables, driven by the one column spec (carenav_core/pfs/columns.py)."""
from __future__ import annotations

import pandas as pd

from carenav_core.pfs.columns import SHOWN, Column, row_record
from carenav_core.pfs.rows import ValuationRow

_FORMATS = {"rvu": "%.2f", "cf": "$%.4f", "usd": "dollar"}


def valuation_frame(rows: list[ValuationRow], columns: tuple[Column, ...] = SHOWN) -> pd.DataFrame:
    """One line per row in the spec's order; numbers become floats only here, for display (the CSV
    keeps the exact values). A column empty on every row (e.g. Mod) is left out."""
    frame = pd.DataFrame([{c.name: c.display(r) for c in columns} for r in rows], columns=[c.name for c in columns])
    empty = [c.name for c in columns if c.unit == "text" and frame[c.name].fillna("").eq("").all()]
    return frame.drop(columns=empty) if len(frame) else frame


def column_config(st, columns: tuple[Column, ...] = SHOWN) -> dict:
    """Streamlit column headers, help and formats (RVUs 2 decimals, CF 4, money as currency)."""
    config = {}
    for column in columns:
        if column.unit in _FORMATS:
            config[column.name] = st.column_config.NumberColumn(column.header, help=column.help,
                                                                format=_FORMATS[column.unit])
        else:
            config[column.name] = st.column_config.TextColumn(column.header, help=column.help)
    return config


def csv_bytes(rows: list[ValuationRow]) -> bytes:
    """The exact values with every provenance column, for download."""
    return pd.DataFrame([row_record(r) for r in rows]).to_csv(index=False).encode("utf-8")
