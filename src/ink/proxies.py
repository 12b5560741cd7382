"""Which proxy a request to a URL goes through, from the environment: one definition for the providers'
HTTP client (``ink.ai.http1``) and the start-up reachability probe (``ink.config.reach``).

The variables are those httpx and urllib read: ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and
``NO_PROXY``, each also in lower case, the lower-case one winning (urllib's ``getproxies_environment``).
A proxy given without a scheme (``proxy.corp:3128``) is an http:// proxy. ``NO_PROXY`` is a comma list
matched like urllib's ``proxy_bypass_environment``: ``*`` bypasses every proxy; an entry matches the
host itself and its subdomains on a dot boundary (a leading dot is ignored, ``example.com`` matches
``api.example.com`` but not ``badexample.com``); an entry ``host:port`` matches only that port.
Loopback hosts (``localhost``, ``127.0.0.1``, ``::1``) are never proxied: a local model server is on this
machine, which a proxy elsewhere cannot reach (httpx sent them to the proxy unless ``NO_PROXY`` named
them; this is Go's rule and the one the probe always used).

Standard library only and cheap: the command line imports it before anything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def proxy_for(url: str, env: Mapping[str, str]) -> str | None:
    """The proxy URL (with its scheme, credentials kept) a request to ``url`` goes through, or None
    for a direct connection."""
    parts = urlsplit(url)
    try:
        host, port = address(url)
    except ValueError:
        return None  # not a URL a request can be sent to: the client says so itself
    variables = proxy_variables(env)
    if host in LOOPBACK or bypassed(host, port, variables.get("no", "")):
        return None
    proxy = variables.get(parts.scheme) or variables.get("all")
    if not proxy:
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def address(url: str) -> tuple[str, int]:
    """(host, port) a connection for ``url`` (a service's or a proxy's) goes to: the host lower-cased,
    the port the URL names or its scheme's (443 for https, else 80). Raises ``ValueError`` on a bad port."""
    parts = urlsplit(url)
    return parts.hostname or "", parts.port or (443 if parts.scheme.lower() == "https" else 80)


def proxy_problem(proxy: str) -> str | None:
    """Why ink cannot use the proxy URL ``proxy`` (as ``proxy_for`` gives it), or None. Only http:// and
    https:// proxies are spoken to (SOCKS is not: httpx needed an extra package for it, which ink never
    installed). Never quotes the credentials."""
    try:
        parts = urlsplit(proxy)
    except ValueError:  # an unclosed [ (http://[::1): no part of it can be shown safely
        return "the proxy in the environment's *_PROXY variables is not a valid URL"
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
        bad_port = True
    else:
        bad_port = False
    shown = f"{scheme}://{parts.hostname or ''}" + (f":{port}" if port else "")
    if scheme not in ("http", "https"):
        return (
            f"the proxy {shown} (from the environment's *_PROXY variables) is a {scheme} proxy; ink speaks "
            "only to http:// and https:// proxies (name the host in NO_PROXY to go direct)"
        )
    if not parts.hostname or bad_port:
        return f"the proxy {shown} (from the environment's *_PROXY variables) has no valid host and port"
    return None


def proxy_variables(env: Mapping[str, str]) -> dict[str, str]:
    """``{"http": ..., "https": ..., "all": ..., "no": ...}`` from ``*_proxy`` variables, the lower-case
    spelling winning over the upper-case one; empty values are left out."""
    found: dict[str, str] = {}
    for name, value in env.items():
        if value and name.lower().endswith("_proxy") and name != name.lower():
            found[name[:-6].lower()] = value
    for name, value in env.items():
        if name.endswith("_proxy") and name == name.lower():
            if value:
                found[name[:-6]] = value
            else:  # an empty lower-case variable unsets the upper-case one, as in urllib
                found.pop(name[:-6], None)
    if "REQUEST_METHOD" in env:  # a CGI program: HTTP_PROXY may be a request's "Proxy:" header (httpoxy)
        found.pop("http", None)
    return found


def bypassed(host: str, port: int, no_proxy: str) -> bool:
    """Whether ``NO_PROXY`` sends ``host:port`` direct (urllib's matching; see the module doc)."""
    host = host.lower()
    with_port = f"{host}:{port}"
    for entry in no_proxy.split(","):
        name = entry.strip().lstrip(".").lower()
        if name == "*":
            return True
        if not name:
            continue
        if name.startswith("[") and "]" in name:  # [::1]:8080 or [::1]
            address, _, rest = name[1:].partition("]")
            name = address + rest
        if name in (host, with_port) or host.endswith("." + name) or with_port.endswith("." + name):
            return True
    return False
