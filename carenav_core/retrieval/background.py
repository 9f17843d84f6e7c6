"""Rule-text indexing in a separate process, so the app answers valuation questions while the Federal
Register paragraphs are embedded (minutes on a busy 2-core machine). The child is `python -m
carenav_core index` with the same settings (as CARENAV_* variables), detached from the caller's session
and logging to data_dir/index.log; the store's advisory lock keeps a second indexer from starting."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from carenav_core.settings import PROJECT_ROOT, Settings


def settings_environment(settings: Settings) -> dict[str, str]:
    """The CARENAV_* variables that rebuild `settings` in a child process.

    >>> settings_environment(Settings(years=3))["CARENAV_YEARS"]
    '3'
    """
    env = {}
    for name, value in settings.model_dump().items():
        if value is not None:
            env[f"CARENAV_{name.upper()}"] = str(value)
    return env


def index_log(settings: Settings) -> Path:
    return settings.data_dir / "index.log"


def start_background_index(settings: Settings, *, force: bool = False) -> subprocess.Popen:
    """Start indexing the rule text in a detached child process; returns at once."""
    log = index_log(settings)
    log.parent.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join(p for p in (str(PROJECT_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, **settings_environment(settings), "PYTHONPATH": path}
    with log.open("ab") as out:
        command = [sys.executable, "-m", "carenav_core", "index", "--quiet"] + (["--force"] if force else [])
        return subprocess.Popen(command, cwd=PROJECT_ROOT,
                                env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
