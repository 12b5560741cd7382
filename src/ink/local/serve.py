"""The child process that serves one GGUF model over llama.cpp's OpenAI-compatible HTTP server.

    python -m ink.local.serve MODEL.gguf [--template FILE] [--ctx N]

It binds 127.0.0.1 on a port the system picks, prints ``listening <url>`` as its one line on stdout once
the model is loaded, and serves until its stdin ends: the parent closes it to stop the server, and a
parent that dies (even by SIGKILL) closes it too, so the server never outlives ink (R35). llama.cpp's own
log goes to stderr, which the parent sends to a log file.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ink.local.serve")
    parser.add_argument("model")
    parser.add_argument("--template", help="a Jinja chat template file replacing the model's own")
    parser.add_argument("--ctx", type=int, default=0, help="context window (0: the model's)")
    parser.add_argument("--temp", type=float, help="default sampling temperature of requests")
    args = parser.parse_args(argv)
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.use_jinja = True  # the model's Jinja template: the one that knows its tool-call format
    params.n_ctx = args.ctx
    if args.temp is not None:
        params.sampling.temp = args.temp
    if args.template:
        with open(args.template, encoding="utf-8") as file:
            params.chat_template = file.read()
    server = xllamacpp.Server(params)
    print(f"listening {server.listening_address}", flush=True)
    while sys.stdin.buffer.read(65536):  # anything written is ignored; the end of stdin is the stop
        pass
    os._exit(0)  # no interpreter teardown racing llama.cpp's own threads


if __name__ == "__main__":
    sys.exit(main())
