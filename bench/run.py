"""Benchmarks, one command each: ``.venv/bin/python bench/run.py startup [-n RUNS] [--protocol P]``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root: tests.fakeserver

BENCHES = {
    "startup": "bench.startup_and_turn",
    "sessions": "bench.sessions",
    "run-control": "bench.run_control",
    "tools": "bench.tool_concurrency",
    "rpc": "bench.rpc_throughput",
    "tui": "bench.tui_stream",
    "batch": "bench.batch",
    "checkpoints": "bench.checkpoints",
    "tui-keys": "bench.tui_keys",
    "local": "bench.local_model",
    "sandbox": "bench.sandbox",
}


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in BENCHES:
        print(f"usage: bench/run.py {{{','.join(BENCHES)}}} [options]", file=sys.stderr)
        return 2
    import importlib

    module = importlib.import_module(BENCHES[sys.argv[1]])
    return int(module.main(sys.argv[2:]))


if __name__ == "__main__":
    raise SystemExit(main())
