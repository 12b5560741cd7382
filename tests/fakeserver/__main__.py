"""Run the fake server standalone: ``python -m tests.fakeserver --port 0 --script-file x.json``.

Prints ``http://127.0.0.1:PORT`` on the first line of stdout, then serves until SIGINT/SIGTERM or the end
of stdin. ``--loop`` replays the script forever (benches running many turns).
"""

from __future__ import annotations

import argparse
import itertools
import json
import signal
import sys
import threading

from tests.fakeserver.jsonscript import script_from_json
from tests.fakeserver.server import FakeModelServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fakeserver")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script-file", help="JSON list of replies (see tests/fakeserver/jsonscript.py)")
    parser.add_argument("--loop", action="store_true", help="replay the script forever")
    parser.add_argument("--no-strict", action="store_true", help="accept histories the real APIs reject")
    parser.add_argument("--api-key", help="require this key (Bearer / x-api-key)")
    args = parser.parse_args(argv)
    replies = []
    if args.script_file:
        with open(args.script_file, encoding="utf-8") as f:
            replies = script_from_json(json.load(f))
    server = FakeModelServer(strict=not args.no_strict, api_key=args.api_key, port=args.port)
    if args.loop and replies:
        cycle = itertools.cycle(replies)
        server.responder = lambda _request: next(cycle)
    else:
        server.script(*replies)
    server.start()
    print(server.url, flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())

    def wait_stdin_closed() -> None:
        sys.stdin.read()
        done.set()

    threading.Thread(target=wait_stdin_closed, daemon=True).start()
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
