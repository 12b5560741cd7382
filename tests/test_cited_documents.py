"""Every document the README, docs/ and the code cite is in the repository (issue 12: the README linked
a CONTRACT.md that was not)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CITED = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.md)\b")
ISSUE = re.compile(r"\bissues? #?\d+", re.IGNORECASE)


def _citing_files() -> list[Path]:
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "src").rglob("*.py")]
    return [f for f in files if f.is_file()]


def _exists(name: str, near: Path) -> bool:
    if (ROOT / name).is_file() or (near.parent / name).is_file():
        return True
    return any(p.is_file() for p in (ROOT / "docs").rglob(Path(name).name))


PROJECT_FILES = frozenset({"AGENTS.md", "CLAUDE.md"})  # files of a user's project, named, never cited


def _cites(path: Path, name: str) -> bool:
    """In code, a ``.md`` name may be a file ink reads in a user's project (AGENTS.md): only the design
    pages and paths under docs/ are citations there. In the docs, the files of a user's project that
    ink reads or writes (``PROJECT_FILES``) are named, not cited."""
    if path.suffix != ".py":
        return name not in PROJECT_FILES
    return name.startswith("docs/") or Path(name).stem in ("CONTRACT", "SEMANTICS", "STYLE")


def test_every_cited_markdown_document_exists() -> None:
    missing = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in _citing_files()
        for name in CITED.findall(path.read_text(encoding="utf-8"))
        if _cites(path, name) and not _exists(name, path)
    ]
    assert not missing, "cited but not in the repository:\n" + "\n".join(missing)


def test_nothing_cites_an_issue_text() -> None:
    """Issue texts live in the tracker, not in the repository: a reader of the code or the docs cannot
    follow "(issue 12)". What a document must say is said in docs/."""
    citing = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _citing_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ISSUE.search(line)
    ]
    assert not citing, "cites an issue:\n" + "\n".join(citing)
