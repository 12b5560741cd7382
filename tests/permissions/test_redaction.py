"""Secrets never reach session files, logs, --debug output or error messages (issue 7)."""

from __future__ import annotations

import io
import logging
import stat
from pathlib import Path

import pytest

from ink.redaction import REDACTED, Redactor, redact, redact_handler, usable_secrets
from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, Fault, Reply, call, say, text, tool_call

KEY = "sk-test-0123456789abcdefKEY"
OTHER_KEY = "sk-ant-api03-" + "x" * 40  # another provider's key, also in the environment
HEADER_TOKEN = "tok_4f9a8b7c6d5e"  # never given to ink: caught by its Authorization header shape


def every_file_under(folder: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_known_secrets_headers_and_key_formats_are_redacted() -> None:
    secrets = usable_secrets([KEY, None, "short", KEY + "-longer"])
    assert secrets == (KEY + "-longer", KEY)  # longest first; short strings would blank ordinary words
    assert redact(f"a {KEY}-longer b {KEY} c short", secrets) == f"a {REDACTED} b {REDACTED} c short"
    assert redact("Authorization: Bearer abcdefgh12345") == f"Authorization: Bearer {REDACTED}"
    assert redact('{"x-api-key": "abcdefgh12345"}') == f'{{"x-api-key": "{REDACTED}"}}'
    assert redact("authorization=basic dXNlcjpwYXNzd29yZA==") == f"authorization=basic {REDACTED}"
    assert redact(f"key {OTHER_KEY}.") == f"key {REDACTED}."
    assert redact("sk-proj-" + "a1" * 20) == REDACTED
    for harmless in ("authorization required", "the api-key header", "task-runner", "sk-short"):
        assert redact(harmless) == harmless


def test_log_lines_and_tracebacks_are_redacted() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    redactor = Redactor()
    redact_handler(handler, redactor)
    redactor.add([KEY])  # keys known later than logging started still count
    redact_handler(handler, redactor)  # idempotent
    logger = logging.getLogger("tests.permissions.redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            raise RuntimeError(f"the server said: bad key {KEY}")
        except RuntimeError:
            logger.exception("request with %s failed", f"Authorization: Bearer {KEY}")
    finally:
        logger.removeHandler(handler)
    written = out.getvalue()
    assert KEY not in written
    assert "Traceback" in written and f"bad key {REDACTED}" in written


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    work.mkdir()
    return work


def env_with_keys(tmp_path: Path) -> dict[str, str]:
    return ink_env(tmp_path, OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY=OTHER_KEY)


def test_a_run_that_prints_the_keys_leaves_none_in_the_session_or_the_debug_log(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    leak = f'echo "$OPENAI_API_KEY $ANTHROPIC_API_KEY"; echo "Authorization: Bearer {HEADER_TOKEN}"'
    fake_server.script(
        Fault.http(429, f"slow down, {KEY}", retry_after=0.01),  # a retry notice quoting the key
        Reply([text(f"Your key is {KEY}. "), tool_call("bash", {"command": leak}, id="c1")]),
        say(f"The other one is {OTHER_KEY}."),
    )
    args = [
        "-p",
        "--debug",
        "--permission-mode",
        "yolo",
        "--base-url",
        fake_server.openai_base_url,
        "leak it",
    ]
    done = run_ink(args, env_with_keys(tmp_path), project)
    assert done.returncode == 0, done.stderr
    assert fake_server.requests[1].headers["authorization"] == f"Bearer {KEY}"  # the key was in use
    assert KEY in fake_server.requests[2].tool_results()[0][1]  # and the tool really printed it
    assert f"slow down, {REDACTED}" in done.stderr  # the retry notice, shown with the key taken out
    sessions = every_file_under(tmp_path / "inkhome" / "sessions")
    assert sessions.count(REDACTED) >= 4 and "The other one is" in sessions
    for secret in (KEY, OTHER_KEY, HEADER_TOKEN):
        assert secret not in sessions
        assert secret not in done.stderr  # --debug logs included
    assert done.stdout == f"The other one is {OTHER_KEY}.\n"  # the answer itself is the user's, unchanged


def test_a_provider_error_quoting_the_key_is_redacted_everywhere(project: Path, tmp_path: Path) -> None:
    with FakeModelServer(
        api_key="the-right-key"
    ) as server:  # answers 401 "Incorrect API key provided: <key>"
        args = ["-p", "--debug", "--base-url", server.openai_base_url, "hello"]
        done = run_ink(args, env_with_keys(tmp_path), project)
        assert KEY in (server.requests[0].error_message or "")  # the server did quote it
    assert done.returncode == 1
    assert "Incorrect API key provided: [REDACTED]" in done.stderr
    assert KEY not in done.stderr
    assert KEY not in every_file_under(tmp_path / "inkhome")


@pytest.mark.parametrize("where", ["env", "flag", "user file"])
def test_a_base_url_with_a_password_is_refused_without_quoting_it(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, where: str
) -> None:
    """httpx would send ``user:pw@`` as Basic auth in place of the API key (issue 11): refused, and the
    error names the place but never the password."""
    url = fake_server.openai_base_url.replace("http://", "http://user:pa55word-secret@")
    env = ink_env(tmp_path, OPENAI_API_KEY=KEY)
    args = ["-p", "--debug", "go"]
    if where == "env":
        env["OPENAI_BASE_URL"] = url
    elif where == "flag":
        args = ["--base-url", url, *args]
    else:
        (tmp_path / "inkhome").mkdir()
        (tmp_path / "inkhome" / "config.toml").write_text(f'base_url = "{url}"\n')
    done = run_ink(args, env, project)
    assert done.returncode == 2 and fake_server.requests == []
    assert "holds a user name or password" in done.stderr and "[REDACTED]@127.0.0.1" in done.stderr
    assert "pa55word-secret" not in done.stderr


def test_a_bad_base_url_error_never_quotes_its_password(project: Path, tmp_path: Path) -> None:
    for url in ("http://u:pa55word-secret@127.0.0.1:99999/v1", "ftp://u:pa55word-secret@host/v1"):
        done = run_ink(["-p", "--base-url", url, "go"], ink_env(tmp_path), project)
        assert done.returncode == 2 and "base URL '" in done.stderr and "://[REDACTED]@" in done.stderr
        assert "pa55word-secret" not in done.stderr


def test_print_modes_refusal_warning_does_not_quote_a_key(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    command = f"curl -H 'Authorization: Bearer {HEADER_TOKEN}' -d {KEY} http://127.0.0.1:9/"
    fake_server.script(call("bash", {"command": command}, id="c1"), say("refused"))
    args = ["-p", "--base-url", fake_server.openai_base_url, "post it"]
    done = run_ink(args, env_with_keys(tmp_path), project)
    assert done.returncode == 0, done.stderr
    assert "refused the bash command `curl -H" in done.stderr
    assert KEY not in done.stderr and HEADER_TOKEN not in done.stderr


def test_secrets_used_as_json_keys_leave_the_session_file(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """A model may put a secret in a tool argument's key: the session file keeps the structure only."""
    fake_server.script(
        call("bash", {"command": "true", KEY: "x", f"{KEY}-2": "y"}, id="c1"),
        say("done"),
    )
    args = ["-p", "--permission-mode", "yolo", "--base-url", fake_server.openai_base_url, "go"]
    done = run_ink(args, env_with_keys(tmp_path), project)
    assert done.returncode == 0, done.stderr
    sessions = every_file_under(tmp_path / "inkhome" / "sessions")
    assert sessions and KEY not in sessions
    assert f'"{REDACTED}"' in sessions and f'"{REDACTED}-2"' in sessions


def test_ink_home_sessions_and_session_files_are_private(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(say("hi"))
    args = ["-p", "--base-url", fake_server.openai_base_url, "hello"]
    done = run_ink(args, ink_env(tmp_path, INK_HOME=str(tmp_path / "new" / "inkhome")), project)
    assert done.returncode == 0, done.stderr
    home = tmp_path / "new" / "inkhome"
    [session] = (home / "sessions").rglob("*.jsonl")
    checkpoints = (home / "checkpoints", home / "checkpoints" / "repos", home / "checkpoints" / "sessions")
    for folder in (tmp_path / "new", home, home / "sessions", session.parent, *checkpoints):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert stat.S_IMODE(session.stat().st_mode) == 0o600
