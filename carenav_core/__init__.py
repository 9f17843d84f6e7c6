"""CareNav core: Medicare PFS valuation evidence, rule-text retrieval, chat and the WA screener."""
