"""Fixtures for model tests: a loopback Ollama double, and a guard that fails any test reaching
beyond loopback. Import them into a conftest.py:

    from tests.fixtures_ollama import no_network, ollama_double   # noqa: F401

`no_network` is meant to be autouse: in conftest.py wrap it as
    @pytest.fixture(autouse=True)
    def _no_network(no_network): yield
"""
from __future__ import annotations

import ipaddress
import socket
from typing import Any, Iterator

import pytest

from carenav_core.eval.ollama_double import OllamaDouble

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


class NetworkBlocked(OSError):
    """Raised instead of connecting to a non-loopback address."""


def is_loopback(host: Any) -> bool:
    """Is `host` (name or address) on this machine?

    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("localhost"), is_loopback("10.0.0.1")
    (True, True, True, False)
    """
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode()
    host = str(host).strip("[]")
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


class NetworkGuard:
    """While active, connections and name lookups for non-loopback hosts raise NetworkBlocked and
    are recorded in `attempts` (so a test fails even if the code under test swallows the error)."""

    def __init__(self) -> None:
        self.attempts: list[str] = []
        self._saved: dict[str, Any] = {}

    def _refuse(self, what: str) -> NetworkBlocked:
        self.attempts.append(what)
        return NetworkBlocked(f"test tried to reach {what}; tests may only use loopback (127.0.0.1)")

    def _connect(self, original: Any) -> Any:
        guard = self

        def connect(sock: socket.socket, address: Any, *args: Any) -> Any:
            if sock.family in (socket.AF_INET, socket.AF_INET6) and not is_loopback(address[0]):
                raise guard._refuse(f"{address[0]}:{address[1]}")
            return original(sock, address, *args)
        return connect

    def _getaddrinfo(self, original: Any) -> Any:
        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            if not is_loopback(host):
                raise self._refuse(f"name lookup of {host}")
            return original(host, *args, **kwargs)
        return getaddrinfo

    def __enter__(self) -> "NetworkGuard":
        self._saved = {"connect": socket.socket.connect, "connect_ex": socket.socket.connect_ex,
                       "getaddrinfo": socket.getaddrinfo}
        socket.socket.connect = self._connect(self._saved["connect"])
        socket.socket.connect_ex = self._connect(self._saved["connect_ex"])
        socket.getaddrinfo = self._getaddrinfo(self._saved["getaddrinfo"])
        return self

    def __exit__(self, *exc: object) -> None:
        socket.socket.connect = self._saved["connect"]
        socket.socket.connect_ex = self._saved["connect_ex"]
        socket.getaddrinfo = self._saved["getaddrinfo"]


@pytest.fixture
def no_network() -> Iterator[NetworkGuard]:
    """Fail the test if it tried to reach any non-loopback host."""
    with NetworkGuard() as guard:
        yield guard
    if guard.attempts:
        pytest.fail(f"test tried to use the network: {guard.attempts}")


@pytest.fixture
def ollama_double() -> Iterator[OllamaDouble]:
    """A running loopback Ollama double; `ollama.Client(host=ollama_double.url)` talks to it."""
    with OllamaDouble() as double:
        yield double
