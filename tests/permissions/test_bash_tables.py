"""bashlex's parse tables come from the file ink ships, and that file is what yacc computes, so the
shell analysis reads commands exactly as it would without it. Each case runs in a fresh interpreter:
the tables are chosen once, when bashlex is first imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ink.permissions import bash_tables


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_shipped_tables_are_what_yacc_computes_for_the_installed_bashlex() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ink.permissions.bash_tables", "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (
        "bash_tables.json is stale: run python -m ink.permissions.bash_tables " + done.stderr
    )


def test_the_analysis_reads_the_shipped_tables() -> None:
    out = run_python(
        "from ink.permissions.shell import analyse\n"
        "from ink.permissions import bash_tables\n"
        "shape = analyse('git status && rm -rf x | tee $(pwd)/log')\n"
        "print(bash_tables.loaded_from, [c.text for c in shape.commands])\n"
    )
    assert out.split(" ", 1) == ["file", "['git status', 'rm -rf x', 'tee $(pwd)/log']\n"]


def test_tables_of_another_grammar_are_not_used(tmp_path: Path) -> None:
    stale = json.loads(bash_tables.TABLES.read_text(encoding="utf-8"))
    stale["grammar"] = "0" * 64  # the digest of some other bashlex's grammar
    stale["action"][0] = {}  # and a table that would break every parse
    (tmp_path / "stale.json").write_text(json.dumps(stale))
    out = run_python(
        "from pathlib import Path\n"
        "from ink.permissions import bash_tables\n"
        f"bash_tables.TABLES = Path({str(tmp_path / 'stale.json')!r})\n"
        "from ink.permissions.shell import analyse\n"
        "texts = [c.text for c in analyse('a && b').commands]\n"
        "print(bash_tables.loaded_from, texts)\n"
    )
    assert out == "yacc ['a', 'b']\n"


def test_an_unreadable_file_leaves_yacc_to_compute_the_tables(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json")
    out = run_python(
        "from pathlib import Path\n"
        "from ink.permissions import bash_tables\n"
        f"bash_tables.TABLES = Path({str(tmp_path / 'broken.json')!r})\n"
        "from ink.permissions.shell import analyse\n"
        "texts = [c.text for c in analyse('a; b').commands]\n"
        "print(bash_tables.loaded_from, texts)\n"
    )
    assert out == "yacc ['a', 'b']\n"
