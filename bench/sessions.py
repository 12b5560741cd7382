"""Session store speed: loading a long session, and appending as the file grows (issue 6).

    .venv/bin/python bench/sessions.py [--runs N]      (or: bench/run.py sessions)

Measures, on real files in a temporary directory:
  - loading (replay + repair) a 10,000-message session of realistic turns (prompt, reply with a tool
    call, a 2 kB tool output, an answer): target <= 0.5 s;
  - resuming it (load + attaching a writer), and listing a folder that holds it;
  - the time of one append (one history message written through the writer) on a file of 1,000 entries
    and on one of 100,000: O(1) means the two are about equal (target: ratio <= 2);
  - one fsync (what every run end costs).
Results go to bench/results/sessions.md and stdout.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ink.ai.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)
from ink.store import SessionStore, load_session

RESULTS = Path(__file__).resolve().parent / "results" / "sessions.md"
LOAD_TARGET = 0.5
APPEND_RATIO_TARGET = 2.0


def turn(n: int) -> list[Message]:
    call = ToolCall(f"call-{n}", "read", {"path": f"src/module_{n}.py"})
    source = (f"def function_{n}(x):\n    return x * {n}\n" * 60)[:2_000]
    return [
        UserMessage(f"Please look at module {n} and fix the failing test. " * 4, input_id=f"in-{n}"),
        AssistantMessage(
            (TextBlock("Let me read it."), call), "tool_use", "gpt-4.1", "openai", Usage(900, 40)
        ),
        ToolResult(call.id, "read", source, duration_ms=4),
        AssistantMessage((TextBlock("Fixed: the factor was wrong. " * 15),), "stop", "gpt-4.1", "openai"),
    ]


def build(sessions: SessionStore, cwd: Path, messages: int) -> Path:
    handle = sessions.create(cwd, "gpt-4.1", "openai")
    n = 0
    while len(handle.history) < messages:
        for message in turn(n):
            handle.history.append(message)
        n += 1
    handle.close()
    return handle.path


def best_and_median(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times), statistics.median(times)


def append_cost(sessions: SessionStore, cwd: Path, entries: int, appends: int) -> tuple[float, float]:
    """Median seconds per append once the file holds ``entries`` entries, and one fsync after them."""
    handle = sessions.create(cwd, "gpt-4.1", "openai")
    for i in range(entries):
        handle.history.append(UserMessage(f"filler message number {i}", timestamp=1.0))
    times = []
    for i in range(appends):
        message = UserMessage(f"measured append {i}", timestamp=2.0)
        started = time.perf_counter()
        handle.history.append(message)
        times.append(time.perf_counter() - started)
    started = time.perf_counter()
    handle.sync()
    sync = time.perf_counter() - started
    handle.close()
    return statistics.median(times), sync


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sessions = SessionStore(root / "sessions")
        cwd = root / "project"
        cwd.mkdir()
        started = time.perf_counter()
        path = build(sessions, cwd, 10_000)
        write_all = time.perf_counter() - started
        loaded = load_session(path)
        assert len(loaded.messages) == 10_000 and not loaded.repair
        load_best, load_median = best_and_median(lambda: load_session(path), args.runs)
        _, resume_median = best_and_median(lambda: sessions.resume(path).close(), args.runs)
        _, list_median = best_and_median(lambda: sessions.sessions(cwd), args.runs)
        small, _ = append_cost(SessionStore(root / "a"), cwd, 1_000, 2_000)
        large, sync = append_cost(SessionStore(root / "b"), cwd, 100_000, 2_000)
        rows = [
            ("write a 10,000-message session (10,000 appends)", f"{write_all:.3f} s", "", ""),
            ("file size of that session", f"{path.stat().st_size / 1e6:.1f} MB", "", ""),
            (
                "load it (replay + repair), median",
                f"{load_median:.3f} s",
                f"<= {LOAD_TARGET} s",
                _ok(load_median <= LOAD_TARGET),
            ),
            ("load it, best", f"{load_best:.3f} s", "", ""),
            ("resume it (load + attach a writer), median", f"{resume_median:.3f} s", "", ""),
            ("list the folder holding it, median", f"{list_median * 1000:.1f} ms", "", ""),
            ("one append at 1,000 entries, median", f"{small * 1e6:.1f} µs", "", ""),
            (
                "one append at 100,000 entries, median",
                f"{large * 1e6:.1f} µs",
                f"<= {APPEND_RATIO_TARGET:.0f}x the 1,000 case",
                _ok(large <= APPEND_RATIO_TARGET * small),
            ),
            ("append cost ratio 100k / 1k", f"{large / small:.2f}", "", ""),
            ("fsync at run end (100,000-entry file)", f"{sync * 1000:.2f} ms", "", ""),
        ]
    report = render(rows, args.runs)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(report)
    print(report)
    return 0 if all(r[3] != "NO" for r in rows) else 1


def _ok(passed: bool) -> str:
    return "yes" if passed else "NO"


def render(rows: list[tuple[str, str, str, str]], runs: int) -> str:
    lines = [
        "# Session store benchmark",
        "",
        f"`bench/sessions.py --runs {runs}` on {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"{time.strftime('%Y-%m-%d')}.",
        "",
        "| measure | value | target | met |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    lines += [
        "",
        "Appends go through `History.append` -> `SessionWriter`: one `os.write` on an `O_APPEND` descriptor,",
        "no fsync. Loading parses every line and rebuilds the messages. Timings include Python's overhead.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
