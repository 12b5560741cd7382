"""Run one command and print its own wall time, CPU and peak RSS as JSON (stdlib only, run with -S -I).

Why a separate launcher: on Linux a child's ``ru_maxrss`` includes the memory image it was forked from,
so a command started straight from the (large) bench process would report the bench's size. Started
from this small launcher, a command's peak RSS is its own (at least this launcher's ~8 MB).

    python -S -I bench/measure_child.py STDOUT_FILE STDERR_FILE -- ARGV...
"""

import json
import os
import sys
import time


def main() -> int:
    out_path, err_path, sep, *argv = sys.argv[1:]
    assert sep == "--" and argv
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        started = time.perf_counter()
        pid = os.posix_spawn(
            argv[0],
            argv,
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                (os.POSIX_SPAWN_DUP2, err.fileno(), 2),
            ],
        )
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - started
    print(
        json.dumps(
            {
                "status": os.waitstatus_to_exitcode(status),
                "wall": wall,
                "cpu": usage.ru_utime + usage.ru_stime,
                "rss_kb": usage.ru_maxrss,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
