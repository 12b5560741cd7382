"""Which proxy a URL goes through (``ink.proxies``), the one rule the providers' HTTP client and the
start-up probe share: the environment variables httpx and urllib read, NO_PROXY matched as urllib does."""

from __future__ import annotations

import socket
import urllib.request

from hypothesis import given
from hypothesis import strategies as st

from ink.config.reach import Probe
from ink.proxies import bypassed, proxy_for

PROXY = "http://proxy.corp:3128"


def test_each_scheme_takes_its_own_variable_then_all_proxy() -> None:
    env = {"HTTPS_PROXY": "http://tls.corp:1", "HTTP_PROXY": "http://plain.corp:2", "ALL_PROXY": PROXY}
    assert proxy_for("https://api.example.org/v1", env) == "http://tls.corp:1"
    assert proxy_for("http://api.example.org/v1", env) == "http://plain.corp:2"
    assert proxy_for("https://api.example.org/v1", {"ALL_PROXY": PROXY}) == PROXY
    assert proxy_for("https://api.example.org/v1", {}) is None


def test_lower_case_wins_and_an_empty_lower_case_variable_unsets() -> None:
    assert proxy_for("https://a.org", {"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:2"}) == (
        "http://lower:2"
    )
    assert proxy_for("https://a.org", {"HTTPS_PROXY": "http://upper:1", "https_proxy": ""}) is None


def test_a_proxy_without_a_scheme_is_an_http_proxy() -> None:
    assert proxy_for("https://a.org", {"HTTPS_PROXY": "proxy.corp:3128"}) == PROXY


def test_loopback_is_never_proxied() -> None:
    for url in ("http://localhost:8080/v1", "http://127.0.0.1:11434/v1", "http://[::1]:8080/v1"):
        assert proxy_for(url, {"ALL_PROXY": PROXY}) is None


def test_a_cgi_program_ignores_http_proxy() -> None:
    """Under CGI, HTTP_PROXY may come from a request's ``Proxy:`` header (httpoxy): urllib ignores it."""
    assert proxy_for("http://a.org", {"HTTP_PROXY": PROXY, "REQUEST_METHOD": "GET"}) is None


def test_no_proxy_star_and_ports() -> None:
    assert proxy_for("https://a.org", {"ALL_PROXY": PROXY, "NO_PROXY": "x.org, *"}) is None
    assert bypassed("api.a.org", 8443, "a.org:8443")
    assert not bypassed("api.a.org", 443, "a.org:8443")
    assert bypassed("api.a.org", 443, " .A.ORG ")
    assert not bypassed("bad-a.org", 443, "a.org")


labels = st.sampled_from(["a", "b", "api", "example", "org", "com", "x-y"])
names = st.lists(labels, min_size=1, max_size=3).map(".".join)
ports = st.sampled_from([80, 443, 8080])
entries = st.one_of(
    names,
    names.map(lambda n: "." + n),
    st.tuples(names, ports).map(lambda p: f"{p[0]}:{p[1]}"),
    st.just(""),
)


@given(host=names, port=ports, no_proxy=st.lists(entries, max_size=4).map(", ".join))
def test_no_proxy_matches_like_urllib(host: str, port: int, no_proxy: str) -> None:
    expected = bool(urllib.request.proxy_bypass_environment(f"{host}:{port}", {"no": no_proxy}))
    assert bypassed(host, port, no_proxy) == expected


def test_the_probe_knocks_at_the_proxy_the_client_will_use() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        proxy = f"http://127.0.0.1:{listener.getsockname()[1]}"
        probe = Probe("https://api.model.invalid/v1", "default", {"HTTPS_PROXY": proxy})
        assert probe.problem() is None  # the unresolvable host is the proxy's business
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    probe = Probe("https://api.model.invalid/v1", "default", {"HTTPS_PROXY": f"127.0.0.1:{port}"})
    problem = probe.problem()
    assert problem is not None and f"(via proxy 127.0.0.1:{port})" in problem
    assert problem.endswith("; correct or unset the proxy variable (HTTPS_PROXY, HTTP_PROXY or ALL_PROXY)")


def test_a_dead_proxy_is_not_blamed_on_the_base_url() -> None:
    """The URL given with --base-url is fine; the remedy names what is wrong: the proxy."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = {"HTTP_PROXY": f"http://127.0.0.1:{port}"}
    problem = Probe("http://svc.example.org/v1", "--base-url", env).problem()
    assert problem is not None and "correct --base-url" not in problem
    assert "correct or unset the proxy variable" in problem


def test_the_probe_refuses_a_socks_proxy_before_any_turn() -> None:
    """The client could not use it: one line at start-up, never quoting the proxy's password."""
    env = {"ALL_PROXY": "socks5h://me:secret@127.0.0.1:1080"}
    problem = Probe("https://api.example.org/v1", "default", env).problem()
    assert problem is not None
    assert "socks5h proxy; ink speaks only to http:// and https:// proxies" in problem
    assert "secret" not in problem


def test_a_proxy_with_a_bad_port_is_a_problem_not_a_crash() -> None:
    env = {"HTTPS_PROXY": "http://proxy.corp:99999"}
    problem = Probe("https://api.example.org/v1", "default", env).problem()
    assert problem is not None and "no valid host and port" in problem


def test_the_probe_names_an_international_host_the_idna_codec_refuses() -> None:
    """An empty or over-long label in a name that is not ASCII, straight or as the proxy: the codec's
    refusal is 'cannot resolve host', not an exception in the probe's thread that left no problem."""
    for url, env in [
        ("http://ü..b:9/v1", {}),
        ("https://api.example.org/v1", {"HTTPS_PROXY": "http://" + "ü" * 64 + ".corp:3128"}),
    ]:
        problem = Probe(url, "default", env).problem()
        assert problem is not None and "cannot resolve host" in problem


def test_a_proxy_that_is_not_a_url_is_a_problem_not_a_crash() -> None:
    """urlsplit refuses an unclosed IPv6 bracket: one line at start-up, not an internal error."""
    env = {"HTTP_PROXY": "http://me:secret@[::1"}
    problem = Probe("http://api.example.org/v1", "default", env).problem()
    assert problem is not None and "*_PROXY variables is not a valid URL" in problem
    assert "secret" not in problem
