"""Bad input at the command line: one line naming the problem and the fix, exit 2, no traceback, and no
request ever sent (CONTRACT "Command line")."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.cli.inkproc import ink_env, one_line_error, run_ink
from tests.fakeserver import FakeModelServer, say


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    return path


def fails_with(args: list[str], env: dict[str, str], cwd: Path, *wanted: str) -> str:
    done = run_ink(args, env, cwd)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    line = one_line_error(done.stderr)
    for part in wanted:
        assert part in line, line
    return line


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (["--bogus"], ["unknown option --bogus", "(see ink --help)"]),
        (["-p", "--modle", "x", "hi"], ["unknown option --modle (did you mean --mode or --model?)"]),
        (["-p", "--max-iterations", "ten", "hi"], ["--max-iterations: 'ten' is not a whole number"]),
        (["-p", "--max-iterations", "-1", "hi"], ["--max-iterations: '-1' is negative"]),
        (["-p", "--steering-mode", "some", "hi"], ["--steering-mode: invalid choice: 'some'"]),
        (["-p", "--provider", "mistral", "hi"], ["--provider: invalid choice: 'mistral'", "'openai'"]),
        (["-p", "--output-format", "xml", "hi"], ["--output-format: invalid choice: 'xml'"]),
        (["--output-format", "stream-json", "hi"], ["--output-format only applies to print mode: add -p"]),
        (["-p", "--mode", "rpc"], ["--mode rpc reads its prompts from stdin"]),
        (["acp", "extra"], ["'ink acp' takes no prompt"]),
        (["--mode", "acp"], ["--mode: invalid choice: 'acp'", "the ACP server is the subcommand 'ink acp'"]),
        (["-p", "--continue", "--resume", "abc", "hi"], ["--continue and --resume exclude each other"]),
        (["-p", "--model"], ["--model: expected one argument"]),
    ],
)
def test_bad_flags(args: list[str], wanted: list[str], work: Path, tmp_path: Path) -> None:
    fails_with(args, ink_env(tmp_path), work, *wanted)


def test_no_traceback_even_with_debug_for_bad_input(work: Path, tmp_path: Path) -> None:
    fails_with(["--debug", "--bogus"], ink_env(tmp_path), work, "unknown option --bogus")


def test_missing_key_names_the_variable(work: Path, tmp_path: Path) -> None:
    """A provider chosen (here by the flag) needs its key. With none chosen and no key at all, ink starts
    on its starter model instead (tests/real_model): but a key of another provider is a choice too."""
    wanted = ("no API key for openai", "set OPENAI_API_KEY", "--api-key")
    fails_with(["-p", "--provider", "openai", "hi"], ink_env(tmp_path), work, *wanted)
    fails_with(["-p", "hi"], ink_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-x"), work, *wanted)
    env = ink_env(tmp_path, OPENAI_API_KEY="set-but-other-provider")
    fails_with(["-p", "--provider", "anthropic", "hi"], env, work, "ANTHROPIC_API_KEY")


def free_port() -> int:
    """A port nothing listens on: bound, then released (the kernel will not hand it out at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_base_url_from_a_flag(work: Path, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    fails_with(
        ["-p", "--base-url", url, "hi"],
        ink_env(tmp_path),
        work,
        f"cannot reach the model service at {url}",
        "connection refused",
        "correct --base-url",
    )


def test_unreachable_base_url_from_the_environment(work: Path, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    env = ink_env(tmp_path, ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="k")
    fails_with(["-p", "--provider", "anthropic", "hi"], env, work, url, "unset ANTHROPIC_BASE_URL")


def test_unresolvable_host(work: Path, tmp_path: Path) -> None:
    env = ink_env(tmp_path, OPENAI_BASE_URL="http://no-such-host.invalid/v1")
    line = fails_with(
        ["-p", "hi"], env, work, "cannot reach the model service at http://no-such-host.invalid/v1"
    )
    # "cannot resolve host" normally; "no answer ... within 3 s" where no name server answers at all
    assert "no-such-host.invalid" in line.split(": ", 2)[2]


@pytest.mark.parametrize("host", ["a..b", "x" * 64 + ".example"])
def test_a_host_name_no_resolver_accepts_is_unresolvable_too(host: str, work: Path, tmp_path: Path) -> None:
    """An empty or over-long label: the probe asks the resolver with the name's bytes, so the answer is the
    same one line, not an internal error from the text codec for international names."""
    url = f"http://{host}:9/v1"
    line = fails_with(
        ["-p", "--base-url", url, "hi"], ink_env(tmp_path), work, f"cannot reach the model service at {url}"
    )
    assert host in line.split(": ", 2)[2]


def test_base_url_that_is_not_a_url(work: Path, tmp_path: Path) -> None:
    fails_with(["-p", "--base-url", "localhost:8080", "hi"], ink_env(tmp_path), work, "--base-url: base URL")


def test_missing_cwd(work: Path, tmp_path: Path) -> None:
    fails_with(
        ["-p", "--cwd", "no/such/dir", "hi"], ink_env(tmp_path), work, "--cwd no/such/dir: no such dir"
    )


@pytest.mark.parametrize("where", ["user", "project"])
def test_malformed_config_names_file_and_line(where: str, work: Path, tmp_path: Path) -> None:
    path = (tmp_path / "inkhome" if where == "user" else work / ".ink") / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('model = "gpt-4.1"\n\nmax_iterations = [1,\n')
    line = fails_with(["-p", "hi"], ink_env(tmp_path), work, f"ink: config error: {path}:3: ")
    assert line.endswith("— fix the file or remove it")


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ('provider = "openai"\npermision_mode = "yolo"\n', ":2: unknown key 'permision_mode'"),
        ('max_iterations = "10"\n', ":1: max_iterations must be an integer (got '10')"),
        ('follow_up_mode = "some"\n', ":1: follow_up_mode must be one of all, one-at-a-time"),
        ('[providers.mistral]\nmodel = "x"\n', ":1: unknown provider 'mistral'"),
    ],
)
def test_bad_config_keys_and_values(text: str, wanted: str, work: Path, tmp_path: Path) -> None:
    path = tmp_path / "inkhome" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    fails_with(["-p", "hi"], ink_env(tmp_path), work, f"{path}{wanted}")


def test_config_errors_are_reported_before_the_key_is_checked(work: Path, tmp_path: Path) -> None:
    (work / ".ink").mkdir()
    (work / ".ink" / "config.toml").write_text("model = \n")
    fails_with(["-p", "hi"], ink_env(tmp_path), work, "config error")


def test_a_project_file_cannot_redirect_the_key(
    fake_server: FakeModelServer, work: Path, tmp_path: Path
) -> None:
    """The repository's file names an attacker's URL; ink warns, ignores it, and talks to the URL the
    user chose (here: the environment's)."""
    (work / ".ink").mkdir()
    (work / ".ink" / "config.toml").write_text('base_url = "http://198.51.100.1/v1"\n')
    fake_server.script(say("safe"))
    env = ink_env(tmp_path, OPENAI_BASE_URL=fake_server.openai_base_url, OPENAI_API_KEY="k")
    done = run_ink(["-p", "--no-session", "hi"], env, work)
    assert (done.returncode, done.stdout) == (0, "safe\n")
    assert done.stderr.startswith("ink: warning: ") and "ignoring base_url" in done.stderr
    assert len(fake_server.requests) == 1
