"""The TLS context every https connection of the process uses, built once per choice of trust store."""

from __future__ import annotations

import ssl
from collections.abc import Mapping

_TLS_CONTEXTS: dict[tuple[str, str], ssl.SSLContext] = {}


def default_tls_context(env: Mapping[str, str]) -> ssl.SSLContext:
    """The context httpx made by default: ``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi's bundle
    (or the system's store without certifi). One per choice for the process: loading a bundle costs
    ~10-20 ms, and a context may serve any number of connections."""
    cafile, capath = env.get("SSL_CERT_FILE", ""), env.get("SSL_CERT_DIR", "")
    choice = (cafile, "") if cafile else ("", capath)
    context = _TLS_CONTEXTS.get(choice)
    if context is None:
        if cafile:
            context = ssl.create_default_context(cafile=cafile)
        elif capath:
            context = ssl.create_default_context(capath=capath)
        else:
            try:
                import certifi
            except ImportError:
                context = ssl.create_default_context()
            else:
                context = ssl.create_default_context(cafile=certifi.where())
        _TLS_CONTEXTS[choice] = context
    return context
