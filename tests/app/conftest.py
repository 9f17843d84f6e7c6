import pytest
import streamlit as st


def settings_env(settings) -> dict[str, str]:
    env = {"CARENAV_DATA_DIR": str(settings.data_dir), "CARENAV_PG_DIR": str(settings.pg_folder),
           "CARENAV_MIRROR": str(settings.mirror)}
    if settings.duckdb_path:
        env["CARENAV_DUCKDB_PATH"] = str(settings.duckdb_path)
    return env


@pytest.fixture
def app_env(full_settings, monkeypatch):
    """The app's Settings come from the environment: point it at the test databases."""
    for name, value in settings_env(full_settings).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CARENAV_OLLAMA_HOST", raising=False)
    st.cache_resource.clear()
    st.cache_data.clear()
    yield full_settings
    st.cache_resource.clear()
