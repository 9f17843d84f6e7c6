"""Streamlit glue shared by the pages: cached resources and table formatting. Pages stay thin."""
