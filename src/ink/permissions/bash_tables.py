"""bashlex, imported with its parse tables read from a file instead of computed at every start.

bashlex builds its LALR tables with its copy of ply's ``yacc`` each time it is imported (its shipped
``parsetab`` is never read): ~0.2 s of CPU, more than the rest of a one-turn ``ink -p`` run. The tables
depend only on the grammar, so ink ships them (``bash_tables.json``, written by ``python -m
ink.permissions.bash_tables``) with a digest of the grammar they were computed from. On import, yacc
still reads and checks bashlex's grammar as always; only the table computation is replaced, and only
when the digest matches. Any other grammar (another bashlex) gets its tables computed as before, so a
stale file costs time, never correctness. tests/permissions/test_bash_tables.py checks that the file
equals what yacc computes for the installed bashlex.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

TABLES = Path(__file__).with_name("bash_tables.json")
YACC = "bashlex.yacc"

loaded_from = ""  # "file" or "yacc": where the tables of the imported bashlex came from
seen_grammar = ""  # the digest of the grammar yacc read at that import


def bashlex() -> ModuleType:
    """The ``bashlex`` package, imported on first use with the shipped tables when they fit."""
    if "bashlex" in sys.modules:
        return sys.modules["bashlex"]
    return _import(use_file=True)


def _import(*, use_file: bool) -> ModuleType:
    finder = _PatchYacc(use_file)
    sys.meta_path.insert(0, finder)
    try:
        importlib.import_module("bashlex")
    finally:
        sys.meta_path.remove(finder)
    return sys.modules["bashlex"]


def grammar_digest(grammar: Any) -> str:
    """What the LALR tables are a function of: the productions with their precedence, the terminals and
    the precedence of each terminal."""
    shape = [
        [[p.name, list(p.prod), list(p.prec)] for p in grammar.Productions],
        sorted(grammar.Terminals),
        sorted((term, list(prec)) for term, prec in grammar.Precedence.items()),
    ]
    return hashlib.sha256(json.dumps(shape).encode()).hexdigest()


def tables_of(parser: Any) -> dict[str, Any]:
    """A built yacc parser's tables in the file's form (JSON: states are list positions)."""
    states = range(len(parser.action))
    return {
        "action": [dict(parser.action[s]) for s in states],
        "goto": [dict(parser.goto[s]) for s in states],
    }


class _Tables:
    """Stands in for yacc's ``LRTable``: what ``yacc.yacc`` and ``LRParser`` read of one."""

    def __init__(self, productions: list[Any], action: dict[int, Any], goto: dict[int, Any]) -> None:
        self.lr_productions = productions
        self.lr_action = action
        self.lr_goto = goto
        self.sr_conflicts: list[Any] = []
        self.rr_conflicts: list[Any] = []

    def bind_callables(self, pdict: dict[str, Any]) -> None:
        for production in self.lr_productions:
            production.bind(pdict)


def _table_maker(computed: Any, *, use_file: bool) -> Any:
    """yacc's ``LRTable`` replaced: the shipped tables when the grammar is theirs, else ``computed``."""

    def tables(grammar: Any, log: Any = None) -> Any:
        global loaded_from, seen_grammar
        seen_grammar = grammar_digest(grammar)
        shipped = _read_tables() if use_file else None
        if shipped is not None and shipped.get("grammar") == seen_grammar:
            loaded_from = "file"
            action, goto = dict(enumerate(shipped["action"])), dict(enumerate(shipped["goto"]))
            return _Tables(grammar.Productions, action, goto)
        loaded_from = "yacc"
        return computed(grammar, log)

    return tables


def _read_tables() -> dict[str, Any] | None:
    try:
        data = json.loads(TABLES.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class _PatchYacc(importlib.abc.MetaPathFinder):
    """Finds ``bashlex.yacc`` as the normal path finder does; once its code has run (before
    ``bashlex.parser`` calls ``yacc.yacc``), its ``LRTable`` is replaced by ``_table_maker``."""

    def __init__(self, use_file: bool) -> None:
        self.use_file = use_file

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != YACC:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader, self.use_file)
        return spec


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, inner: Any, use_file: bool) -> None:
        self.inner, self.use_file = inner, use_file

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self.inner.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        yacc: Any = module
        yacc.LRTable = _table_maker(yacc.LRTable, use_file=self.use_file)


def computed_tables() -> str:
    """The file's content as yacc computes it for the installed bashlex. Call it in an interpreter that
    has not imported bashlex yet (``python -m ink.permissions.bash_tables``)."""
    if "bashlex" in sys.modules:
        raise RuntimeError("bashlex is already imported: its grammar cannot be seen any more")
    parser = _import(use_file=False).parser.yaccparser
    tables = tables_of(parser)
    rows = ["{", f'"grammar": {json.dumps(seen_grammar)},']
    for name in ("action", "goto"):
        states = ",\n".join(json.dumps(row, sort_keys=True, separators=(",", ":")) for row in tables[name])
        rows.append(f'"{name}": [\n{states}\n]' + ("," if name == "action" else ""))
    return "\n".join([*rows, "}"]) + "\n"


if __name__ == "__main__":  # --check: exit 1 when the shipped file is not what yacc computes
    text = computed_tables()
    if sys.argv[1:] == ["--check"]:
        raise SystemExit(0 if TABLES.read_text(encoding="utf-8") == text else 1)
    TABLES.write_text(text, encoding="utf-8")
    print(f"wrote {TABLES}")
