import pytest
import streamlit as st


def settings_env(settings) -> dict[str, str]:
    env = {"CARENAV_DATA_DIR": str(settings.data_dir), "CARENAV_PG_DIR": str(settings.pg_folder),
           "CARENAV_MIRROR": str(settings.mirror)}
    if settings.duckdb_path:
        env["CARENAV_DUCKDB_PATH"] = str(settings.duckdb_path)
    return env


def use_settings(settings, monkeypatch) -> None:
    """Point the app and the CLI (which read Settings from the environment) at `settings`: no model
    server, the embedded store, fresh Streamlit caches."""
    for name in ("CARENAV_OLLAMA_HOST", "CARENAV_DATABASE_URL", "CARENAV_DUCKDB_PATH"):
        monkeypatch.delenv(name, raising=False)
    for name, value in settings_env(settings).items():
        monkeypatch.setenv(name, value)
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture
def app_env(full_settings, monkeypatch):
    """The app's Settings come from the environment: point it at the test databases."""
    use_settings(full_settings, monkeypatch)
    yield full_settings
    st.cache_resource.clear()
