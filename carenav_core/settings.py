"""One Settings object, built at the edges (CLI, app) and passed into core functions."""
from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parents[1]


class Settings(BaseSettings):
    """Every knob of CareNav; environment variables use the prefix ``CARENAV_``."""

    model_config = SettingsConfigDict(env_prefix="CARENAV_", extra="forbid")

    data_dir: Path = Field(PROJECT_ROOT / "data", description="Project data folder (TOML sources, built databases).")
    mirror: Path | None = Field(None, description="Local folder laid out like shared/data; read instead of downloading.")
    cache_dir: Path | None = Field(None, description="Where downloads are cached; default data_dir/cache.")
    duckdb_path: Path | None = Field(None, description="Fee-schedule database; default data_dir/carenav.duckdb.")
    years: int = Field(4, ge=1, le=20, description="How many recent final CYs valuation shows.")
    # Retrieval store
    database_url: str | None = Field(None, description="PostgreSQL URL; unset = embedded pgserver under data_dir/pg.")
    pg_dir: Path | None = Field(None, description="Embedded PostgreSQL data folder; default data_dir/pg.")
    embedder: Literal["onnx", "ollama"] = Field("onnx", description="Offline ONNX MiniLM, or Ollama /api/embed.")
    embed_model: str = Field("nomic-embed-text", description="Ollama embedding model (embedder=ollama).")
    # Language model
    ollama_host: str | None = Field(None, description="Ollama server address; unset = deterministic writer.")
    llm_model: str = Field("llama3.2", description="Ollama chat model.")
    llm_timeout: float = Field(60.0, gt=0, description="Seconds before a model request is abandoned.")
    keep_alive: str = Field("5m", description="Ollama keep_alive for the chat model.")
    # Prompt budget and deadlines (docs: llama3.2 takes num_ctx up to 131072; 8192 keeps a 2-CPU server fast.
    # A small model such as SmolLM2-135M has a 2048-token context: set CARENAV_LLM_NUM_CTX=2048,
    # CARENAV_LLM_NUM_PREDICT_CHAT=384, CARENAV_LLM_NUM_PREDICT_SCREENER=768.)
    llm_num_ctx: int = Field(8192, ge=1024, description="Context (tokens) requested for every model call.")
    llm_num_predict_chat: int = Field(512, ge=64, description="Longest chat answer (tokens).")
    llm_num_predict_screener: int = Field(1536, ge=128, description="Longest screener explanation (tokens).")
    llm_first_token_timeout: float = Field(45.0, gt=0, description="Seconds the first token of an answer may take.")
    llm_answer_timeout: float = Field(120.0, gt=0, description="Seconds a whole model answer may take.")

    @property
    def duckdb_file(self) -> Path:
        return self.duckdb_path or self.data_dir / "carenav.duckdb"

    @property
    def cache_folder(self) -> Path:
        return self.cache_dir or self.data_dir / "cache"

    @property
    def pg_folder(self) -> Path:
        return self.pg_dir or self.data_dir / "pg"
