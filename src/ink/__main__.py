"""``python -m ink``: the same command as ``ink``."""

from ink.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
