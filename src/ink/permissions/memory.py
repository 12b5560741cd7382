"""The "always" answers of one project, kept in the user's own ink home, never in the project:
``$INK_HOME/projects/<project>-<hash>/permissions.toml`` (the folder named as session folders are).

    # The "always allow" answers for the project /home/me/app, written by ink. ...
    [permissions]
    allow = [
      "bash(npm test *)",
      "edit(./notes.md)",
    ]

Kept out of the project, the file is no untracked file in the user's repository, and a repository
cannot ship one that pre-approves commands on the machine of whoever clones it. So it needs no digest
to be trusted: it is the user's, to read and edit like their config (a rule they delete is gone, a rule
they add counts). A file ink cannot read back (a hand edit gone wrong) allows nothing and is never
written over: an "always" answer then holds for the session only, and the warning says why.

Earlier versions kept the answers in ``<workspace>/.ink/permissions.toml``, trusted by a digest in
``$INK_HOME/trusted-permissions.json``; such a file, still exactly as ink wrote it, is carried over once.
Writes are atomic (a temporary file renamed over the old one) and serialised between ink processes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ink.config.errors import ConfigError
from ink.config.rules import RuleText, parse_rule
from ink.regular_file import read_regular
from ink.store.paths import PRIVATE_FILE, cwd_folder, make_private_dirs
from ink.store.trust import TrustRecord, write_atomically

FILE_NAME = "permissions.toml"
PROJECTS = "projects"
LEGACY_TRUST_FILE = "trusted-permissions.json"
MAX_FILE_BYTES = 1 << 20  # thousands of rules
HEADER = """\
# The "always allow" answers for the project {root}, written by ink.
# Yours to edit: delete a rule to be asked again, or add one (the syntax of [permissions] allow in
# $INK_HOME/config.toml, docs/permissions.md). ink rewrites this file when it adds a rule (comments go).
"""


class UnreadableMemory(OSError):
    """The file exists but is not one ink can read back: it is not written over."""


class PermissionMemory:
    def __init__(self, root: str | os.PathLike[str], ink_home: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.realpath(root))
        self.path = cwd_folder(Path(ink_home) / PROJECTS, self.root) / FILE_NAME
        self._legacy = self.root / ".ink" / FILE_NAME
        self._legacy_trust = TrustRecord(Path(ink_home) / LEGACY_TRUST_FILE)

    def load(self) -> tuple[list[RuleText], str | None]:
        """The remembered allow rules, and a warning when a file exists that ink will not use."""
        try:
            data = read_regular(self.path, MAX_FILE_BYTES).data  # a FIFO or a device is never opened
        except FileNotFoundError:
            return self._carry_over()
        except OSError as exc:
            return [], f"{self.path}: cannot read the remembered permissions ({exc.strerror or exc})"
        try:
            return _parse(self.path, data), None
        except (ValueError, ConfigError) as exc:
            return [], f"{self.path}: ignoring the remembered permissions until it is fixed: {exc}"

    def add(self, rules: Sequence[str]) -> list[RuleText]:
        """Remember ``rules`` (allow rules as text) after those already in the file; returns them parsed.
        Raises ``OSError`` when the file cannot be written, ``UnreadableMemory`` when it exists and
        cannot be read back (it is left as it is)."""
        with _locked(self.path.parent):
            texts = [r.text for r in self._current()]
            texts += [rule for rule in rules if rule not in texts]
            data = render(self.root, texts).encode("utf-8")
            parsed = _parse(self.path, data)  # never write what could not be read back
            write_atomically(self.path, data, mode=PRIVATE_FILE)  # it may quote a command's secrets
        return parsed

    def remove(self, rule: str) -> bool:
        """Forget a remembered rule (as written); False when the file does not hold it. Raises as
        ``add`` does."""
        with _locked(self.path.parent):
            texts = [r.text for r in self._current()]
            if rule not in texts:
                return False
            data = render(self.root, [t for t in texts if t != rule]).encode("utf-8")
            _parse(self.path, data)
            write_atomically(self.path, data, mode=PRIVATE_FILE)
        return True

    def _current(self) -> list[RuleText]:
        try:
            data = read_regular(self.path, MAX_FILE_BYTES).data  # a FIFO or a device is never opened
        except FileNotFoundError:
            return []
        try:
            return _parse(self.path, data)
        except (ValueError, ConfigError) as exc:
            raise UnreadableMemory(f"{self.path} cannot be read back ({exc}); fix or delete it") from exc

    def _carry_over(self) -> tuple[list[RuleText], str | None]:
        """The answers an earlier version kept in the project, when ink wrote them exactly so."""
        try:
            data = read_regular(self._legacy, MAX_FILE_BYTES).data
        except OSError:
            return [], None
        if not self._legacy_trust.trusts(str(self._legacy), data):
            return [], (
                f"{self._legacy}: not read (it came with the project, or was edited); ink keeps the "
                f"remembered permissions in {self.path}"
            )
        try:
            rules = _parse(self._legacy, data)
            self.add([r.text for r in rules])
        except (ValueError, ConfigError, OSError) as exc:
            return [], f"{self._legacy}: could not carry the remembered permissions over ({exc})"
        return rules, f"the remembered permissions moved to {self.path}; {self._legacy} can be deleted"


def render(root: Path, rules: Sequence[str]) -> str:
    """The file's text. TOML basic strings take JSON's escapes, except that DEL must be escaped too."""
    items = "".join(f"  {_toml_string(rule)},\n" for rule in rules)
    header = HEADER.format(root=json.dumps(str(root), ensure_ascii=False)[1:-1].replace("\n", " "))
    return f"{header}[permissions]\nallow = [\n{items}]\n"


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _parse(path: Path, data: bytes) -> list[RuleText]:
    """Raises ``ValueError`` (not TOML, not UTF-8, wrong shape) or ``ConfigError`` (a malformed rule)."""
    import tomllib

    try:
        document = tomllib.loads(data.decode("utf-8"))
    except RecursionError:  # a file of 100,000 "[" made ink die at start-up
        raise ValueError("arrays or tables nest too deeply to be read") from None
    section = document.get("permissions", {})
    allow = section.get("allow", []) if isinstance(section, dict) else None
    if not isinstance(allow, list) or set(document) - {"permissions"} or set(section) - {"allow"}:
        raise ValueError("expected only a [permissions] table with an allow list")
    if not all(isinstance(text, str) for text in allow):
        raise ValueError("every rule in allow must be a string")
    return [parse_rule("allow", text, str(path)) for text in allow]


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One writer at a time among ink processes (a lock file next to the answers)."""
    import fcntl

    make_private_dirs(folder)
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
