"""Before a run: is anything listening at the base URL? A fast TCP connect, not an HTTP request.

A wrong port or a server that is not started should be one clear line at start-up, not a retried
connection error in the middle of the first turn. The probe runs in a thread so the command line can
import the provider and tools meanwhile; on a healthy set-up it costs no wall time.

When the environment routes the URL through a proxy (HTTPS_PROXY and friends, ``ink.proxies``: the
providers' client follows the same rule), the proxy is what must answer, so the proxy is probed instead.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Mapping

from ink.proxies import address, proxy_for, proxy_problem

DEFAULT_TIMEOUT = 3.0
PROXY_FIX = "correct or unset the proxy variable (HTTPS_PROXY, HTTP_PROXY or ALL_PROXY)"


class Probe:
    """A connect attempt running in a daemon thread. ``problem()`` waits for it (bounded)."""

    def __init__(
        self, url: str, origin: str, env: Mapping[str, str], timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.url = url
        self.origin = origin
        self.timeout = timeout
        proxy = proxy_for(url, env)
        self._proxied = proxy is not None  # then the proxy is what the user must fix, not the URL
        self._unusable = proxy_problem(proxy) if proxy else None  # a SOCKS proxy: said before any turn
        self._target = _target(url, proxy if self._unusable is None else None)
        self._error: str | None = None
        self._thread = threading.Thread(target=self._connect, name="ink-reach", daemon=True)
        self._thread.start()

    def _connect(self) -> None:
        host, port, via = self._target
        if self._unusable is not None:
            self._error = self._unusable
            return
        try:
            # the host goes on to getaddrinfo, which takes bytes as well (the stubs say str only)
            with socket.create_connection((_wire_name(host), port), self.timeout):  # type: ignore[arg-type]
                pass
        except (socket.gaierror, UnicodeError):  # the idna codec refuses an international name's label
            self._error = f"cannot resolve host {host!r}{via}"
        except ConnectionRefusedError:
            self._error = f"nothing listens on {host}:{port}{via} (connection refused)"
        except TimeoutError:
            self._error = f"no answer from {host}:{port}{via} within {self.timeout:g} s"
        except OSError as exc:
            self._error = f"cannot connect to {host}:{port}{via} ({exc.strerror or exc})"

    def problem(self) -> str | None:
        """None when the connect succeeded, else one line naming the URL, the cause and the fix."""
        self._thread.join(self.timeout + 1.0)
        error = self._error
        if self._thread.is_alive():  # name resolution is not bounded by the socket timeout
            error = f"no answer from {self._target[0]} within {self.timeout:g} s"
        if error is None:
            return None
        fix = PROXY_FIX if self._proxied else _fix(self.origin)
        return f"cannot reach the model service at {self.url}: {error}; {fix}"


def _wire_name(host: str) -> str | bytes:
    """An ASCII host name as the bytes it is: given a str, ``getaddrinfo`` encodes it with the idna codec,
    whose import (unicodedata, stringprep) costs ~1 ms and which refuses a name with an empty or long
    label (an exception in the probe's thread instead of "cannot resolve host"). Only a name with other
    characters needs the codec."""
    return host.encode("ascii") if host.isascii() else host


def _fix(origin: str) -> str:
    """How to fix the URL, depending on where it was set (``--base-url``, an env var, ``path:line``)."""
    if origin == "default":
        return "check the network connection (or the proxy settings), or give another address with --base-url"
    if origin.startswith("--"):
        return f"start the server or correct {origin}"
    if origin.isupper():
        return f"start the server, or correct or unset {origin}"
    return f"start the server, or correct base_url in {origin} (or override it with --base-url)"


def _target(url: str, proxy: str | None) -> tuple[str, int, str]:
    """(host, port, " via proxy ..." or "") of what a connection to ``url`` really goes to; ``proxy`` is
    one ``proxy_problem`` passed (a host, a valid port)."""
    if proxy:
        host, port = address(proxy)
        return host, port, f" (via proxy {host}:{port})"
    host, port = address(url)
    return host, port, ""
