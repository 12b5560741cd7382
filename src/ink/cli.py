"""Command line entry point (placeholder until the CLI lands)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["--version"], ["-V"]):
        from ink import __version__

        print(f"ink {__version__}")
        return 0
    print("ink: not implemented yet", file=sys.stderr)
    return 2
