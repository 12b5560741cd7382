"""Issue 14 over RPC: ``list_checkpoints`` and ``rewind {inputId, files, conversation, force?}`` with the real
``ink --mode rpc``, the real bash tool and the fake model server. A rewind is checked at once (``ok:false``
with the reason), done in the background and announced by ``rewind_end``; a kill -9 in the middle of a
run leaves a checkpoint the next process can still rewind to."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.checkpoints.test_shadow import manifest
from tests.cli.inkproc import INK, ink_env
from tests.fakeserver import FakeModelServer, call, say
from tests.jsonl_client import provider_args
from tests.processes import kill_tree
from tests.rpc.client import RpcClient
from tests.rpc.conftest import StartRpc
from tests.waiting import poll_until, wait_for_file

YOLO = ("--permission-mode", "yolo")
EDITS = (
    "echo edited > notes.txt; chmod +x tool.sh; rm doomed.txt; mkdir -p new/dir; echo n > new/dir/made.txt"
)


def tree(project: Path) -> Path:
    (project / "tool.sh").write_text("#!/bin/sh\n")
    (project / "doomed.txt").write_bytes(b"\x00\x01 binary\n")
    return project


def test_a_run_that_edits_creates_deletes_and_chmods_through_bash_is_rewound_byte_for_byte(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    before = manifest(tree(project))
    fake_server.script(call("bash", {"command": EDITS}), say("done"))
    ink = start_rpc(*YOLO)
    first = ink.ok("prompt", text="change things")["inputId"]
    ink.wait_event("run_end", stopReason="completed")
    assert manifest(project) != before
    listed = ink.ok("list_checkpoints")["checkpoints"]
    assert [(c["inputId"], c["text"], c["kind"]) for c in listed] == [(first, "change things", "input")]
    assert set(listed[0]) == {"inputId", "text", "runId", "time", "files", "kind"}
    files = ["doomed.txt", "new/dir/made.txt", "notes.txt", "tool.sh"]  # known once the end snapshot is
    poll_until(lambda: ink.ok("list_checkpoints")["checkpoints"][0]["files"] == files, what="the files")

    assert ink.ok("rewind", inputId=first, files=True, conversation=True) == {
        "inputId": first,
        "files": True,
        "conversation": True,
    }
    end = ink.wait_event("rewind_end")
    assert end["ok"] is True and end["removed"] == ["new/dir/made.txt"], end
    assert manifest(project) == before and not (project / "new").exists()  # modes included
    restored = ink.wait_event("input_restored")["restoredInput"]
    assert [(i["inputId"], i["text"]) for i in restored] == [(first, "change things")]
    assert ink.ok("get_messages")["messages"] == []

    undo = ink.ok("list_checkpoints")["checkpoints"][-1]  # the rewind itself can be undone
    assert undo["kind"] == "rewind" and undo["inputId"] == end["undo"]
    ink.ok("rewind", inputId=undo["inputId"], files=True, conversation=False)
    assert ink.wait_event("rewind_end", inputId=undo["inputId"])["ok"] is True
    assert (project / "new/dir/made.txt").exists() and not (project / "doomed.txt").exists()


def test_rewinding_only_the_conversation_keeps_the_files(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    fake_server.script(call("bash", {"command": "echo kept > made.txt"}), say("done"), say("again"))
    ink = start_rpc(*YOLO)
    first = ink.ok("prompt", text="make a file")["inputId"]
    ink.wait_event("run_end")
    ink.ok("rewind", inputId=first, files=False, conversation=True)
    assert ink.wait_event("rewind_end")["ok"] is True
    assert (project / "made.txt").read_text() == "kept\n"
    assert ink.ok("get_messages")["messages"] == []
    at = ink.mark()
    ink.ok("prompt", text="fresh start")
    ink.wait_event("run_end", after=at)
    assert fake_server.user_texts()[-1] == ["fresh start"]  # the strict server took the cut history


def test_a_rewind_during_a_run_aborts_it_and_its_receipt_names_the_changed_files(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path, marks: Path
) -> None:
    started = marks / "started"
    fake_server.script(
        call("bash", {"command": f"echo x > made.txt; rm notes.txt; echo up > {started}; sleep 60"})
    )
    ink = start_rpc(*YOLO)
    first = ink.ok("prompt", text="slow work")["inputId"]
    wait_for_file(started)
    ink.ok("rewind", inputId=first, files=True, conversation=True)
    at, run_end = ink.wait_event_at("run_end")
    assert run_end["stopReason"] == "aborted" and run_end["receipt"]["reason"] == "rewind"
    assert run_end["receipt"]["changedFiles"] == ["made.txt", "notes.txt"]
    _, end = ink.wait_event_at("rewind_end", after=at)
    assert end["ok"] is True
    assert not (project / "made.txt").exists() and (project / "notes.txt").read_text() == "the secret is 42\n"
    assert ink.ok("get_state")["state"] == "idle" and ink.ok("get_messages")["messages"] == []


def test_a_file_changed_by_the_user_is_reported_and_kept_unless_forced(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    fake_server.script(call("bash", {"command": "echo ink > made.txt"}), say("done"))
    ink = start_rpc(*YOLO)
    first = ink.ok("prompt", text="make it")["inputId"]
    ink.wait_event("run_end")
    ended = lambda: ink.ok("list_checkpoints")["checkpoints"][0]["files"] == ["made.txt"]  # noqa: E731
    poll_until(ended, what="the end snapshot")  # taken just after run_end: what changes now is the user's
    (project / "made.txt").write_text("the user's words\n")
    ink.ok("rewind", inputId=first, files=True, conversation=False)
    refused = ink.wait_event("rewind_end")
    assert refused["ok"] is False and refused["changedOutside"] == ["made.txt"]
    assert "changed outside ink" in refused["error"]
    assert (project / "made.txt").read_text() == "the user's words\n"
    at = ink.mark()
    ink.ok("rewind", inputId=first, files=True, conversation=False, force=True)
    assert ink.wait_event("rewind_end", after=at)["ok"] is True
    assert not (project / "made.txt").exists()


def test_bad_rewinds_are_clear_errors_and_change_nothing(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    fake_server.script(say("done"))
    ink = start_rpc(*YOLO)
    first = ink.ok("prompt", text="hello")["inputId"]
    ink.wait_event("run_end")
    assert "no checkpoint for input 'nope'" in ink.fail(
        "rewind", inputId="nope", files=True, conversation=True
    )
    assert "not in this conversation" in ink.fail("rewind", inputId="nope", files=False, conversation=True)
    assert "nothing to rewind" in ink.fail("rewind", inputId=first, files=False, conversation=False)
    assert "must be true or false" in ink.fail("rewind", inputId=first, files="yes", conversation=True)
    assert 'needs the field "conversation"' in ink.fail("rewind", inputId=first, files=True)
    assert len(ink.ok("get_messages")["messages"]) == 2 and ink.events("rewind_end") == []


def test_the_users_git_repository_is_untouched(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=project, check=True, capture_output=True, text=True).stdout

    commit = ("-c", "user.name=u", "-c", "user.email=u@x")
    git("init", "-q")
    git("add", "notes.txt")
    git(*commit, "commit", "-q", "-m", "base")
    (project / "notes.txt").write_text("stashed\n")
    git(*commit, "stash", "-q")
    (project / "notes.txt").write_text("staged\n")
    git("add", "notes.txt")
    (project / "untracked.txt").write_text("mine\n")
    state = (
        git("rev-parse", "HEAD"),
        git("stash", "list"),
        git("status", "--porcelain"),
        git("ls-files", "-s"),
    )
    dot_git = {p: p.read_bytes() for p in (project / ".git").rglob("*") if p.is_file()}
    fake_server.script(call("bash", {"command": "echo x > made.txt; echo y >> notes.txt"}), say("done"))
    ink = start_rpc(*YOLO)
    first = ink.ok("prompt", text="work")["inputId"]
    ink.wait_event("run_end")
    ink.ok("rewind", inputId=first, files=True, conversation=False)
    assert ink.wait_event("rewind_end")["ok"] is True
    assert {p: p.read_bytes() for p in (project / ".git").rglob("*") if p.is_file()} == dot_git  # all of it
    assert (
        git("rev-parse", "HEAD"),
        git("stash", "list"),
        git("status", "--porcelain"),
        git("ls-files", "-s"),
    ) == state
    assert (project / "untracked.txt").read_text() == "mine\n"


def test_kill_9_mid_run_then_the_next_start_rewinds_that_input(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, marks: Path
) -> None:
    """ink killed while a run changes files (its checkpoint was written before the first tool ran): the
    next process, on the same session, lists the input and gives the tree back."""
    before = manifest(tree(project))
    args, env = provider_args(fake_server, "openai", *YOLO), ink_env(tmp_path)
    fake_server.script(call("bash", {"command": f"{EDITS}; echo $$ > {marks}/shell.pid; sleep 60"}))
    with RpcClient.start(args, env, project) as first:
        taken = first.ok("prompt", text="doomed run")["inputId"]
        shell = int(wait_for_file(marks / "shell.pid"))
        first.proc.kill()
        assert first.wait_exit() == -9
        kill_tree(shell)
    assert manifest(project) != before
    fake_server.script(say("carried on"))
    with RpcClient.start([*args, "--continue"], env, project) as again:
        assert [c["inputId"] for c in again.ok("list_checkpoints")["checkpoints"]] == [taken]
        later = again.ok("prompt", text="after the restart")["inputId"]
        assert later != taken  # ids stay unique in the session across processes
        again.wait_event("run_end")
        listed = again.ok("list_checkpoints")["checkpoints"]
        assert [c["inputId"] for c in listed] == [taken, later]
        again.ok("rewind", inputId=taken, files=True, conversation=True)
        end = again.wait_event("rewind_end")
        assert end["ok"] is True, end
        assert manifest(project) == before
        restored = again.wait_event("input_restored")["restoredInput"]
        assert [i["text"] for i in restored] == ["doomed run", "after the restart"]
        again.close_stdin()
        assert again.wait_exit() == 0
    assert not any(p.name.endswith(".lock") for p in (Path(env["INK_HOME"]) / "checkpoints").rglob("*"))


def test_checkpoints_follow_the_session(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    """A new session has none of the old one's checkpoints; they stay with the old session's id."""
    fake_server.script(say("one"), say("two"))
    ink = start_rpc(*YOLO)
    ink.ok("prompt", text="in the first session")
    ink.wait_event("run_end")
    ink.ok("new_session")
    assert ink.ok("list_checkpoints")["checkpoints"] == []
    at = ink.mark()
    second = ink.ok("prompt", text="in the second")["inputId"]
    ink.wait_event("run_end", after=at)
    assert [c["inputId"] for c in ink.ok("list_checkpoints")["checkpoints"]] == [second]


def test_a_print_mode_run_is_rewound_after_the_session_is_resumed(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """``ink -p`` takes checkpoints when its session is saved: nothing there rewinds, but the session can
    be resumed and rewound. With ``--no-session``, or ``INK_CHECKPOINTS=off``, it keeps none."""
    before = manifest(tree(project))
    args, env = provider_args(fake_server, "openai", *YOLO), ink_env(tmp_path)
    fake_server.script(call("bash", {"command": EDITS}), say("done"))
    printed = subprocess.run(
        [*INK, "-p", *args, "change things"], env=env, cwd=project, capture_output=True, timeout=60
    )
    assert (printed.returncode, printed.stderr) == (0, b"")
    assert manifest(project) != before
    with RpcClient.start([*args, "--continue"], env, project) as again:
        (listed,) = again.ok("list_checkpoints")["checkpoints"]
        assert listed["text"] == "change things" and listed["files"] == [
            "doomed.txt",
            "new/dir/made.txt",
            "notes.txt",
            "tool.sh",
        ]  # the end snapshot was taken before print mode exited
        again.ok("rewind", inputId=listed["inputId"], files=True, conversation=True)
        assert again.wait_event("rewind_end")["ok"] is True
        assert manifest(project) == before
    records = Path(env["INK_HOME"]) / "checkpoints" / "sessions"
    kept = sorted(records.iterdir())
    fake_server.script(say("nothing kept"))
    unsaved = subprocess.run(
        [*INK, "-p", "--no-session", *args, "hello"], env=env, cwd=project, capture_output=True, timeout=60
    )
    assert unsaved.returncode == 0 and sorted(records.iterdir()) == kept
    fake_server.script(say("switched off"))
    off = subprocess.run(
        [*INK, "-p", *args, "hello"], env={**env, "INK_CHECKPOINTS": "off"}, cwd=project, capture_output=True
    )
    assert off.returncode == 0 and sorted(records.iterdir()) == kept  # what ink batch sets for its tasks


def test_an_aborted_runs_files_are_listed_by_the_time_its_run_end_is_out(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path, marks: Path
) -> None:
    """The receipt's files and the checkpoint's are one listing: no wait for the end snapshot (R34)."""
    started = marks / "started"
    fake_server.script(call("bash", {"command": f"echo x > made.txt; touch {started}; sleep 100"}))
    ink = start_rpc(*YOLO)
    ink.ok("prompt", text="slow work")
    poll_until(started.exists, what="the command to start")
    ink.ok("abort")
    end = ink.wait_event("run_end")
    assert end["receipt"]["changedFiles"] == ["made.txt"]
    assert ink.ok("list_checkpoints")["checkpoints"][0]["files"] == ["made.txt"]
