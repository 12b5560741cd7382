"""The usual token formats never reach a session file (issue 23 item 11): GitHub, GitLab, Slack, AWS,
Google, Stripe, npm and PyPI tokens ink was never told about are redacted by their shape, whatever text
surrounds them (hypothesis), and a real ``ink -p`` run whose tool prints them keeps none."""

from __future__ import annotations

import string
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ink.redaction import REDACTED, redact
from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, call, say
from tests.jsonl_client import provider_args

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "_-"
# (prefix, alphabet, length) of each format: a token is the prefix and that many characters of it
FORMATS = [
    ("ghp_", ALNUM, 36),
    ("gho_", ALNUM, 36),
    ("ghu_", ALNUM, 36),
    ("ghs_", ALNUM, 36),
    ("ghr_", ALNUM, 36),
    ("github_pat_", ALNUM + "_", 82),
    ("glpat-", URLSAFE, 20),
    ("xoxb-", ALNUM + "-", 40),
    ("xoxp-", ALNUM + "-", 60),
    ("AKIA", UPPER_DIGITS, 16),
    ("ASIA", UPPER_DIGITS, 16),
    ("AIza", URLSAFE, 35),
    ("sk_live_", ALNUM, 24),
    ("rk_live_", ALNUM, 99),
    ("npm_", ALNUM, 36),
    ("pypi-AgEIcHlwaS5vcmc", URLSAFE, 60),
]
# Text around a token as logs, shells and JSON write it: separators a token never contains.
AROUND = st.text(alphabet=" \n\t\"'=:,;()[]{}<>/|", max_size=3).map(lambda gap: gap or " ")
WORDS = st.text(alphabet=string.ascii_letters + " ", max_size=20)


@st.composite
def tokens(draw: st.DrawFn) -> str:
    prefix, alphabet, length = draw(st.sampled_from(FORMATS))
    return prefix + draw(st.text(alphabet=alphabet, min_size=length, max_size=length))


@given(before=WORDS, gap1=AROUND, token=tokens(), gap2=AROUND, after=WORDS)
def test_every_token_format_is_redacted_wherever_it_stands(
    before: str, gap1: str, token: str, gap2: str, after: str
) -> None:
    text = before + gap1 + token + gap2 + after
    redacted = redact(text)
    assert token not in redacted
    assert REDACTED in redacted


def test_aws_secret_keys_are_redacted_where_they_are_named() -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    for text in (
        f"aws_secret_access_key = {secret}",
        f"AWS_SECRET_ACCESS_KEY={secret}",
        f'{{"SecretAccessKey": "{secret}"}}',
    ):
        assert secret not in redact(text) and "ecret" in redact(text).lower(), text


def test_ordinary_text_is_kept() -> None:
    for harmless in (
        "ghp_short",
        "the github_pat_ prefix",
        "AKIA is a prefix",
        "use npm_config_cache",
        "sk_live_ is stripe's prefix",
        "a high-throughput xox-less path",
        "pypi-packages",
    ):
        assert redact(harmless) == harmless


def test_a_run_whose_tool_prints_tokens_keeps_none_in_the_session(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    printed = [prefix + alphabet[0] * length for prefix, alphabet, length in FORMATS]
    command = "printf '%s\\n' " + " ".join(printed)
    fake_server.script(call("bash", {"command": command}, id="c1"), say("done"))
    env = ink_env(tmp_path)
    ran = run_ink(
        ["-p", "go", *provider_args(fake_server, "openai", "--permission-mode", "yolo")], env, project
    )
    assert ran.returncode == 0, ran.stderr
    assert printed[0] in fake_server.requests[1].tool_results()[0][1]  # the model saw what ran
    sessions = "".join(p.read_text() for p in (tmp_path / "inkhome" / "sessions").rglob("*.jsonl"))
    assert sessions.count(REDACTED) >= len(printed)
    for token in printed:
        assert token not in sessions
