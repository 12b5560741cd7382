"""The TLS context every https connection of the process uses, built once per choice of trust store:
``SSL_CERT_FILE`` (a bundle), else ``SSL_CERT_DIR`` (a folder of hashed certificates), else certifi's
bundle, the one httpx used (a dependency: a python.org build on macOS has no system store Python finds).

A trust store the variables name but that cannot be used (missing, not a regular file or folder, empty of
certificates) is a ``TrustStoreError`` naming the variable and the path once: every connection would fail
the same way, and no host is to blame. The file is checked before OpenSSL reads it, so a FIFO or a device
named there cannot hold the client."""

from __future__ import annotations

import os
import ssl
import stat
from collections.abc import Mapping

from ink.ai.http1.errors import HttpError
from ink.ai.printable import printable

MAX_BUNDLE_BYTES = 64 << 20  # certifi's bundle is ~300 KB; a system's, a few MB at most

_TLS_CONTEXTS: dict[tuple[str, str], ssl.SSLContext] = {}


class TrustStoreError(HttpError):
    """``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` names certificates that cannot be used."""


def default_tls_context(env: Mapping[str, str]) -> ssl.SSLContext:
    """The context httpx made by default: ``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi's bundle.
    One per choice for the process: loading a bundle costs ~10-20 ms, and a context may serve any number of
    connections. Raises ``TrustStoreError``."""
    cafile, capath = env.get("SSL_CERT_FILE", ""), env.get("SSL_CERT_DIR", "")
    choice = (cafile, "") if cafile else ("", capath)
    context = _TLS_CONTEXTS.get(choice)
    if context is None:
        if cafile:
            context = _from("SSL_CERT_FILE", cafile)
        elif capath:
            context = _from("SSL_CERT_DIR", capath)
        else:
            import certifi

            context = ssl.create_default_context(cafile=certifi.where())
        _TLS_CONTEXTS[choice] = context
    return context


def warm_up(env: Mapping[str, str]) -> None:
    """Build the default context ahead of the first https request (a thread may run this); a trust store
    that cannot be used is left for that request to report."""
    try:
        default_tls_context(env)
    except TrustStoreError:
        pass


def _from(variable: str, path: str) -> ssl.SSLContext:
    """The context trusting what ``path`` (the value of ``variable``) holds; raises ``TrustStoreError``."""
    named = f"{variable} names {printable(path)!r}, which"
    is_file = variable == "SSL_CERT_FILE"
    try:
        info = os.stat(path)
    except OSError as exc:
        raise TrustStoreError(f"{named} cannot be used: {exc.strerror or exc}") from exc
    if not (stat.S_ISREG(info.st_mode) if is_file else stat.S_ISDIR(info.st_mode)):
        raise TrustStoreError(f"{named} is not {'a regular file' if is_file else 'a folder'} of certificates")
    if is_file and info.st_size > MAX_BUNDLE_BYTES:
        raise TrustStoreError(f"{named} is over {MAX_BUNDLE_BYTES >> 20} MiB: not a certificate bundle")
    try:
        return ssl.create_default_context(cafile=path) if is_file else ssl.create_default_context(capath=path)
    except ssl.SSLError as exc:
        raise TrustStoreError(f"{named} holds no certificate OpenSSL reads ({exc.reason or exc})") from exc
    except OSError as exc:
        raise TrustStoreError(f"{named} cannot be read: {exc.strerror or exc}") from exc
