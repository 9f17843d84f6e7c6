"""Look-ups for the Codes page: find codes by code, family or descriptor words; loaded releases."""
from __future__ import annotations

import duckdb

from carenav_core.codes import detect


def search_codes(con: duckdb.DuckDBPyConnection, text: str, limit: int = 50) -> list[tuple[str, str]]:
    """(code, newest short descriptor) for codes or families named in `text`, else descriptor words."""
    detection = detect(text)
    if detection.codes:
        wanted = list(detection.codes)
        sql = """SELECT hcpcs, arg_max(description, cy) FROM current_rvu
                 WHERE hcpcs IN (SELECT unnest(?)) AND mod = '' GROUP BY hcpcs ORDER BY hcpcs"""
        return con.execute(sql, [wanted]).fetchall()
    words = [w for w in text.lower().split() if len(w) > 1][:6]
    if not words:
        return []
    conditions = " AND ".join("lower(description) LIKE ? ESCAPE '\\'" for _ in words)
    patterns = ["%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for w in words]
    sql = f"""SELECT hcpcs, arg_max(description, cy) FROM current_rvu WHERE mod = '' AND {conditions}
              GROUP BY hcpcs ORDER BY hcpcs LIMIT {int(limit)}"""
    return con.execute(sql, patterns).fetchall()


def releases(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Every loaded release with its CY, effective date, rows, file and sha256, newest first."""
    cursor = con.execute("""SELECT release_id, cy, quarter, effective, row_count, source_file, sha256, reused,
                            release_id IN (SELECT DISTINCT release_id FROM current_rvu) AS used_for_valuation
                            FROM releases ORDER BY effective DESC""")
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def build_info(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return dict(con.execute("SELECT key, value FROM build_info").fetchall())


def proposed_rules(con: duckdb.DuckDBPyConnection) -> list[dict]:
    cursor = con.execute("SELECT rule_id, cy, row_count, source_file, sha256 FROM proposed_rules ORDER BY cy")
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]
