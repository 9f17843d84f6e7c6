"""Project-level checks: the README Quickstart, CI running it verbatim, compose.yml validity."""
import re
import shutil
import subprocess

import pytest

from carenav_core.settings import PROJECT_ROOT

README = (PROJECT_ROOT / "README.md").read_text()


def quickstart_commands() -> list[str]:
    section = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section)


def test_quickstart_has_exactly_two_one_line_commands():
    commands = quickstart_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    install_build_run, install_test = commands
    assert "pip install -r requirements.txt" in install_build_run
    assert "carenav build" in install_build_run and "streamlit run app.py" in install_build_run
    assert "pip install -r requirements.txt" in install_test and "pytest" in install_test


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (PROJECT_ROOT / ".ci" / "run").read_text()
    last = [line for line in ci.splitlines() if line.strip() and not line.startswith("#")][-1]
    readme_test = quickstart_commands()[1]
    assert last == readme_test
    assert "CARENAV_MIRROR" in ci


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="Debian docker-compose is not installed")
def test_compose_file_is_valid_and_wires_the_services():
    result = subprocess.run(["docker-compose", "--env-file", str(PROJECT_ROOT / ".env.example"),
                             "-f", str(PROJECT_ROOT / "compose.yml"), "config"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    config = result.stdout
    for needed in ("pgvector/pgvector", "ollama/ollama", "CARENAV_DATABASE_URL", "CARENAV_OLLAMA_HOST",
                   "streamlit run app.py"):
        assert needed in config


def test_no_mirror_file_is_committed():
    tracked = subprocess.run(["git", "ls-files"], cwd=PROJECT_ROOT, capture_output=True, text=True).stdout.split()
    assert not [f for f in tracked if re.search(r"PPRRVU|\.frag\.xml$|mssp\.txt$", f)]
