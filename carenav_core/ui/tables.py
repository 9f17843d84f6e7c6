"""Valuation rows as analyst tables: grouped by code, vintages ascending, money as currency."""
from __future__ import annotations

import pandas as pd

from carenav_core.pfs.rows import ValuationRow
from carenav_core.pfs.valuation import row_record

DISPLAY = ["hcpcs", "mod", "vintage_label", "status", "work_rvu", "total_nonfac", "total_fac", "payment_nonfac",
           "payment_fac", "cf", "cf_label", "label", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu", "description",
           "status_meaning"]


def valuation_frame(rows: list[ValuationRow]) -> pd.DataFrame:
    """One line per row, numeric columns as floats for display (exact values stay in the CSV)."""
    frame = pd.DataFrame([row_record(r) for r in rows])
    if frame.empty:
        return frame
    frame["vintage_label"] = [f"CY{r.cy} {'PROPOSED ' + r.rule_id if r.proposed else 'final ' + r.vintage.upper()}"
                              for r in rows]
    for column in ("work_rvu", "pe_nonfac_rvu", "pe_fac_rvu", "mp_rvu", "total_nonfac", "total_fac", "cf",
                   "payment_nonfac", "payment_fac"):
        frame[column] = pd.to_numeric(frame[column])
    return frame


def column_config(st) -> dict:
    """Streamlit column formats: RVUs 2 decimals, CF 4, money as currency."""
    money = {"format": "dollar"}
    return {
        "hcpcs": st.column_config.TextColumn("Code"), "mod": st.column_config.TextColumn("Mod"),
        "description": st.column_config.TextColumn("Short descriptor"),
        "vintage_label": st.column_config.TextColumn("Vintage"),
        "status": st.column_config.TextColumn("Status"), "status_meaning": st.column_config.TextColumn("Status meaning"),
        "work_rvu": st.column_config.NumberColumn("Work RVU", format="%.2f"),
        "pe_nonfac_rvu": st.column_config.NumberColumn("PE RVU non-fac", format="%.2f"),
        "pe_fac_rvu": st.column_config.NumberColumn("PE RVU fac", format="%.2f"),
        "mp_rvu": st.column_config.NumberColumn("MP RVU", format="%.2f"),
        "total_nonfac": st.column_config.NumberColumn("Total non-fac", format="%.2f"),
        "total_fac": st.column_config.NumberColumn("Total fac", format="%.2f"),
        "cf": st.column_config.NumberColumn("CF", format="$%.4f"),
        "cf_label": st.column_config.TextColumn("CF used"),
        "payment_nonfac": st.column_config.NumberColumn("Payment non-fac", **money),
        "payment_fac": st.column_config.NumberColumn("Payment fac", **money),
        "label": st.column_config.TextColumn("Cite as"),
    }


def csv_bytes(rows: list[ValuationRow]) -> bytes:
    """The exact values with every provenance column, for download."""
    return pd.DataFrame([row_record(r) for r in rows]).to_csv(index=False).encode("utf-8")

