"""The "always" answers of one project, kept in ``<workspace>/.ink/permissions.toml``.

    # Written by ink: the "always allow" answers for this project. ...
    [permissions]
    allow = [
      "bash(npm test)",
      "edit(./notes.md)",
    ]

The file sits in the project, but it must not be a way for a repository to pre-approve commands on the
machine of whoever clones it (a project's own ``.ink/config.toml`` may not add allow rules for the same
reason). So ink records a SHA-256 of every version it writes in ``$INK_HOME/trusted-permissions.json``
and reads the file only while it still has that digest: a file that came with a checkout, or was changed
by anyone but ink, is ignored with a warning. Writes are atomic (a temporary file renamed over the old
one), for the file and the digest record alike.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from ink.config.errors import ConfigError
from ink.config.rules import RuleText, parse_rule
from ink.regular_file import read_regular
from ink.store.paths import PRIVATE_FILE
from ink.store.trust import TrustRecord, write_atomically

FILE_NAME = "permissions.toml"
TRUST_FILE = "trusted-permissions.json"
MAX_FILE_BYTES = 1 << 20  # thousands of rules
HEADER = """\
# Written by ink: the "always allow" answers for this project. ink reads this file only while it is
# exactly as ink wrote it (its digest is kept in $INK_HOME/trusted-permissions.json), so a copy that came
# with a repository allows nothing. Write rules of your own in [permissions] of $INK_HOME/config.toml.
"""


class PermissionMemory:
    def __init__(self, root: str | os.PathLike[str], ink_home: str | os.PathLike[str]) -> None:
        self.path = Path(os.path.realpath(root)) / ".ink" / FILE_NAME
        self.trust_path = Path(ink_home) / TRUST_FILE
        self.trust = TrustRecord(self.trust_path)

    def load(self) -> tuple[list[RuleText], str | None]:
        """The remembered allow rules, and a warning when a file exists that ink will not use."""
        try:
            data = read_regular(self.path, MAX_FILE_BYTES).data  # a FIFO or a device is never opened
        except FileNotFoundError:
            return [], None
        except OSError as exc:
            return [], f"{self.path}: cannot read the remembered permissions ({exc.strerror or exc})"
        if not self.trust.trusts(str(self.path), data):
            return [], (
                f"{self.path}: ignoring remembered permissions that ink did not write (they came with "
                "the project, or the file was edited); put rules you want in [permissions] allow of "
                "$INK_HOME/config.toml, or delete the file"
            )
        try:
            return _parse(self.path, data), None
        except (ValueError, ConfigError) as exc:
            return [], f"{self.path}: ignoring remembered permissions: {exc}"

    def add(self, rules: Sequence[str]) -> list[RuleText]:
        """Remember ``rules`` (allow rules as text) next to those already in the file; returns them parsed.
        Raises ``OSError`` when the file or the digest record cannot be written."""
        known, _warning = self.load()
        texts = [r.text for r in known]
        texts += [rule for rule in rules if rule not in texts]
        data = render(texts).encode("utf-8")
        parsed = _parse(self.path, data)  # never write what could not be read back
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path, data, mode=PRIVATE_FILE)  # it may quote a command's secrets
        self.trust.trust(str(self.path), data)
        return parsed


def render(rules: Sequence[str]) -> str:
    """The file's text. TOML basic strings take JSON's escapes, except that DEL must be escaped too."""
    items = "".join(f"  {_toml_string(rule)},\n" for rule in rules)
    return f"{HEADER}[permissions]\nallow = [\n{items}]\n"


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _parse(path: Path, data: bytes) -> list[RuleText]:
    """Raises ``ValueError`` (not TOML, wrong shape) or ``ConfigError`` (a malformed rule)."""
    import tomllib

    document = tomllib.loads(data.decode("utf-8"))
    section = document.get("permissions", {})
    allow = section.get("allow", []) if isinstance(section, dict) else None
    if not isinstance(allow, list) or set(section) - {"allow"}:
        raise ValueError("expected only a [permissions] table with an allow list")
    return [parse_rule("allow", text, str(path)) for text in allow]
