"""``ink batch``: many headless runs at once, on this machine or on a Ray cluster.

Each task of a TASKS.jsonl file runs in a fresh workspace (a copy or checkout of its repository, never
the original) as its own ``ink -p --output-format stream-json`` process, in its own process group, so
every run keeps the run-control guarantees of a single one: a time limit or Ctrl+C interrupts it like a
user would (R17-R19, its receipt recorded), and every process it started is ended (R35).

    tasks.py      the task file: parsing and per-task overrides
    copying.py    a local repository's copy: regular files, folders and symlinks, in a budget, stoppable
    workspace.py  copying or checking out a repository; the diff (git's bytes), from a shadow git store
    execute.py    one task from workspace to verdict (used unchanged by both backends)
    results.py    results.jsonl (which line counts), sessions/ and diffs/, --resume, the summary table
    local.py      ``--jobs N`` on this machine
    ray_backend.py ``--ray auto|ADDRESS`` (Ray is imported only here)
    progress.py   the live progress line
    cli.py        the ``ink batch`` command line

docs/batch.md has a worked example.
"""
