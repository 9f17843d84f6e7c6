"""A standalone PostgreSQL 16 + pgvector server for the tests' server-by-URL variant (issue 14 item 1),
run from the `pg_ctl`/`postgres` binaries inside the PyPI `pgserver` wheel (Debian bookworm has
PostgreSQL 15 and no pgvector package). It listens on a loopback TCP port with password (SCRAM)
authentication, and has a `carenav` role (not a superuser) owning a `carenav` database in which the
superuser created the `vector` extension, as a DBA would for a team deployment.

    eval "$(python -m tests.deploy.pg_server start DIR)"   # CARENAV_TEST_DATABASE_URL, CARENAV_TEST_PG_SERVER_DIR
    python -m tests.deploy.pg_server stop DIR
    python -m tests.deploy.pg_server restart DIR           # start again on the same port (used by tests)

Only the standard library and `pgserver` are imported, so .ci/run can call it before the project is installed.
As root (CI) the server runs as the system user `pgserver` (PostgreSQL refuses to run as root), the same
user PyPI `pgserver` itself creates for the embedded default.
"""
from __future__ import annotations

import os
import secrets
import shlex
import socket
import subprocess
import sys
from pathlib import Path

ROLE = DATABASE = "carenav"
URL_ENV, DIR_ENV = "CARENAV_TEST_DATABASE_URL", "CARENAV_TEST_PG_SERVER_DIR"


def bin_path(name: str) -> str:
    import pgserver
    return str(Path(pgserver.__file__).parent / "pginstall" / "bin" / name)


def system_user() -> str | None:
    """`pgserver` when running as root (created with useradd if missing), else None (the current user)."""
    if os.geteuid() != 0:
        return None
    from pgserver.utils import ensure_user_exists
    ensure_user_exists("pgserver")
    return "pgserver"


def run(args: list[str], user: str | None, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, user=user, capture_output=True, text=True, timeout=120, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:2])} failed ({result.returncode}): {result.stderr.strip()}")
    return result


def prepare(folder: Path, user: str | None) -> Path:
    """The data folder `folder/data`, owned by the server's user, binaries readable by it."""
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    if user:
        import shutil
        from pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions
        import stat
        bins = Path(bin_path("postgres")).parent
        ensure_prefix_permissions(data)
        ensure_prefix_permissions(bins)
        ensure_folder_permissions(bins, stat.S_IXGRP | stat.S_IXOTH | stat.S_IRGRP | stat.S_IROTH)
        ensure_folder_permissions(bins.parent / "lib", stat.S_IRGRP | stat.S_IROTH)
        shutil.chown(folder, user, user)
        shutil.chown(data, user, user)
    return data


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_ctl_start(folder: Path, port: int, user: str | None) -> None:
    """Start on 127.0.0.1:`port`; the Unix socket stays inside the private folder."""
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder / 'data'}"
    run([bin_path("pg_ctl"), "-D", str(folder / "data"), "-l", str(folder / "data" / "server.log"), "-w",
         "-t", "60", "-o", options, "start"], user)


def psql(folder: Path, port: int, user: str | None, database: str, sql: str) -> None:
    run([bin_path("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(folder / "data"), "-p", str(port),
         "-U", "postgres", "-d", database, "-c", sql], user)


def start(folder: Path) -> str:
    """initdb, start, create the role, database and extension; returns the psycopg URL."""
    folder = folder.resolve()
    user = system_user()
    data = prepare(folder, user)
    run([bin_path("initdb"), "-D", str(data), "-U", "postgres", "--auth-local=trust",
         "--auth-host=scram-sha-256", "--encoding=UTF8", "--no-instructions"], user)
    port = free_port()
    pg_ctl_start(folder, port, user)
    password = secrets.token_hex(16)
    psql(folder, port, user, "postgres", f"CREATE ROLE {ROLE} LOGIN PASSWORD '{password}'")
    psql(folder, port, user, "postgres", f"CREATE DATABASE {DATABASE} OWNER {ROLE}")
    psql(folder, port, user, DATABASE, "CREATE EXTENSION vector")
    url = f"postgresql+psycopg://{ROLE}:{password}@127.0.0.1:{port}/{DATABASE}"
    (folder / "url").write_text(url, encoding="utf-8")
    (folder / "url").chmod(0o600)
    return url


def url_port(folder: Path) -> int:
    return int((folder / "url").read_text(encoding="utf-8").rsplit(":", 1)[1].split("/")[0])


def stop(folder: Path) -> None:
    """Fast shutdown (connections are cut, as when a server goes away)."""
    folder = folder.resolve()
    if (folder / "data" / "postmaster.pid").exists():
        run([bin_path("pg_ctl"), "-D", str(folder / "data"), "-m", "fast", "-w", "stop"], system_user())


def restart(folder: Path) -> None:
    """Start a stopped server again on its recorded port."""
    folder = folder.resolve()
    pg_ctl_start(folder, url_port(folder), system_user())


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in {"start", "stop", "restart"}:
        print(__doc__, file=sys.stderr)
        return 2
    command, folder = argv[0], Path(argv[1])
    if command == "start":
        url = start(folder)
        print(f"export {URL_ENV}={shlex.quote(url)} {DIR_ENV}={shlex.quote(str(folder.resolve()))}")
    else:
        {"stop": stop, "restart": restart}[command](folder)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
